//! The JWT authorizer and roles over the router: RS256 tokens signed by keys `openssl`
//! generates at test time, checked against a JWKS given as JSON or served on loopback.

use crate::support;

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use crawl_api::{router, Authorizer, JwksSource, JwtAuthorizer, Role, RoleLookup, StaticRoles};
use jsonwebtoken::jwk::{Jwk, JwkSet, KeyAlgorithm};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{json, Value};
use support::{memory_state, ROOT};
use tower::ServiceExt;

const ISS: &str = "https://cognito-idp.us-west-2.amazonaws.com/us-west-2_TEST";
const CLIENT: &str = "app-client-1";

/// A fresh 2048-bit RSA key as PKCS#1 DER, from the `openssl` command line.
fn rsa_der() -> Vec<u8> {
    let pem = Command::new("openssl")
        .args(["genrsa", "2048"])
        .output()
        .expect("openssl genrsa (the openssl command is needed for the JWT tests)");
    assert!(pem.status.success(), "openssl genrsa failed");
    let mut child = Command::new("openssl")
        .args(["rsa", "-outform", "DER", "-traditional"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(&pem.stdout).unwrap();
    let der = child.wait_with_output().unwrap();
    assert!(der.status.success(), "openssl rsa -outform DER failed");
    der.stdout
}

struct Key {
    kid: String,
    enc: EncodingKey,
}

impl Key {
    fn new(kid: &str) -> Self {
        Key {
            kid: kid.to_owned(),
            enc: EncodingKey::from_rsa_der(&rsa_der()),
        }
    }

    fn jwk(&self) -> Jwk {
        let mut jwk = Jwk::from_encoding_key(&self.enc, Algorithm::RS256).unwrap();
        jwk.common.key_id = Some(self.kid.clone());
        jwk.common.key_algorithm = Some(KeyAlgorithm::RS256);
        jwk
    }

    fn sign(&self, claims: &Value) -> String {
        let mut h = Header::new(Algorithm::RS256);
        h.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&h, claims, &self.enc).unwrap()
    }
}

fn jwks_json(keys: &[&Key]) -> String {
    serde_json::to_string(&JwkSet {
        keys: keys.iter().map(|k| k.jwk()).collect(),
    })
    .unwrap()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// An ID token's claims (`aud` = the app client).
fn claims(sub: &str) -> Value {
    json!({"sub": sub, "iss": ISS, "aud": CLIENT, "exp": now() + 600, "token_use": "id"})
}

fn b64url(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

fn roles() -> Arc<StaticRoles> {
    Arc::new(
        StaticRoles::new()
            .grant("alice", "calm", Role::Owner)
            .grant("erin", "calm", Role::Editor)
            .grant("vic", "calm", Role::Viewer),
    )
}

fn authorizer(jwks: JwksSource) -> JwtAuthorizer {
    JwtAuthorizer::builder()
        .jwks(jwks)
        .issuer(ISS)
        .audience(CLIENT)
        .roles(roles())
        .build()
        .unwrap()
}

fn bearer(token: &str) -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("authorization", format!("Bearer {token}").parse().unwrap());
    h
}

async fn status_of(a: &JwtAuthorizer, token: &str) -> StatusCode {
    match a.role(&bearer(token), "calm").await {
        Ok(_) => StatusCode::OK,
        Err(e) => e.status(),
    }
}

#[tokio::test]
async fn a_valid_token_gives_the_callers_role_and_every_bad_one_gets_401() {
    let key = Key::new("k1");
    let a = authorizer(JwksSource::from_json(&jwks_json(&[&key])).unwrap());

    for (sub, role) in [
        ("alice", Role::Owner),
        ("erin", Role::Editor),
        ("vic", Role::Viewer),
    ] {
        let got = a.role(&bearer(&key.sign(&claims(sub))), "calm").await;
        assert_eq!(got.unwrap(), role, "{sub}");
    }
    // A Cognito access token: no `aud`, the app client in `client_id`.
    let access = json!({"sub": "vic", "iss": ISS, "client_id": CLIENT, "exp": now() + 600, "token_use": "access"});
    assert_eq!(
        a.role(&bearer(&key.sign(&access)), "calm").await.unwrap(),
        Role::Viewer
    );

    let mut expired = claims("alice");
    expired["exp"] = json!(now() - 3600);
    let mut wrong_iss = claims("alice");
    wrong_iss["iss"] = json!("https://cognito-idp.us-west-2.amazonaws.com/us-west-2_OTHER");
    let mut wrong_aud = claims("alice");
    wrong_aud["aud"] = json!("another-client");
    let mut no_exp = claims("alice");
    no_exp.as_object_mut().unwrap().remove("exp");
    let other = Key::new("k1");
    let unknown_kid = Key {
        kid: "k9".to_owned(),
        enc: other.enc.clone(),
    };
    let good = key.sign(&claims("alice"));
    let (head, rest) = good.split_once('.').unwrap();
    let payload = rest.split_once('.').unwrap().0;
    let alg_none = format!(
        "{}.{payload}.",
        b64url(br#"{"alg":"none","typ":"JWT","kid":"k1"}"#)
    );
    // HS256 "signed" with the public key the JWKS publishes (the key-confusion attack).
    let mut hs = Header::new(Algorithm::HS256);
    hs.kid = Some("k1".to_owned());
    let public = serde_json::to_vec(&key.jwk()).unwrap();
    let hs256 = jsonwebtoken::encode(
        &hs,
        &claims("alice"),
        &EncodingKey::from_secret(&public).unwrap(),
    )
    .unwrap();
    // Vic's signed token with Alice's claims put in.
    let vic_token = key.sign(&claims("vic"));
    let tampered = format!("{head}.{payload}.{}", vic_token.rsplit_once('.').unwrap().1);
    assert_ne!(tampered, good);

    let cases = [
        ("expired", key.sign(&expired)),
        ("wrong issuer", key.sign(&wrong_iss)),
        ("wrong audience", key.sign(&wrong_aud)),
        ("no exp", key.sign(&no_exp)),
        ("wrong key, same kid", other.sign(&claims("alice"))),
        ("unknown kid", unknown_kid.sign(&claims("alice"))),
        ("alg none", alg_none),
        ("HS256 with the public key", hs256),
        ("claims changed after signing", tampered),
        ("not a JWT", "abc.def".to_owned()),
    ];
    for (what, token) in cases {
        assert_eq!(
            status_of(&a, &token).await,
            StatusCode::UNAUTHORIZED,
            "{what}"
        );
    }
    let e = a.role(&HeaderMap::new(), "calm").await.unwrap_err();
    assert_eq!(e.status(), StatusCode::UNAUTHORIZED, "no header");
    assert!(e.message().contains("Bearer"), "{}", e.message());

    // Valid token, no role for this assistant: 403.
    assert_eq!(
        a.role(&bearer(&key.sign(&claims("mallory"))), "calm")
            .await
            .unwrap_err()
            .status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        a.role(&bearer(&key.sign(&claims("alice"))), "other")
            .await
            .unwrap_err()
            .status(),
        StatusCode::FORBIDDEN
    );
    // `authorize` (full rights) refuses a viewer and passes an editor.
    let vic = bearer(&key.sign(&claims("vic")));
    assert_eq!(
        a.authorize(&vic, "calm").await.unwrap_err().status(),
        StatusCode::FORBIDDEN
    );
    a.authorize(&bearer(&key.sign(&claims("erin"))), "calm")
        .await
        .unwrap();
}

#[test]
fn the_builder_names_what_is_missing() {
    let e = JwtAuthorizer::builder()
        .issuer(ISS)
        .roles(roles())
        .audience(CLIENT)
        .build()
        .unwrap_err();
    assert!(e.message().starts_with("jwks:"), "{e}");
    let jwks = JwksSource::from_json(r#"{"keys":[]}"#);
    assert!(jwks.unwrap_err().starts_with("jwks:"));
    let e = JwtAuthorizer::builder()
        .jwks(JwksSource::url("http://127.0.0.1:1/jwks.json", Duration::from_secs(60)).unwrap())
        .issuer(ISS)
        .roles(roles())
        .build()
        .unwrap_err();
    assert!(e.message().starts_with("audience:"), "{e}");
    assert!(JwksSource::url("file:///etc/passwd", Duration::ZERO)
        .unwrap_err()
        .starts_with("jwksUrl:"));
}

async fn call(app: &Router, method: &str, uri: &str, token: &str) -> (StatusCode, Value) {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header("authorization", format!("Bearer {token}"));
    let req = if method == "POST" {
        req.header("content-type", "application/json")
            .body(Body::from(json!({"url": ROOT}).to_string()))
    } else {
        req.body(Body::empty())
    }
    .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    let v = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, v)
}

#[tokio::test]
async fn a_viewer_lists_and_reads_but_may_not_start_or_delete() {
    let key = Key::new("k1");
    let a = authorizer(JwksSource::from_json(&jwks_json(&[&key])).unwrap());
    let (state, _, _) = memory_state(Duration::ZERO);
    let app = router(state.authorizer(Arc::new(a)));
    let viewer = key.sign(&claims("vic"));
    let editor = key.sign(&claims("erin"));

    let (status, v) = call(&app, "POST", "/assistants/calm/crawl", &viewer).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("viewer"),
        "{v}"
    );
    let (status, v) = call(&app, "GET", "/assistants/calm/crawls", &viewer).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["crawls"], json!([]));

    let (status, v) = call(&app, "POST", "/assistants/calm/crawl", &editor).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{v}");
    let id = v["crawlJobId"].as_str().unwrap().to_owned();
    let one = format!("/assistants/calm/crawl/{id}");
    let (status, v) = call(&app, "GET", &one, &viewer).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let (status, _) = call(&app, "DELETE", &one, &viewer).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, v) = call(&app, "GET", "/assistants/calm/crawls", &viewer).await;
    assert_eq!(
        v["crawls"].as_array().map(Vec::len),
        Some(1),
        "{status} {v}"
    );

    let mut expired = claims("alice");
    expired["exp"] = json!(now() - 3600);
    let (status, _) = call(&app, "GET", "/assistants/calm/crawls", &key.sign(&expired)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = call(&app, "GET", "/assistants/other/crawls", &editor).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

/// Serves a JWKS that the test can replace, counting the fetches.
async fn jwks_server(doc: Arc<Mutex<String>>, hits: Arc<AtomicUsize>) -> String {
    let app = Router::new().route(
        "/.well-known/jwks.json",
        axum::routing::get(move || {
            let doc = Arc::clone(&doc);
            let hits = Arc::clone(&hits);
            async move {
                hits.fetch_add(1, Ordering::SeqCst);
                let body = doc.lock().unwrap().clone();
                ([("content-type", "application/json")], body)
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/.well-known/jwks.json")
}

#[tokio::test]
async fn a_jwks_url_is_fetched_once_then_again_for_a_rotated_key() {
    let k1 = Key::new("k1");
    let k2 = Key::new("k2");
    let doc = Arc::new(Mutex::new(jwks_json(&[&k1])));
    let hits = Arc::new(AtomicUsize::new(0));
    let url = jwks_server(Arc::clone(&doc), Arc::clone(&hits)).await;
    let source = JwksSource::url(&url, Duration::from_secs(3600))
        .unwrap()
        .min_refetch(Duration::ZERO);
    let a = authorizer(source);

    for _ in 0..3 {
        assert_eq!(
            status_of(&a, &k1.sign(&claims("alice"))).await,
            StatusCode::OK
        );
    }
    assert_eq!(hits.load(Ordering::SeqCst), 1, "the keys are cached");

    // The issuer rotates to k2: the unknown kid triggers one refetch.
    *doc.lock().unwrap() = jwks_json(&[&k1, &k2]);
    assert_eq!(
        status_of(&a, &k2.sign(&claims("alice"))).await,
        StatusCode::OK
    );
    assert_eq!(hits.load(Ordering::SeqCst), 2);
    assert_eq!(
        status_of(&a, &k2.sign(&claims("alice"))).await,
        StatusCode::OK
    );
    assert_eq!(hits.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn unknown_key_ids_refetch_at_most_once_per_min_refetch() {
    let k1 = Key::new("k1");
    let doc = Arc::new(Mutex::new(jwks_json(&[&k1])));
    let hits = Arc::new(AtomicUsize::new(0));
    let url = jwks_server(Arc::clone(&doc), Arc::clone(&hits)).await;
    let a = authorizer(JwksSource::url(&url, Duration::from_secs(3600)).unwrap());
    assert_eq!(
        status_of(&a, &k1.sign(&claims("alice"))).await,
        StatusCode::OK
    );
    let forged = Key {
        kid: "made-up".to_owned(),
        enc: k1.enc.clone(),
    };
    for _ in 0..5 {
        assert_eq!(
            status_of(&a, &forged.sign(&claims("alice"))).await,
            StatusCode::UNAUTHORIZED
        );
    }
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "made-up kids do not hammer the issuer"
    );
}

#[tokio::test]
async fn an_unreachable_jwks_is_a_500_not_a_pass() {
    let k1 = Key::new("k1");
    // Nothing listens on port 1.
    let a = authorizer(JwksSource::url("http://127.0.0.1:1/jwks.json", Duration::ZERO).unwrap());
    assert_eq!(
        status_of(&a, &k1.sign(&claims("alice"))).await,
        StatusCode::INTERNAL_SERVER_ERROR
    );
}

/// A lookup from the token's groups: `{assistant}:{role}`.
#[derive(Debug)]
struct Groups;

#[async_trait::async_trait]
impl RoleLookup for Groups {
    async fn role(
        &self,
        claims: &crawl_api::Claims,
        assistant_id: &str,
    ) -> Result<Option<Role>, crawl_api::ApiError> {
        Ok(claims.groups.iter().find_map(|g| {
            let (a, r) = g.split_once(':')?;
            (a == assistant_id).then(|| serde_json::from_value(json!(r)).ok())?
        }))
    }
}

#[tokio::test]
async fn the_role_lookup_is_pluggable() {
    let key = Key::new("k1");
    let a = JwtAuthorizer::builder()
        .jwks(JwksSource::from_json(&jwks_json(&[&key])).unwrap())
        .issuer(ISS)
        .audience(CLIENT)
        .roles(Arc::new(Groups))
        .build()
        .unwrap();
    let mut c = claims("someone");
    c["cognito:groups"] = json!(["calm:editor", "other:viewer"]);
    let h = bearer(&key.sign(&c));
    assert_eq!(a.role(&h, "calm").await.unwrap(), Role::Editor);
    assert_eq!(a.role(&h, "other").await.unwrap(), Role::Viewer);
    assert_eq!(
        a.role(&h, "third").await.unwrap_err().status(),
        StatusCode::FORBIDDEN
    );
}

//! Hostile callers of the job API (issue 18): a body cannot switch the crawl policy, and the
//! documented minimal body starts a crawl. No network: the crawler's fetcher serves a canned
//! site.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use crawl_api::router;
use serde_json::{json, Value};
use support::{memory_state, ROOT};
use tower::ServiceExt;

async fn send(app: &Router, req: Request<Body>) -> (StatusCode, Value) {
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    let v = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, v)
}

fn post_json(uri: &str, body: &Value) -> Request<Body> {
    Request::post(uri)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

#[tokio::test]
async fn a_body_cannot_switch_the_crawl_policy() {
    let (state, _, site) = memory_state(Duration::ZERO);
    let app = router(state);
    for (field, value) in [
        ("allowPrivateNetwork", json!(true)),
        ("respectRobots", json!(false)),
        ("maxCrawlDelay", json!(86_400)),
        ("concurrency", json!(50)),
        ("rate", json!(null)),
        ("userAgent", json!("Googlebot")),
    ] {
        let body = json!({"url": ROOT, "maxDepth": 1, field: value});
        let (status, v) = send(&app, post_json("/assistants/a/crawl", &body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {v}");
        assert_eq!(v["error"]["field"], field, "{v}");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(
            msg.starts_with(field) && msg.contains("unknown field"),
            "{msg}"
        );
    }
    let (_, list) = send(
        &app,
        Request::get("/assistants/a/crawls")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(list["crawls"], json!([]), "no refused body started a job");
    assert_eq!(site.fetches.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_documented_minimal_body_starts_a_crawl() {
    let (state, _, _) = memory_state(Duration::ZERO);
    let app = router(state);
    // Three sites: a crawl of a URL is a run of its source, one at a time.
    for body in [
        json!({"url": ROOT, "maxDepth": 3, "maxPages": 100}),
        json!({"url": format!("{ROOT}a")}),
        json!({"url": format!("{ROOT}b"), "maxDepth": 1, "render": "never"}),
    ] {
        let (status, v) = send(&app, post_json("/assistants/min/crawl", &body)).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}: {v}");
    }
}

fn request(method: &str, uri: &str, headers: &[(&str, &str)], body: &str) -> Request<Body> {
    let mut r = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    r.body(Body::from(body.to_owned())).unwrap()
}

#[tokio::test]
async fn cross_site_requests_are_refused_before_anything_runs() {
    let (state, _, site) = memory_state(Duration::ZERO);
    let app = router(state);
    let body = json!({"url": ROOT}).to_string();
    let uri = "/assistants/a/crawl";
    let json = ("content-type", "application/json");
    let local = ("host", "127.0.0.1:8080");
    // Content types a page on any origin can POST without a preflight, and none at all.
    for ct in [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
    ] {
        let (s, v) = send(
            &app,
            request("POST", uri, &[local, ("content-type", ct)], &body),
        )
        .await;
        assert_eq!(s, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{ct}: {v}");
    }
    let (s, _) = send(&app, request("POST", uri, &[local], &body)).await;
    assert_eq!(s, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    // DNS rebinding: the page's own name arrives as Host, on every method.
    let rebound = ("host", "attacker.example:8080");
    let (s, v) = send(&app, request("POST", uri, &[rebound, json], &body)).await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().starts_with("Host"));
    let (s, _) = send(&app, request("GET", "/assistants/a/crawls", &[rebound], "")).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    // A foreign Origin on unsafe methods (and the opaque `null` origin).
    for origin in ["http://attacker.example", "null", "http://127.0.0.1:9999"] {
        let (s, v) = send(
            &app,
            request("POST", uri, &[local, json, ("origin", origin)], &body),
        )
        .await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{origin}: {v}");
        let (s, _) = send(
            &app,
            request(
                "DELETE",
                "/assistants/a/crawl/job-1",
                &[local, ("origin", origin)],
                "",
            ),
        )
        .await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{origin}");
    }
    assert_eq!(site.fetches.load(std::sync::atomic::Ordering::SeqCst), 0);
    // The page's own origin (the Website Sources page) and non-browser clients pass.
    let (s, v) = send(
        &app,
        request(
            "POST",
            uri,
            &[local, json, ("origin", "http://127.0.0.1:8080")],
            &body,
        ),
    )
    .await;
    assert_eq!(s, StatusCode::ACCEPTED, "{v}");
    // (Another site: the first one's source has its run going.)
    let other = json!({"url": format!("{ROOT}b")}).to_string();
    let (s, v) = send(&app, request("POST", uri, &[json], &other)).await;
    assert_eq!(s, StatusCode::ACCEPTED, "{v}");
}

#[tokio::test]
async fn a_host_behind_a_proxy_configures_its_public_name() {
    let (state, _, _) = memory_state(Duration::ZERO);
    let app = router(state.allowed_hosts(["kb.example.edu"]));
    let get = |host: &'static str| request("GET", "/assistants/a/crawls", &[("host", host)], "");
    assert_eq!(send(&app, get("kb.example.edu")).await.0, StatusCode::OK);
    assert_eq!(
        send(&app, get("127.0.0.1:8080")).await.0,
        StatusCode::FORBIDDEN
    );
}

#[tokio::test]
async fn a_storage_failure_answers_500_without_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let sink = Arc::new(crawl_store::FsSink::new(dir.path()).unwrap());
    let site = Arc::new(support::CannedSite::new(Duration::ZERO));
    let state = support::state_with(
        sink as crawl_core::DynSink,
        Arc::new(crawl_core::NoopIngestor),
        site,
    );
    let app = router(state);
    let (s, v) = send(
        &app,
        post_json("/assistants/a/crawl", &json!({"url": ROOT})),
    )
    .await;
    assert_eq!(s, StatusCode::ACCEPTED, "{v}");
    let id = v["crawlJobId"].as_str().unwrap().to_owned();
    let one = format!("/assistants/a/crawl/{id}");
    support::eventually("job end", || async {
        let (_, v) = send(&app, request("GET", &one, &[], "")).await;
        (v["status"] != "RUNNING").then_some(())
    })
    .await;
    // A file where the job's folder should be: the sink's manifest cannot be opened.
    let job_dir = dir.path().join(&id);
    std::fs::remove_dir_all(&job_dir).unwrap();
    std::fs::write(&job_dir, b"not a folder").unwrap();
    let resp = app
        .clone()
        .oneshot(request("DELETE", &one, &[], ""))
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::INTERNAL_SERVER_ERROR);
    let text = String::from_utf8(
        axum::body::to_bytes(resp.into_body(), 1 << 20)
            .await
            .unwrap()
            .to_vec(),
    )
    .unwrap();
    let root = dir.path().to_str().unwrap();
    assert!(!text.contains(root), "{text}");
    assert!(!text.contains("manifest") && !text.contains('/'), "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["error"]["message"],
        "storage: the server could not complete the request; the detail is in its log"
    );
    // The record is kept, so the DELETE can be retried once storage is repaired.
    let (s, _) = send(&app, request("GET", &one, &[], "")).await;
    assert_eq!(s, StatusCode::OK);
}

/// What the webhook receiver got: (signature, timestamp, delivery, body).
type Delivered = Arc<Mutex<Vec<(String, String, String, Vec<u8>)>>>;

#[tokio::test]
async fn replayed_or_tampered_webhooks_are_refused() {
    use crawl_api::ingest::{
        sign, verify, WebhookIngestor, DELIVERY_HEADER, REPLAY_WINDOW, SIGNATURE_HEADER,
        TIMESTAMP_HEADER,
    };
    use crawl_core::Ingestor;
    const SECRET: &[u8] = b"receiver-secret";
    // A receiver on loopback that records what it got.
    let got: Delivered = Arc::default();
    let seen = Arc::clone(&got);
    let app = Router::new().route(
        "/hook",
        axum::routing::post(
            move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let seen = Arc::clone(&seen);
                async move {
                    let h = |n: &str| headers[n].to_str().unwrap().to_owned();
                    seen.lock().unwrap().push((
                        h(SIGNATURE_HEADER),
                        h(TIMESTAMP_HEADER),
                        h(DELIVERY_HEADER),
                        body.to_vec(),
                    ));
                    StatusCode::NO_CONTENT
                }
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let hook = WebhookIngestor::new(format!("http://{addr}/hook"), SECRET).unwrap();
    let req = crawl_core::CrawlRequest::builder(ROOT).build().unwrap();
    let job = crawl_core::JobRecord::new(
        crawl_core::JobId::new(),
        req,
        time::OffsetDateTime::now_utc(),
    );
    hook.on_completed(&job, &crawl_core::RunDiff::default())
        .await
        .unwrap();
    let (sig, ts, delivery, body) = got.lock().unwrap()[0].clone();
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    // As delivered: accepted.
    assert!(verify(SECRET, &body, &sig, &ts, &delivery, now));
    // The same bytes replayed after the window: refused.
    let later = now + i64::try_from(REPLAY_WINDOW.as_secs()).unwrap() + 1;
    assert!(!verify(SECRET, &body, &sig, &ts, &delivery, later));
    // A fresh timestamp on the old signature, another delivery id, another body: refused.
    assert!(!verify(
        SECRET,
        &body,
        &sig,
        &later.to_string(),
        &delivery,
        later
    ));
    let other = format!("crawl.deleted:{}", job.id);
    assert!(!verify(SECRET, &body, &sig, &ts, &other, now));
    let mut tampered = body.clone();
    tampered.extend_from_slice(b" ");
    assert!(!verify(SECRET, &tampered, &sig, &ts, &delivery, now));
    // The signature covers timestamp and delivery id: a body-only HMAC does not verify.
    let ts_n: i64 = ts.parse().unwrap();
    assert_eq!(sign(SECRET, ts_n, &delivery, &body), sig);
    assert!(!verify(
        SECRET,
        &body,
        &sign(SECRET, ts_n, "", &body),
        &ts,
        &delivery,
        now
    ));
}

//! Where the [`JwtAuthorizer`](super::JwtAuthorizer) finds its signing keys: a JWKS given as
//! JSON, or fetched from a URL and cached.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, JwkSet, KeyAlgorithm};
use jsonwebtoken::DecodingKey;
use tokio::sync::Mutex;

use crate::error::ApiError;

/// The most bytes a fetched JWKS may have.
const MAX_JWKS_BYTES: usize = 256 * 1024;

/// The RS256 keys of an issuer, by key id.
#[derive(Clone)]
pub struct JwksSource {
    inner: Arc<Inner>,
}

enum Inner {
    Fixed(Vec<(String, DecodingKey)>),
    Url(Remote),
}

struct Remote {
    url: String,
    client: reqwest::Client,
    ttl: Duration,
    min_refetch: Duration,
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    keys: Vec<(String, DecodingKey)>,
    fetched: Option<Instant>,
}

impl fmt::Debug for JwksSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.inner {
            Inner::Fixed(keys) => f
                .debug_struct("JwksSource")
                .field("keys", &keys.iter().map(|(k, _)| k).collect::<Vec<_>>())
                .finish(),
            Inner::Url(r) => f
                .debug_struct("JwksSource")
                .field("url", &r.url)
                .field("ttl", &r.ttl)
                .finish(),
        }
    }
}

impl fmt::Display for JwksSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.inner {
            Inner::Fixed(keys) => write!(f, "JWKS({} keys)", keys.len()),
            Inner::Url(r) => write!(f, "JWKS({})", r.url),
        }
    }
}

/// The RS256 keys of a JWKS document; keys of another type or algorithm, and keys without a
/// `kid`, are left out (a token naming them is refused).
fn rs256_keys(json: &str) -> Result<Vec<(String, DecodingKey)>, String> {
    let set: JwkSet = serde_json::from_str(json).map_err(|e| format!("not a JWKS ({e})"))?;
    let mut keys = Vec::new();
    for jwk in &set.keys {
        let (Some(kid), AlgorithmParameters::RSA(rsa)) = (&jwk.common.key_id, &jwk.algorithm)
        else {
            continue;
        };
        if jwk
            .common
            .key_algorithm
            .is_some_and(|a| a != KeyAlgorithm::RS256)
        {
            continue;
        }
        let key = DecodingKey::from_rsa_components(&rsa.n, &rsa.e)
            .map_err(|e| format!("key {kid}: not an RSA public key ({e})"))?;
        keys.push((kid.clone(), key));
    }
    Ok(keys)
}

fn find(keys: &[(String, DecodingKey)], kid: &str) -> Option<DecodingKey> {
    keys.iter().find(|(k, _)| k == kid).map(|(_, d)| d.clone())
}

impl JwksSource {
    /// The keys of a JWKS document (`{"keys": [...]}`); an error names what is wrong.
    pub fn from_json(json: &str) -> Result<Self, String> {
        let keys = rs256_keys(json).map_err(|e| format!("jwks: {e}"))?;
        if keys.is_empty() {
            return Err("jwks: no RS256 key with a kid".to_owned());
        }
        Ok(JwksSource {
            inner: Arc::new(Inner::Fixed(keys)),
        })
    }

    /// The keys at `url` (for Cognito,
    /// `https://cognito-idp.{region}.amazonaws.com/{pool_id}/.well-known/jwks.json`), fetched on
    /// first use and again after `ttl`, or when a token names a key id the cache lacks (at most
    /// once a minute, see [`min_refetch`](Self::min_refetch)), so a key rotation is picked up.
    pub fn url(url: impl Into<String>, ttl: Duration) -> Result<Self, String> {
        let url = url.into();
        let parsed = reqwest::Url::parse(&url).map_err(|e| format!("jwksUrl: {e}"))?;
        if !matches!(parsed.scheme(), "https" | "http") {
            return Err("jwksUrl: must be an http(s) URL".to_owned());
        }
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("jwksUrl: no HTTP client ({e})"))?;
        Ok(JwksSource {
            inner: Arc::new(Inner::Url(Remote {
                url,
                client,
                ttl,
                min_refetch: Duration::from_secs(60),
                cache: Mutex::new(Cache::default()),
            })),
        })
    }

    /// For a URL source: the least time between two fetches caused by an unknown key id
    /// (default one minute), so tokens with made-up key ids cannot hammer the issuer.
    #[must_use]
    pub fn min_refetch(self, every: Duration) -> Self {
        match Arc::try_unwrap(self.inner) {
            Ok(Inner::Url(mut r)) => {
                r.min_refetch = every;
                JwksSource {
                    inner: Arc::new(Inner::Url(r)),
                }
            }
            Ok(fixed) => JwksSource {
                inner: Arc::new(fixed),
            },
            Err(inner) => JwksSource { inner },
        }
    }

    /// The key with id `kid`: `Ok(None)` when the issuer has none, 500 when the JWKS cannot be
    /// fetched (and nothing is cached).
    pub(crate) async fn key(&self, kid: &str) -> Result<Option<DecodingKey>, ApiError> {
        let r = match &*self.inner {
            Inner::Fixed(keys) => return Ok(find(keys, kid)),
            Inner::Url(r) => r,
        };
        let mut cache = r.cache.lock().await;
        let age = cache.fetched.map(|t| t.elapsed());
        let stale = age.is_none_or(|a| a >= r.ttl);
        if !stale {
            if let Some(k) = find(&cache.keys, kid) {
                return Ok(Some(k));
            }
        }
        if !stale && age.is_some_and(|a| a < r.min_refetch) {
            return Ok(None);
        }
        match r.fetch().await {
            Ok(keys) => {
                cache.keys = keys;
                cache.fetched = Some(Instant::now());
            }
            Err(e) => {
                tracing::error!(jwks = %r.url, error = %e, "JWKS fetch failed");
                if cache.fetched.is_none() {
                    return Err(ApiError::internal(crawl_core::ErrorKind::Network));
                }
            }
        }
        Ok(find(&cache.keys, kid))
    }
}

impl Remote {
    async fn fetch(&self) -> Result<Vec<(String, DecodingKey)>, String> {
        let resp = self
            .client
            .get(&self.url)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if !resp.status().is_success() {
            return Err(format!("status {}", resp.status()));
        }
        if resp
            .content_length()
            .is_some_and(|n| n > MAX_JWKS_BYTES as u64)
        {
            return Err("JWKS too large".to_owned());
        }
        let body = resp.bytes().await.map_err(|e| e.to_string())?;
        if body.len() > MAX_JWKS_BYTES {
            return Err("JWKS too large".to_owned());
        }
        rs256_keys(&String::from_utf8_lossy(&body))
    }
}

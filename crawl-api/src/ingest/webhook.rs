//! [`WebhookIngestor`]: a signed JSON manifest POSTed to the host's ingestion endpoint.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use crawl_core::{Error, ErrorKind, Ingestor, JobRecord, Result, RunDiff, StoredDoc};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// Header carrying `sha256=<hex>`, the HMAC-SHA256 of `"{timestamp}.{delivery}.{body}"`
/// (see [`sign`]).
pub const SIGNATURE_HEADER: &str = "x-kb-crawl-signature";
/// Header carrying a delivery id, the same for every retry of one event
/// (`crawl.completed:job-…`), so a receiver can drop a duplicate. Signed.
pub const DELIVERY_HEADER: &str = "x-kb-crawl-delivery";
/// Header carrying when this attempt was signed, Unix seconds. Signed.
pub const TIMESTAMP_HEADER: &str = "x-kb-crawl-timestamp";
/// How far a delivery's timestamp may be from the receiver's clock, either way, for
/// [`verify`] to accept it: 5 minutes. A receiver that also remembers the delivery ids it
/// accepted within this window refuses every replay.
pub const REPLAY_WINDOW: Duration = Duration::from_secs(300);

/// The body POSTed for each event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// `crawl.completed` or `crawl.deleted`.
    pub event: String,
    /// The job.
    pub crawl_job_id: String,
    /// The owning assistant (`null` for jobs started outside the API).
    pub assistant_id: Option<String>,
    /// The documents to ingest: every stored document of a crawl; for a run of a source,
    /// those it added or changed (empty for `crawl.deleted`).
    pub documents: Vec<ManifestDoc>,
    /// The documents a run of a source removed: delete them from the knowledge base.
    #[serde(default)]
    pub removed: Vec<ManifestDoc>,
    /// The source the run belongs to, for a run of a source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_id: Option<String>,
}

/// One document of a [`Manifest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestDoc {
    /// The page URL.
    pub url: String,
    /// Key of the markdown file in the sink.
    pub key: String,
    /// Hex SHA-256 of the markdown body.
    pub content_hash: String,
}

fn mac(secret: &[u8], timestamp: i64, delivery: &str, body: &[u8]) -> Hmac<Sha256> {
    // HMAC accepts keys of any length: `new_from_slice` cannot fail for it.
    let mut mac = match Hmac::<Sha256>::new_from_slice(secret) {
        Ok(m) => m,
        Err(_) => unreachable!("HMAC takes keys of any length"),
    };
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(delivery.as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// `sha256=<hex>` of HMAC-SHA256(`secret`, `"{timestamp}.{delivery}.{body}"`): what
/// [`SIGNATURE_HEADER`] carries, with `timestamp` (Unix seconds) in [`TIMESTAMP_HEADER`] and
/// `delivery` in [`DELIVERY_HEADER`].
pub fn sign(secret: &[u8], timestamp: i64, delivery: &str, body: &[u8]) -> String {
    let mac = mac(secret, timestamp, delivery, body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// What a receiver checks (and what this crate's tests check): the [`SIGNATURE_HEADER`]
/// value matches the [`TIMESTAMP_HEADER`] and [`DELIVERY_HEADER`] values and the body
/// (constant-time comparison), and the timestamp is within [`REPLAY_WINDOW`] of `now_unix`
/// (the receiver's clock, Unix seconds). A replayed delivery older than the window, or one
/// whose body, delivery id or timestamp was changed, is refused.
pub fn verify(
    secret: &[u8],
    body: &[u8],
    signature: &str,
    timestamp: &str,
    delivery: &str,
    now_unix: i64,
) -> bool {
    let Ok(ts) = timestamp.trim().parse::<i64>() else {
        return false;
    };
    let window = i64::try_from(REPLAY_WINDOW.as_secs()).unwrap_or(i64::MAX);
    if now_unix.abs_diff(ts) > window.unsigned_abs() {
        return false;
    }
    let Some(hex_sig) = signature.strip_prefix("sha256=") else {
        return false;
    };
    let Ok(sig) = hex::decode(hex_sig) else {
        return false;
    };
    mac(secret, ts, delivery, body).verify_slice(&sig).is_ok()
}

/// POSTs a [`Manifest`] to a URL for each completed and each deleted job, signed with
/// HMAC-SHA256 over timestamp, delivery id and body in [`SIGNATURE_HEADER`] (see [`verify`]), retried with exponential backoff on network errors,
/// 5xx and 429 answers. Any 2xx is success; another 4xx fails at once (the receiver refused
/// the manifest).
#[derive(Clone)]
pub struct WebhookIngestor {
    url: String,
    secret: Vec<u8>,
    client: reqwest::Client,
    attempts: u32,
    backoff: Duration,
}

impl fmt::Debug for WebhookIngestor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookIngestor")
            .field("url", &self.url)
            .field("secret", &"<redacted>")
            .field("attempts", &self.attempts)
            .field("backoff", &self.backoff)
            .finish()
    }
}

impl fmt::Display for WebhookIngestor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "WebhookIngestor({})", self.url)
    }
}

impl WebhookIngestor {
    /// Posts to `url`, signing with `secret`. Defaults: 5 attempts, 250 ms first backoff
    /// (doubling), 30 s timeout per attempt.
    pub fn new(url: impl Into<String>, secret: impl Into<Vec<u8>>) -> Result<Self> {
        let url = url.into();
        reqwest::Url::parse(&url)
            .map_err(|e| Error::invalid(format!("webhook url: '{url}' is not a URL ({e})")))?;
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| Error::new(ErrorKind::Internal, format!("webhook client: {e}")))?;
        Ok(WebhookIngestor {
            url,
            secret: secret.into(),
            client,
            attempts: 5,
            backoff: Duration::from_millis(250),
        })
    }

    /// Tries each delivery at most `n` times (at least once).
    #[must_use]
    pub fn attempts(mut self, n: u32) -> Self {
        self.attempts = n.max(1);
        self
    }

    /// Waits `d` before the first retry, doubling each time.
    #[must_use]
    pub fn backoff(mut self, d: Duration) -> Self {
        self.backoff = d;
        self
    }

    async fn deliver(&self, manifest: &Manifest) -> Result<()> {
        let body = serde_json::to_vec(manifest)
            .map_err(|e| Error::new(ErrorKind::Internal, format!("manifest JSON: {e}")))?;
        let delivery = format!("{}:{}", manifest.event, manifest.crawl_job_id);
        let mut wait = self.backoff;
        let mut last = String::new();
        for attempt in 1..=self.attempts {
            if attempt > 1 {
                tokio::time::sleep(wait).await;
                wait = wait.saturating_mul(2);
            }
            // Signed per attempt: a retry after a long backoff is still inside the window.
            let timestamp = time::OffsetDateTime::now_utc().unix_timestamp();
            let signature = sign(&self.secret, timestamp, &delivery, &body);
            let sent = self
                .client
                .post(&self.url)
                .header("content-type", "application/json")
                .header(SIGNATURE_HEADER, &signature)
                .header(TIMESTAMP_HEADER, timestamp.to_string())
                .header(DELIVERY_HEADER, &delivery)
                .body(body.clone())
                .send()
                .await;
            match sent {
                Ok(r) if r.status().is_success() => return Ok(()),
                Ok(r) if r.status().is_server_error() || r.status().as_u16() == 429 => {
                    last = format!("answered {}", r.status());
                }
                Ok(r) => {
                    return Err(Error::new(
                        ErrorKind::HttpStatus,
                        format!("webhook {} refused {delivery}: {}", self.url, r.status()),
                    ))
                }
                Err(e) => last = format!("{e}"),
            }
            tracing::warn!(url = %self.url, %delivery, attempt, reason = %last, "webhook delivery failed");
        }
        Err(Error::new(
            ErrorKind::Network,
            format!(
                "webhook {}: {delivery} not delivered after {} attempts ({last})",
                self.url, self.attempts
            ),
        ))
    }
}

#[async_trait]
impl Ingestor for WebhookIngestor {
    async fn on_completed(&self, job: &JobRecord, diff: &RunDiff) -> Result<()> {
        let entries = |docs: &[StoredDoc]| {
            docs.iter()
                .map(|d| ManifestDoc {
                    url: d.url.to_string(),
                    key: d.key.clone(),
                    content_hash: d.content_hash.clone(),
                })
                .collect()
        };
        self.deliver(&Manifest {
            event: "crawl.completed".into(),
            crawl_job_id: job.id.to_string(),
            assistant_id: job.assistant_id.clone(),
            documents: entries(&diff.upserts),
            removed: entries(&diff.deletions),
            source_id: job.request.sync.as_ref().map(|s| s.source.to_string()),
        })
        .await
    }

    async fn on_deleted(&self, job: &JobRecord) -> Result<()> {
        self.deliver(&Manifest {
            event: "crawl.deleted".into(),
            crawl_job_id: job.id.to_string(),
            assistant_id: job.assistant_id.clone(),
            documents: Vec::new(),
            removed: Vec::new(),
            source_id: job.request.sync.as_ref().map(|s| s.source.to_string()),
        })
        .await
    }
}

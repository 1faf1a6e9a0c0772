//! [`WebhookIngestor`]: a signed JSON manifest POSTed to the host's ingestion endpoint.

use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use crawl_core::{DiffSide, Error, ErrorKind, Ingestor, JobRecord, Result, RunDiff, StoredDoc};
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

    /// POSTs the manifest of `head` with the documents of `diff` (none when `None`). The
    /// body is never held whole: each attempt walks the diff twice, a page at a time, once
    /// to sign it (and learn its length) and once to send it as a stream.
    async fn deliver(&self, head: &Head<'_>, diff: Option<&RunDiff<'_>>) -> Result<()> {
        let delivery = format!("{}:{}", head.event, head.crawl_job_id);
        let mut wait = self.backoff;
        let mut last = String::new();
        for attempt in 1..=self.attempts {
            if attempt > 1 {
                tokio::time::sleep(wait).await;
                wait = wait.saturating_mul(2);
            }
            // Signed per attempt: a retry after a long backoff is still inside the window.
            let timestamp = time::OffsetDateTime::now_utc().unix_timestamp();
            let mut mac = mac(&self.secret, timestamp, &delivery, b"");
            let mut len = 0u64;
            let mut parts = BodyParts::new(head, diff);
            while let Some(part) = parts.next().await? {
                mac.update(&part);
                len += part.len() as u64;
            }
            let signature = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
            let (tx, rx) = tokio::sync::mpsc::channel::<std::io::Result<Vec<u8>>>(2);
            let body = reqwest::Body::wrap_stream(futures::stream::unfold(rx, |mut rx| async {
                rx.recv().await.map(|part| (part, rx))
            }));
            let send = self
                .client
                .post(&self.url)
                .header("content-type", "application/json")
                .header("content-length", len.to_string())
                .header(SIGNATURE_HEADER, &signature)
                .header(TIMESTAMP_HEADER, timestamp.to_string())
                .header(DELIVERY_HEADER, &delivery)
                .body(body)
                .send();
            let produce = async move {
                let mut parts = BodyParts::new(head, diff);
                loop {
                    match parts.next().await {
                        Ok(Some(part)) => {
                            // The request ended early (refused, or the connection broke):
                            // its answer says why.
                            if tx.send(Ok(part)).await.is_err() {
                                return Ok(());
                            }
                        }
                        Ok(None) => return Ok(()),
                        Err(e) => {
                            let _ = tx.send(Err(std::io::Error::other(e.to_string()))).await;
                            return Err(e);
                        }
                    }
                }
            };
            let (sent, produced) = tokio::join!(send, produce);
            produced?;
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

/// The fields of a [`Manifest`] other than its documents.
#[derive(Debug)]
struct Head<'a> {
    event: &'static str,
    crawl_job_id: String,
    assistant_id: Option<&'a str>,
    source_id: Option<String>,
}

impl<'a> Head<'a> {
    fn of(event: &'static str, job: &'a JobRecord) -> Self {
        Head {
            event,
            crawl_job_id: job.id.to_string(),
            assistant_id: job.assistant_id.as_deref(),
            source_id: job.request.sync.as_ref().map(|s| s.source.to_string()),
        }
    }
}

/// The bytes of a [`Manifest`] body, exactly as `serde_json::to_vec` writes it, produced a
/// part at a time: the head, one part per page of the diff, the tail.
struct BodyParts<'h, 'd, 'a> {
    head: &'h Head<'h>,
    diff: Option<&'d RunDiff<'a>>,
    stage: Stage,
    pages: Option<crawl_core::DiffPages<'d, 'a>>,
    first: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Head,
    Documents,
    Removed,
    Tail,
    Done,
}

impl<'h, 'd, 'a> BodyParts<'h, 'd, 'a> {
    fn new(head: &'h Head<'h>, diff: Option<&'d RunDiff<'a>>) -> Self {
        BodyParts {
            head,
            diff,
            stage: Stage::Head,
            pages: None,
            first: true,
        }
    }

    async fn next(&mut self) -> Result<Option<Vec<u8>>> {
        let json =
            |e: serde_json::Error| Error::new(ErrorKind::Internal, format!("manifest JSON: {e}"));
        match self.stage {
            Stage::Head => {
                let h = self.head;
                let mut out = Vec::new();
                out.extend_from_slice(b"{\"event\":");
                serde_json::to_writer(&mut out, h.event).map_err(json)?;
                out.extend_from_slice(b",\"crawlJobId\":");
                serde_json::to_writer(&mut out, &h.crawl_job_id).map_err(json)?;
                out.extend_from_slice(b",\"assistantId\":");
                serde_json::to_writer(&mut out, &h.assistant_id).map_err(json)?;
                out.extend_from_slice(b",\"documents\":[");
                self.stage = Stage::Documents;
                self.pages = self.diff.map(|d| d.pages(DiffSide::Upserts));
                self.first = true;
                Ok(Some(out))
            }
            Stage::Documents | Stage::Removed => {
                let page = match self.pages.as_mut() {
                    Some(p) => p.next_page().await?,
                    None => None,
                };
                let Some(docs) = page else {
                    let out = if self.stage == Stage::Documents {
                        self.stage = Stage::Removed;
                        self.pages = self.diff.map(|d| d.pages(DiffSide::Deletions));
                        self.first = true;
                        b"],\"removed\":[".to_vec()
                    } else {
                        self.stage = Stage::Tail;
                        b"]".to_vec()
                    };
                    return Ok(Some(out));
                };
                let mut out = Vec::new();
                for d in &docs {
                    if !std::mem::take(&mut self.first) {
                        out.push(b',');
                    }
                    serde_json::to_writer(&mut out, &entry(d)).map_err(json)?;
                }
                Ok(Some(out))
            }
            Stage::Tail => {
                let mut out = Vec::new();
                if let Some(s) = &self.head.source_id {
                    out.extend_from_slice(b",\"sourceId\":");
                    serde_json::to_writer(&mut out, s).map_err(json)?;
                }
                out.push(b'}');
                self.stage = Stage::Done;
                Ok(Some(out))
            }
            Stage::Done => Ok(None),
        }
    }
}

fn entry(d: &StoredDoc) -> ManifestDoc {
    ManifestDoc {
        url: d.url.to_string(),
        key: d.key.clone(),
        content_hash: d.content_hash.clone(),
    }
}

#[async_trait]
impl Ingestor for WebhookIngestor {
    async fn on_completed(&self, job: &JobRecord, diff: &RunDiff<'_>) -> Result<()> {
        self.deliver(&Head::of("crawl.completed", job), Some(diff))
            .await
    }

    async fn on_deleted(&self, job: &JobRecord) -> Result<()> {
        self.deliver(&Head::of("crawl.deleted", job), None).await
    }
}

#[cfg(test)]
mod tests {
    use crawl_core::{ChangeCounts, CrawlRequest, DiffDocs, JobId};

    use super::*;

    fn doc(i: usize) -> StoredDoc {
        StoredDoc::new(
            format!("https://x.test/p{i}?q=\"{i}\"").parse().unwrap(),
            format!("k{i}"),
            format!("h{i}"),
        )
    }

    async fn body(head: &Head<'_>, diff: Option<&RunDiff<'_>>) -> (Vec<u8>, usize) {
        let mut parts = BodyParts::new(head, diff);
        let (mut out, mut n) = (Vec::new(), 0);
        while let Some(p) = parts.next().await.unwrap() {
            out.extend(p);
            n += 1;
        }
        (out, n)
    }

    /// The streamed body is the bytes `serde_json` writes for the whole [`Manifest`], so
    /// the signature contract is unchanged, while the diff is read a page at a time.
    #[tokio::test]
    async fn the_streamed_body_is_the_manifest_json_read_a_page_at_a_time() {
        let req = CrawlRequest::builder("https://x.test/").build().unwrap();
        let mut job = JobRecord::new(JobId::new(), req, time::OffsetDateTime::UNIX_EPOCH);
        for (assistant, upserts, deletions) in [
            (Some("ast-1"), 5, 3),
            (None, 0, 0),
            (Some("a\"b"), 1, 0),
            (None, 0, 2),
        ] {
            job.assistant_id = assistant.map(str::to_owned);
            let up: Vec<_> = (0..upserts).map(doc).collect();
            let del: Vec<_> = (10..10 + deletions).map(doc).collect();
            let diff = RunDiff::from_docs(DiffDocs::new(
                ChangeCounts::default(),
                up.clone(),
                del.clone(),
            ))
            .with_page_size(2);
            let head = Head::of("crawl.completed", &job);
            let (got, parts) = body(&head, Some(&diff)).await;
            let want = serde_json::to_vec(&Manifest {
                event: "crawl.completed".into(),
                crawl_job_id: job.id.to_string(),
                assistant_id: job.assistant_id.clone(),
                documents: up.iter().map(entry).collect(),
                removed: del.iter().map(entry).collect(),
                source_id: None,
            })
            .unwrap();
            assert_eq!(
                String::from_utf8(got).unwrap(),
                String::from_utf8(want).unwrap()
            );
            // Head, a part per page of two, the separator and the tail.
            assert_eq!(parts, 4 + upserts.div_ceil(2) + deletions.div_ceil(2));
        }
        let head = Head::of("crawl.deleted", &job);
        let (got, _) = body(&head, None).await;
        let want: Manifest = serde_json::from_slice(&got).unwrap();
        assert!(want.documents.is_empty() && want.removed.is_empty());
    }
}

//! The JSON shapes of the job API (camelCase, timestamps RFC 3339).

use crawl_core::{IngestionState, JobRecord, JobStatus};
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// Answer to `POST /assistants/{assistant_id}/crawl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrawlStarted {
    /// The new job's id.
    pub crawl_job_id: String,
    /// `RUNNING` (or already final for a job that ended at once).
    pub status: JobStatus,
    /// When the job started.
    #[serde(with = "time::serde::rfc3339")]
    pub started_at: OffsetDateTime,
}

/// Answer to `GET /assistants/{assistant_id}/crawl/{crawl_job_id}`, and one item of the list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrawlJob {
    /// The job's id.
    pub crawl_job_id: String,
    /// `RUNNING`, `COMPLETED` or `FAILED`.
    pub status: JobStatus,
    /// Admitted pages that ended (stored or skipped).
    pub pages_processed: u64,
    /// Pages admitted so far (at most `maxPages`).
    pub pages_total: u64,
    /// When the job started.
    #[serde(with = "time::serde::rfc3339")]
    pub started_at: OffsetDateTime,
    /// When it ended; `null` while running.
    #[serde(with = "time::serde::rfc3339::option")]
    pub completed_at: Option<OffsetDateTime>,
    /// For a run of a source: the source (`null` for a crawl that is not one).
    #[serde(default)]
    pub source_id: Option<String>,
    /// Pages the run added to the knowledge base (set when a run of a source ends).
    #[serde(default)]
    pub pages_added: u64,
    /// Pages whose markdown changed.
    #[serde(default)]
    pub pages_changed: u64,
    /// Pages found unchanged (nothing written).
    #[serde(default)]
    pub pages_unchanged: u64,
    /// Pages removed from the knowledge base.
    #[serde(default)]
    pub pages_removed: u64,
    /// The hand-off to the knowledge base: `pending` (not yet, or in progress),
    /// `delivered`, or `failed` (retry with `POST .../crawl/{crawlJobId}/ingest`).
    #[serde(default)]
    pub ingestion: IngestionState,
    /// Why the last hand-off failed; `null` unless `ingestion` is `failed`.
    #[serde(default)]
    pub ingestion_reason: Option<String>,
    /// Hand-offs started so far.
    #[serde(default)]
    pub ingestion_attempts: u32,
}

/// Answer to `GET /assistants/{assistant_id}/crawls`: newest first, one page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CrawlList {
    /// The assistant's jobs (at most `limit`).
    pub crawls: Vec<CrawlJob>,
    /// Pass it back as `nextToken` for the next page; `null` on the last page.
    pub next_token: Option<String>,
}

impl From<&JobRecord> for CrawlStarted {
    fn from(r: &JobRecord) -> Self {
        CrawlStarted {
            crawl_job_id: r.id.to_string(),
            status: r.status,
            started_at: r.started_at,
        }
    }
}

impl From<&JobRecord> for CrawlJob {
    fn from(r: &JobRecord) -> Self {
        CrawlJob {
            crawl_job_id: r.id.to_string(),
            status: r.status,
            pages_processed: r.progress.pages_processed,
            pages_total: r.progress.pages_total,
            started_at: r.started_at,
            completed_at: r.completed_at,
            source_id: r.request.sync.as_ref().map(|s| s.source.to_string()),
            pages_added: r.progress.changes.added,
            pages_changed: r.progress.changes.changed,
            pages_unchanged: r.progress.changes.unchanged,
            pages_removed: r.progress.changes.removed,
            ingestion: r.ingestion.state,
            ingestion_reason: r.ingestion.reason.clone(),
            ingestion_attempts: r.ingestion.attempts,
        }
    }
}

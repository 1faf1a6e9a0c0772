//! The JSON shapes of the job API (camelCase, timestamps RFC 3339).

use crawl_core::{IngestionState, JobRecord, JobStatus, RenderMode, Schedule, SitemapMode};
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
    /// The source the job is a run of (`null` for a crawl that is not one).
    #[serde(default)]
    pub source_id: Option<String>,
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
            source_id: r.request.sync.as_ref().map(|s| s.source.to_string()),
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

/// One source: a website the assistant keeps in its knowledge base.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceView {
    /// Its id (`src-` and 16 hex digits).
    pub source_id: String,
    /// The normalized root URL.
    pub url: String,
    /// Link hops from the root its runs follow.
    pub max_depth: u64,
    /// Cap on pages per run.
    pub max_pages: u64,
    /// Glob patterns a page's path must match one of (empty: every page).
    pub include: Vec<String>,
    /// Glob patterns that keep a page out.
    pub exclude: Vec<String>,
    /// When runs use the browser.
    pub render: RenderMode,
    /// Whether runs read the site's sitemaps.
    pub sitemap: SitemapMode,
    /// When runs start on their own: `none`, `daily`, `weekly`, or
    /// `{"cron", "timeZone"}` / `{"every", "timeZone"}`.
    pub schedule: Schedule,
    /// When the source was added.
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    /// When the next scheduled run is due (`null` without a schedule).
    #[serde(with = "time::serde::rfc3339::option")]
    pub next_sync_at: Option<OffsetDateTime>,
    /// The latest run, with its diff (`null` before the first).
    pub last_sync: Option<CrawlJob>,
}

/// Answer to `GET /assistants/{assistant_id}/sources`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceList {
    /// The assistant's sources, in id order.
    pub sources: Vec<SourceView>,
}

/// One line of `GET /assistants/{assistant_id}/crawl/{crawl_job_id}/changes`: a page the run
/// added, changed or removed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PageChangeView {
    /// The page URL.
    pub url: String,
    /// `added`, `changed` or `removed`.
    pub change: String,
    /// Why it was removed (`http_404`, `not_reached`, ...); `null` otherwise.
    pub reason: Option<String>,
}

/// Answer to `GET /assistants/{assistant_id}/crawl/{crawl_job_id}/changes`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeList {
    /// The pages the run added, changed or removed (empty for a crawl that is not a run of a
    /// source, or a run still going).
    pub changes: Vec<PageChangeView>,
    /// Pass it back as `nextToken` for the next page; `null` on the last page.
    pub next_token: Option<String>,
}

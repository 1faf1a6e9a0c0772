//! What flows between the states: the handlers' inputs and outputs (JSON, snake_case).

use crawl_core::{CrawlRequest, JobId, StartCrawl};
use serde::{Deserialize, Serialize};
use url::Url;

/// The execution input, and the init handler's event. An unknown key, here or in `request`,
/// refuses the event (`KbCrawl.InvalidInput`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(deny_unknown_fields)]
pub struct InitEvent {
    /// The job's id (a fresh one when absent).
    #[serde(default)]
    pub job_id: Option<JobId>,
    /// The owning assistant (the API Gateway trigger sets it from the path); overrides the
    /// request's `assistantId`.
    #[serde(default)]
    pub assistant_id: Option<String>,
    /// What to crawl: the API body (`url`, `maxDepth`, `maxPages`, `render`), the caller's
    /// part only; the network policy, robots.txt, crawl delay and rate are the worker's
    /// ([`Services::policy`](super::Services::policy)). Absent for a scheduled sync.
    #[serde(default)]
    pub request: StartCrawl,
    /// A run of a source started by its EventBridge Scheduler schedule (instead of a body).
    #[serde(default, rename = "scheduledSync", alias = "scheduled_sync")]
    pub scheduled_sync: Option<ScheduledSync>,
}

/// The input of a source's schedule: which source, and the time the schedule fired
/// (EventBridge Scheduler's `<aws.scheduler.scheduled-time>`), from which the run's job id is
/// derived, so a retried or re-delivered invocation starts the same run, never a second.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ScheduledSync {
    /// The source.
    pub source_id: crawl_core::SourceId,
    /// Its assistant.
    pub assistant_id: String,
    /// When the schedule fired.
    #[serde(default)]
    pub scheduled_time: String,
}

impl ScheduledSync {
    /// The run's job id: `job-` and 16 hex digits of the SHA-256 of source and time.
    pub fn job_id(&self) -> JobId {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(self.source_id.as_str().as_bytes());
        h.update([0u8]);
        h.update(self.scheduled_time.as_bytes());
        let id = format!("job-{}", hex::encode(&h.finalize()[..8]));
        id.parse().unwrap_or_default()
    }
}

impl InitEvent {
    /// An event for the caller's part of `request` (url, depth, pages, render) with a chosen
    /// job id; the owning assistant is the request's.
    pub fn new(job_id: JobId, request: &CrawlRequest) -> Self {
        InitEvent {
            job_id: Some(job_id),
            assistant_id: request.assistant_id.clone(),
            request: StartCrawl::from(request),
            scheduled_sync: None,
        }
    }
}

/// Where the crawl stands between levels: the output of init and plan, the input of the map,
/// plan and finalise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LevelState {
    /// The job.
    pub job_id: JobId,
    /// The bucket holding the level lists (the sink's).
    pub bucket: String,
    /// The current depth.
    pub level: u32,
    /// The S3 key of the current level's list of [`PageItem`]s (a JSON array).
    pub level_key: String,
    /// Whether the current level has any page.
    pub has_next: bool,
}

/// One page of a level: one item of the Distributed Map, the scrape handler's event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PageItem {
    /// The job.
    pub job_id: JobId,
    /// The admitted, normalized URL.
    pub url: Url,
    /// Its depth.
    pub depth: u32,
    /// Its sitemap `<lastmod>`, when a sitemap listed it (a run of a source may then skip
    /// the request for a page not changed since it was last checked).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "time::serde::rfc3339::option"
    )]
    pub lastmod: Option<time::OffsetDateTime>,
}

/// A batch of one level's pages: one item of the Distributed Map as its `ItemBatcher`
/// delivers it (`{"Items": [...], "BatchInput": {...}}`), the scrape handler's event. One
/// Lambda invocation (in one Express child execution) scrapes them one after another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PageBatch {
    /// The pages, all of the same job and level.
    #[serde(rename = "Items")]
    pub items: Vec<PageItem>,
    /// The `ItemBatcher`'s `BatchInput` (unused; accepted so a deployment may add one).
    #[serde(
        rename = "BatchInput",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub batch_input: Option<serde_json::Value>,
    /// When the Express child execution scraping this batch started
    /// (`$$.Execution.StartTime`, passed by the ScrapePage Task's `Parameters`): the batch's
    /// time budget runs from it, retries included. Absent (tests, an older definition): from
    /// the invocation's start.
    #[serde(
        rename = "ExecutionStartTime",
        default,
        with = "time::serde::rfc3339::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub execution_start: Option<time::OffsetDateTime>,
}

impl PageBatch {
    /// A batch of `items`.
    pub fn new(items: Vec<PageItem>) -> Self {
        PageBatch {
            items,
            batch_input: None,
            execution_start: None,
        }
    }

    /// The batch, scraped by an execution that started at `at`.
    pub fn started_at(mut self, at: time::OffsetDateTime) -> Self {
        self.execution_start = Some(at);
        self
    }
}

/// The scrape handler's event: a batch (what the deployed state machine sends), or one
/// page (an execution started by an earlier version of the state machine).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ScrapeEvent {
    /// A batch from the map's `ItemBatcher`.
    Batch(PageBatch),
    /// A single page.
    Page(PageItem),
}

impl ScrapeEvent {
    /// The pages of the event.
    pub fn into_items(self) -> Vec<PageItem> {
        self.into_parts().0
    }

    /// The pages of the event and when its execution started, if it says.
    pub fn into_parts(self) -> (Vec<PageItem>, Option<time::OffsetDateTime>) {
        match self {
            ScrapeEvent::Batch(b) => (b.items, b.execution_start),
            ScrapeEvent::Page(p) => (vec![p], None),
        }
    }
}

/// What the scrape handler returns to the map for a batch (the pages' reports, links
/// included, are in the batch's report object in S3 for the plan step).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BatchSummary {
    /// Pages in the batch.
    pub pages: u32,
    /// Of them stored.
    pub stored: u32,
    /// Of them skipped, by reason.
    pub skipped: std::collections::BTreeMap<String, u32>,
    /// Whether any page had links.
    pub has_links: bool,
}

/// What the scrape handler learnt about one page; stored in S3, in its batch's report, for
/// the plan step (the map gets a [`BatchSummary`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PageReport {
    /// The page.
    pub url: Url,
    /// `stored`, or the skip reason.
    pub outcome: String,
    /// Links to admit at the next depth.
    #[serde(default)]
    pub links: Vec<Url>,
    /// Whether `links` is not empty.
    pub has_links: bool,
    /// In-scope links of the page beyond the request's `max_links_per_page` (dropped, and
    /// counted as excluded `links_per_page` by the plan step).
    #[serde(default)]
    pub links_over_cap: u64,
}

/// The mark-failed handler's event: the failing state's input plus the caught error.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MarkFailedEvent {
    /// The job.
    pub job_id: JobId,
    /// What Step Functions caught (`{"Error": ..., "Cause": ...}`).
    #[serde(default)]
    pub error: Option<CaughtError>,
}

/// An error caught by a `Catch` (`ResultPath: $.error`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CaughtError {
    /// The `errorType` (or a `States.*` name).
    #[serde(rename = "Error", default)]
    pub error: String,
    /// The cause: for a Lambda error, the JSON `{errorType, errorMessage}`.
    #[serde(rename = "Cause", default)]
    pub cause: String,
}

impl CaughtError {
    /// A one-line reason for the job record: the handler's message when the cause is a
    /// Lambda error body, else `Error: Cause`.
    pub fn reason(&self) -> String {
        let msg = serde_json::from_str::<serde_json::Value>(&self.cause)
            .ok()
            .and_then(|v| {
                v.get("errorMessage")
                    .and_then(|m| m.as_str())
                    .map(str::to_owned)
            });
        match msg {
            Some(m) => m,
            None if self.cause.is_empty() => self.error.clone(),
            None => format!("{}: {}", self.error, self.cause),
        }
    }
}

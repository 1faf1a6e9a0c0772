//! Job identity, status and progress.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::error::{Error, Result};
use crate::request::CrawlRequest;

/// A crawl job's id: `job-` followed by 16 lowercase hex digits. Safe as a path segment and
/// an S3 key segment by construction (parsing refuses anything else).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct JobId(String);

impl JobId {
    /// A fresh random id.
    pub fn new() -> Self {
        JobId(format!("job-{:016x}", rand::random::<u64>()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for JobId {
    fn default() -> Self {
        Self::new()
    }
}

impl FromStr for JobId {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let ok = s.len() > 4
            && s.len() <= 64
            && s.starts_with("job-")
            && s[4..]
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if ok {
            Ok(JobId(s.to_owned()))
        } else {
            Err(Error::invalid(format!(
                "crawlJobId: '{}' is not a job id (job- followed by lowercase letters, digits, '-')",
                s.chars().take(80).collect::<String>()
            )))
        }
    }
}

impl TryFrom<String> for JobId {
    type Error = Error;
    fn try_from(s: String) -> Result<Self> {
        s.parse()
    }
}

impl From<JobId> for String {
    fn from(j: JobId) -> String {
        j.0
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JobId({})", self.0)
    }
}

/// Where a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobStatus {
    /// Pages are being crawled.
    Running,
    /// Every admitted page was processed.
    Completed,
    /// The job stopped early; [`JobRecord::failure`] says why.
    Failed,
}

impl JobStatus {
    /// Whether the job has ended.
    pub fn is_final(self) -> bool {
        !matches!(self, JobStatus::Running)
    }

    /// `RUNNING`, `COMPLETED` or `FAILED`.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Running => "RUNNING",
            JobStatus::Completed => "COMPLETED",
            JobStatus::Failed => "FAILED",
        }
    }
}

impl fmt::Display for JobStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Counters of a job. `pages_total` = pages admitted so far = min(maxPages, unique in-scope
/// URLs found); every admitted page ends stored or skipped, so a completed job has
/// `pages_processed == pages_total`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Progress {
    /// Admitted pages that ended (stored or skipped).
    pub pages_processed: u64,
    /// Pages admitted so far.
    pub pages_total: u64,
    /// Pages stored as documents.
    pub stored: u64,
    /// Admitted pages that were skipped, by stable reason code.
    pub skipped: BTreeMap<String, u64>,
    /// URLs found in scope but never admitted, by reason (`robots_disallowed`, `max_pages`,
    /// `links_per_page`, `trap_*`, `pattern`...), and sitemap entries and files that were not
    /// used (`sitemap_*`). They do not count in the pages. Until the page
    /// budget is spent each URL counts once (the job keeps a dedup record of it). Past the
    /// budget the job keeps no record, so `max_pages` counts a URL once per page (per
    /// level, serverless) that links to it; `links_per_page` counts the in-scope links a
    /// page had beyond `max_links_per_page`, on every page.
    pub excluded: BTreeMap<String, u64>,
    /// What a run of a source changed in the knowledge base (all zero for a crawl that is
    /// not a run of a source; set when the run finalises).
    #[serde(default)]
    pub changes: ChangeCounts,
}

/// The diff of a run: pages added, changed, unchanged and removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ChangeCounts {
    /// Pages new in this run.
    pub added: u64,
    /// Pages whose markdown changed.
    pub changed: u64,
    /// Pages fetched (or confirmed by `304`) with the same markdown.
    pub unchanged: u64,
    /// Pages removed from the knowledge base.
    pub removed: u64,
}

impl ChangeCounts {
    /// Counts of `added`, `changed`, `unchanged`, `removed`.
    pub fn new(added: u64, changed: u64, unchanged: u64, removed: u64) -> Self {
        ChangeCounts {
            added,
            changed,
            unchanged,
            removed,
        }
    }
}

/// Where a completed job's hand-off to the knowledge base stands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IngestionState {
    /// Not handed over yet: the job is running, a hand-off is in progress, or the job
    /// failed before it had anything to hand over.
    #[default]
    Pending,
    /// The knowledge base accepted the job's diff.
    Delivered,
    /// The last hand-off failed; [`Ingestion::reason`] says why. It can be retried.
    Failed,
}

impl IngestionState {
    /// `pending`, `delivered` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            IngestionState::Pending => "pending",
            IngestionState::Delivered => "delivered",
            IngestionState::Failed => "failed",
        }
    }
}

impl fmt::Display for IngestionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A job's hand-off to the knowledge base: its state, why the last attempt failed, and how
/// many attempts were made.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Ingestion {
    /// Where the hand-off stands.
    pub state: IngestionState,
    /// Why the last attempt failed (`None` unless `state` is `failed`).
    #[serde(default)]
    pub reason: Option<String>,
    /// Hand-offs started so far.
    #[serde(default)]
    pub attempts: u32,
    /// While an attempt is in progress: until when (epoch seconds) it holds the hand-off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_until: Option<i64>,
}

impl Ingestion {
    /// Whether an attempt holds the hand-off at `now` (epoch seconds).
    pub fn in_progress(&self, now: i64) -> bool {
        self.lease_until.is_some_and(|until| until > now)
    }
}

/// The answer to [`JobStore::begin_ingestion`](crate::JobStore::begin_ingestion): who may
/// hand a completed job's diff to the knowledge base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum IngestionClaim {
    /// This caller, for attempt number `attempt`: call the ingestor, then
    /// [`JobStore::end_ingestion`](crate::JobStore::end_ingestion).
    Mine {
        /// The attempt's number (1 for the first).
        attempt: u32,
    },
    /// Already delivered: nothing to do.
    Delivered,
    /// Another attempt holds the hand-off (until its lease ends).
    Busy,
    /// The job is not COMPLETED: nothing to hand over.
    NotCompleted,
}

/// How one admitted page ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageOutcome {
    /// Stored as a document.
    Stored,
    /// Skipped with a stable reason code.
    Skipped(String),
}

/// Everything a job store keeps about one job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct JobRecord {
    /// The job's id.
    pub id: JobId,
    /// The owning assistant, when run behind the job API.
    pub assistant_id: Option<String>,
    /// What was asked.
    pub request: CrawlRequest,
    /// Where it stands.
    pub status: JobStatus,
    /// Why it failed, when it did.
    pub failure: Option<String>,
    /// Counters.
    pub progress: Progress,
    /// When it started.
    #[serde(with = "time::serde::rfc3339")]
    pub started_at: OffsetDateTime,
    /// When it ended.
    #[serde(with = "time::serde::rfc3339::option", default)]
    pub completed_at: Option<OffsetDateTime>,
    /// The hand-off of the job's diff to the knowledge base.
    #[serde(default)]
    pub ingestion: Ingestion,
}

impl JobRecord {
    /// Reserves one page of the budget: `true` while `pages_total < max_pages`.
    pub fn try_reserve_page(&mut self) -> bool {
        if self.progress.pages_total < u64::from(self.request.max_pages) {
            self.progress.pages_total += 1;
            true
        } else {
            false
        }
    }

    /// Counts how an admitted page ended; never lets `pages_processed` pass `pages_total`.
    pub fn apply_outcome(&mut self, outcome: &PageOutcome) {
        if self.progress.pages_processed >= self.progress.pages_total {
            return;
        }
        self.progress.pages_processed += 1;
        match outcome {
            PageOutcome::Stored => self.progress.stored += 1,
            PageOutcome::Skipped(reason) => {
                *self.progress.skipped.entry(reason.clone()).or_default() += 1;
            }
        }
    }

    /// Counts a URL found but not admitted.
    pub fn add_excluded(&mut self, reason: &str) {
        self.add_excluded_n(reason, 1);
    }

    /// Counts `n` URLs found but not admitted, for one reason.
    pub fn add_excluded_n(&mut self, reason: &str, n: u64) {
        if n > 0 {
            *self.progress.excluded.entry(reason.to_owned()).or_default() += n;
        }
    }

    /// Moves a running job to a final status; `false` (and no change) when it had ended.
    pub fn try_finish(
        &mut self,
        status: JobStatus,
        failure: Option<String>,
        now: OffsetDateTime,
    ) -> bool {
        if self.status.is_final() || !status.is_final() {
            return false;
        }
        self.status = status;
        self.failure = failure;
        self.completed_at = Some(now);
        true
    }

    /// Takes the job's hand-off for an attempt until `now + lease_secs` (epoch seconds):
    /// only a COMPLETED job not delivered and not held by a live attempt.
    pub fn try_begin_ingestion(&mut self, now: i64, lease_secs: u64) -> IngestionClaim {
        if self.status != JobStatus::Completed {
            return IngestionClaim::NotCompleted;
        }
        if self.ingestion.state == IngestionState::Delivered {
            return IngestionClaim::Delivered;
        }
        if self.ingestion.in_progress(now) {
            return IngestionClaim::Busy;
        }
        let lease = i64::try_from(lease_secs).unwrap_or(i64::MAX / 2);
        self.ingestion.attempts = self.ingestion.attempts.saturating_add(1);
        self.ingestion.lease_until = Some(now.saturating_add(lease));
        IngestionClaim::Mine {
            attempt: self.ingestion.attempts,
        }
    }

    /// Ends the attempt [`try_begin_ingestion`](Self::try_begin_ingestion) started:
    /// `delivered`, or `failed` with `failure` as the reason; the hand-off is released.
    /// A delivered job stays delivered.
    pub fn end_ingestion(&mut self, failure: Option<String>) {
        self.ingestion.lease_until = None;
        if self.ingestion.state == IngestionState::Delivered {
            return;
        }
        match failure {
            None => {
                self.ingestion.state = IngestionState::Delivered;
                self.ingestion.reason = None;
            }
            Some(reason) => {
                self.ingestion.state = IngestionState::Failed;
                self.ingestion.reason = Some(reason);
            }
        }
    }

    /// A new running job for `request`.
    pub fn new(id: JobId, request: CrawlRequest, started_at: OffsetDateTime) -> Self {
        JobRecord {
            id,
            assistant_id: request.assistant_id.clone(),
            request,
            status: JobStatus::Running,
            failure: None,
            progress: Progress::default(),
            started_at,
            completed_at: None,
            ingestion: Ingestion::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ids_are_safe_path_segments() {
        let id = JobId::new();
        assert!(id.as_str().starts_with("job-") && id.as_str().len() == 20);
        assert_eq!(id.as_str().parse::<JobId>().unwrap(), id);
        for bad in [
            "", "job-", "../etc", "job-../x", "job-A", "job-a/b", "job-a b",
        ] {
            assert!(bad.parse::<JobId>().is_err(), "{bad}");
        }
        assert_eq!(
            serde_json::to_string(&JobStatus::Completed).unwrap(),
            "\"COMPLETED\""
        );
    }
}

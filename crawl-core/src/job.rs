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

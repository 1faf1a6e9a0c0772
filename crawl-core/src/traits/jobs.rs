use std::collections::BTreeMap;
use std::fmt::{Debug, Display};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use super::Capabilities;
use crate::error::Result;
use crate::job::{ChangeCounts, IngestionClaim, JobId, JobRecord, JobStatus, PageOutcome};

/// Keeps job records and the counters that make page caps exact.
///
/// # Contract
/// - `create` fails with [`ErrorKind::Conflict`](crate::ErrorKind::Conflict) if the id exists.
/// - `reserve_page` atomically increments `pages_total` and returns `true` only while
///   `pages_total < max_pages` of the job's request: under any concurrency, in any number of
///   processes when shared, no more than `max_pages` reservations succeed.
/// - `record_page` adds one to `pages_processed` and to `stored` or the skip reason; it never
///   lets `pages_processed` exceed `pages_total`.
/// - `record_excluded` counts a URL found but never admitted, by reason;
///   `record_excluded_many` counts `n` of them for one reason and
///   `record_excluded_counts` adds several counts at once, as one change when the store
///   can (the default calls `record_excluded` once per unit).
/// - `finish` moves a job from `Running` to a final status only; finishing an already
///   finished job is a no-op that returns `false`.
/// - `record_changes` sets the job's diff counters (a run of a source, as it finalises);
///   setting them again replaces them.
/// - `begin_ingestion` atomically takes a COMPLETED job's hand-off to the knowledge base
///   for `lease` (under any concurrency, one caller gets [`IngestionClaim::Mine`] until it
///   calls `end_ingestion` or the lease ends), counting one more attempt; a delivered job
///   answers `Delivered`, a held one `Busy`, a job not COMPLETED `NotCompleted`.
///   `end_ingestion` records the attempt's outcome (`delivered`, or `failed` with the
///   reason) and releases the hand-off; a delivered job never goes back to failed.
/// - `delete` removes the record; unknown ids are [`ErrorKind::NotFound`](crate::ErrorKind).
#[async_trait]
pub trait JobStore: Debug + Display + Send + Sync + 'static {
    /// Creates a job record.
    async fn create(&self, record: &JobRecord) -> Result<()>;
    /// The job's record.
    async fn get(&self, job: &JobId) -> Result<Option<JobRecord>>;
    /// Every job, or those of one assistant, newest first.
    async fn list(&self, assistant_id: Option<&str>) -> Result<Vec<JobRecord>>;
    /// Reserves one page of the job's budget.
    async fn reserve_page(&self, job: &JobId) -> Result<bool>;
    /// Records how an admitted page ended.
    async fn record_page(&self, job: &JobId, outcome: &PageOutcome) -> Result<()>;
    /// Counts a URL that was found but not admitted.
    async fn record_excluded(&self, job: &JobId, reason: &str) -> Result<()>;
    /// Counts `n` URLs not admitted for one reason (sitemap entries come by the thousand):
    /// [`record_excluded_counts`](Self::record_excluded_counts) with that one count.
    async fn record_excluded_many(&self, job: &JobId, reason: &str, n: u64) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let counts = BTreeMap::from([(reason.to_owned(), n)]);
        self.record_excluded_counts(job, &counts).await
    }
    /// Adds `counts` (reason → URLs) to the job's exclusion counts.
    async fn record_excluded_counts(
        &self,
        job: &JobId,
        counts: &BTreeMap<String, u64>,
    ) -> Result<()> {
        for (reason, n) in counts {
            for _ in 0..*n {
                self.record_excluded(job, reason).await?;
            }
        }
        Ok(())
    }
    /// Ends a running job; `false` when it had already ended.
    async fn finish(&self, job: &JobId, status: JobStatus, failure: Option<String>)
        -> Result<bool>;
    /// Sets the diff counters of a run of a source. The default refuses: a store that runs
    /// sources implements it.
    async fn record_changes(&self, job: &JobId, changes: &ChangeCounts) -> Result<()> {
        let _ = (job, changes);
        Err(crate::Error::new(
            crate::ErrorKind::Unsupported,
            format!("{self} cannot record a run's changes"),
        ))
    }
    /// Takes the job's hand-off to the knowledge base for `lease` (see the contract).
    async fn begin_ingestion(&self, job: &JobId, lease: Duration) -> Result<IngestionClaim>;
    /// Ends the hand-off taken by [`begin_ingestion`](Self::begin_ingestion): delivered
    /// when `failure` is `None`, else failed for that reason.
    async fn end_ingestion(&self, job: &JobId, failure: Option<String>) -> Result<()>;
    /// Removes the job's record.
    async fn delete(&self, job: &JobId) -> Result<()>;

    /// What this store can do.
    fn capabilities(&self) -> Capabilities {
        Capabilities::LOCAL
    }
}

/// Shared job store handle.
pub type DynJobStore = Arc<dyn JobStore>;

#[async_trait]
impl<T: JobStore + ?Sized> JobStore for Arc<T> {
    async fn create(&self, record: &JobRecord) -> Result<()> {
        (**self).create(record).await
    }
    async fn get(&self, job: &JobId) -> Result<Option<JobRecord>> {
        (**self).get(job).await
    }
    async fn list(&self, assistant_id: Option<&str>) -> Result<Vec<JobRecord>> {
        (**self).list(assistant_id).await
    }
    async fn reserve_page(&self, job: &JobId) -> Result<bool> {
        (**self).reserve_page(job).await
    }
    async fn record_page(&self, job: &JobId, outcome: &PageOutcome) -> Result<()> {
        (**self).record_page(job, outcome).await
    }
    async fn record_excluded(&self, job: &JobId, reason: &str) -> Result<()> {
        (**self).record_excluded(job, reason).await
    }
    async fn record_excluded_many(&self, job: &JobId, reason: &str, n: u64) -> Result<()> {
        (**self).record_excluded_many(job, reason, n).await
    }
    async fn record_excluded_counts(
        &self,
        job: &JobId,
        counts: &BTreeMap<String, u64>,
    ) -> Result<()> {
        (**self).record_excluded_counts(job, counts).await
    }
    async fn finish(
        &self,
        job: &JobId,
        status: JobStatus,
        failure: Option<String>,
    ) -> Result<bool> {
        (**self).finish(job, status, failure).await
    }
    async fn record_changes(&self, job: &JobId, changes: &ChangeCounts) -> Result<()> {
        (**self).record_changes(job, changes).await
    }
    async fn begin_ingestion(&self, job: &JobId, lease: Duration) -> Result<IngestionClaim> {
        (**self).begin_ingestion(job, lease).await
    }
    async fn end_ingestion(&self, job: &JobId, failure: Option<String>) -> Result<()> {
        (**self).end_ingestion(job, failure).await
    }
    async fn delete(&self, job: &JobId) -> Result<()> {
        (**self).delete(job).await
    }
    fn capabilities(&self) -> Capabilities {
        (**self).capabilities()
    }
}

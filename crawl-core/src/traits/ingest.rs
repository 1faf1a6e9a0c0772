use std::fmt::{self, Debug, Display};
use std::sync::Arc;

use async_trait::async_trait;

use crate::error::Result;
use crate::job::JobRecord;
use crate::source::RunDiff;

/// Hands a finished job's documents to a knowledge base.
///
/// # Contract
/// - `on_completed` is called once per completed job, after every document is stored, with
///   the job's diff: the documents it added or changed (`upserts`) and those it removed
///   (`deletions`, already gone from the sink). A crawl that is not a run of a source has
///   every document in `upserts`. The diff is read a page at a time
///   ([`RunDiff::pages`]): an implementation consumes it page by page (it may walk it more
///   than once), so its memory does not grow with the job. An error leaves the job
///   COMPLETED and is reported to the caller. A second delivery of the same diff must leave
///   the knowledge base as one did.
/// - `on_deleted` is called when a job is deleted and must remove what `on_completed` added;
///   both are idempotent. For a run of a source (`job.request.sync` set) it removes every
///   document of the source: the runs of a source share its documents, and deleting one run
///   (or the source) takes them all out of the knowledge base.
#[async_trait]
pub trait Ingestor: Debug + Display + Send + Sync + 'static {
    /// A job completed with these documents.
    async fn on_completed(&self, job: &JobRecord, diff: &RunDiff<'_>) -> Result<()>;
    /// A job was deleted.
    async fn on_deleted(&self, job: &JobRecord) -> Result<()>;

    /// The MIME types of linked documents (PDF, DOCX: see [`crate::linked`]) this
    /// ingestor takes as documents of their own type, besides markdown. A crawl that asks
    /// for linked documents passes only these through; the default, none, keeps every
    /// linked file skipped as `not_html`. A diff's document is a linked one when
    /// [`LinkedType::sniff`](crate::linked::LinkedType::sniff) of its stored bytes says so.
    fn accepted_types(&self) -> &'static [&'static str] {
        &[]
    }
}

/// Shared ingestor handle.
pub type DynIngestor = Arc<dyn Ingestor>;

/// An ingestor that does nothing (the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopIngestor;

impl Display for NoopIngestor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NoopIngestor")
    }
}

#[async_trait]
impl Ingestor for NoopIngestor {
    async fn on_completed(&self, _job: &JobRecord, _diff: &RunDiff<'_>) -> Result<()> {
        Ok(())
    }
    async fn on_deleted(&self, _job: &JobRecord) -> Result<()> {
        Ok(())
    }
}

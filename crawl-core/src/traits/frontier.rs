use std::fmt::{Debug, Display};
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use url::Url;

use super::Capabilities;
use crate::error::Result;
use crate::job::JobId;

/// One admitted page waiting to be crawled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FrontierEntry {
    /// Normalized URL.
    pub url: Url,
    /// Link hops from the root.
    pub depth: u32,
    /// The page's `<lastmod>` from a sitemap, when it came from one (carried for a later
    /// sync to skip unchanged pages).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "time::serde::rfc3339::option"
    )]
    pub lastmod: Option<time::OffsetDateTime>,
}

impl FrontierEntry {
    /// An entry.
    pub fn new(url: Url, depth: u32) -> Self {
        FrontierEntry {
            url,
            depth,
            lastmod: None,
        }
    }

    /// The entry with a sitemap `<lastmod>`.
    pub fn with_lastmod(mut self, lastmod: Option<time::OffsetDateTime>) -> Self {
        self.lastmod = lastmod;
        self
    }
}

/// The queue of admitted pages of each job.
///
/// # Contract
/// - `push` appends entries; `pop` leases the oldest entry of the lowest depth (breadth
///   first), and a leased entry is not handed out again until `requeue_leased`.
/// - `complete` ends a lease for good; it is idempotent.
/// - `requeue_leased` puts every leased, uncompleted entry of a job back (used when a crashed
///   run resumes); with a durable frontier nothing pushed and not completed is lost.
/// - `pending` counts queued plus leased entries.
/// - Jobs are isolated; `clear_job` removes one job's entries only.
#[async_trait]
pub trait Frontier: Debug + Display + Send + Sync + 'static {
    /// Queues entries.
    async fn push(&self, job: &JobId, entries: Vec<FrontierEntry>) -> Result<()>;
    /// Leases the next entry, if any.
    async fn pop(&self, job: &JobId) -> Result<Option<FrontierEntry>>;
    /// Ends the lease of `url`.
    async fn complete(&self, job: &JobId, url: &Url) -> Result<()>;
    /// Queues again every leased, uncompleted entry; returns how many.
    async fn requeue_leased(&self, job: &JobId) -> Result<usize>;
    /// Queued plus leased entries.
    async fn pending(&self, job: &JobId) -> Result<usize>;
    /// Removes every entry of `job`.
    async fn clear_job(&self, job: &JobId) -> Result<()>;

    /// What this frontier can do.
    fn capabilities(&self) -> Capabilities {
        Capabilities::LOCAL
    }
}

/// Shared frontier handle.
pub type DynFrontier = Arc<dyn Frontier>;

#[async_trait]
impl<T: Frontier + ?Sized> Frontier for Arc<T> {
    async fn push(&self, job: &JobId, entries: Vec<FrontierEntry>) -> Result<()> {
        (**self).push(job, entries).await
    }
    async fn pop(&self, job: &JobId) -> Result<Option<FrontierEntry>> {
        (**self).pop(job).await
    }
    async fn complete(&self, job: &JobId, url: &Url) -> Result<()> {
        (**self).complete(job, url).await
    }
    async fn requeue_leased(&self, job: &JobId) -> Result<usize> {
        (**self).requeue_leased(job).await
    }
    async fn pending(&self, job: &JobId) -> Result<usize> {
        (**self).pending(job).await
    }
    async fn clear_job(&self, job: &JobId) -> Result<()> {
        (**self).clear_job(job).await
    }
    fn capabilities(&self) -> Capabilities {
        (**self).capabilities()
    }
}

use std::fmt::{Debug, Display};
use std::sync::Arc;

use async_trait::async_trait;

use super::Capabilities;
use crate::error::Result;
use crate::job::JobId;

/// Remembers which URL keys a job has seen, for a TTL window (24 h by default).
///
/// # Contract
/// - `insert(job, key)` is an atomic insert-if-absent: it returns `true` for exactly one
///   caller per `(job, key)` within the TTL window, however many call at once, in however
///   many processes when [`Capabilities::shared`] is set.
/// - A key older than the TTL counts as absent (the window is enforced on insert, not by
///   eventual deletion).
/// - `insert_many` behaves like `insert` on each key in order and returns one flag per key;
///   a key repeated within the batch wins only once.
/// - Jobs are isolated: keys of one job never affect another; `clear_job` removes one job's
///   keys only.
#[async_trait]
pub trait DedupStore: Debug + Display + Send + Sync + 'static {
    /// Inserts `key` if absent; `true` when this call inserted it.
    async fn insert(&self, job: &JobId, key: &str) -> Result<bool>;

    /// Inserts each key if absent; one flag per key.
    async fn insert_many(&self, job: &JobId, keys: &[String]) -> Result<Vec<bool>>;

    /// Whether `key` is present (within the TTL window).
    async fn contains(&self, job: &JobId, key: &str) -> Result<bool>;

    /// Removes every key of `job`.
    async fn clear_job(&self, job: &JobId) -> Result<()>;

    /// What this store can do.
    fn capabilities(&self) -> Capabilities {
        Capabilities::LOCAL
    }
}

/// Shared dedup handle.
pub type DynDedupStore = Arc<dyn DedupStore>;

/// Conveniences over any [`DedupStore`].
#[async_trait]
pub trait DedupStoreExt: DedupStore {
    /// The subset of `keys` this call inserted, in order.
    async fn insert_new(&self, job: &JobId, keys: &[String]) -> Result<Vec<String>> {
        let flags = self.insert_many(job, keys).await?;
        Ok(keys
            .iter()
            .zip(flags)
            .filter(|(_, f)| *f)
            .map(|(k, _)| k.clone())
            .collect())
    }
}

impl<T: DedupStore + ?Sized> DedupStoreExt for T {}

#[async_trait]
impl<T: DedupStore + ?Sized> DedupStore for Arc<T> {
    async fn insert(&self, job: &JobId, key: &str) -> Result<bool> {
        (**self).insert(job, key).await
    }
    async fn insert_many(&self, job: &JobId, keys: &[String]) -> Result<Vec<bool>> {
        (**self).insert_many(job, keys).await
    }
    async fn contains(&self, job: &JobId, key: &str) -> Result<bool> {
        (**self).contains(job, key).await
    }
    async fn clear_job(&self, job: &JobId) -> Result<()> {
        (**self).clear_job(job).await
    }
    fn capabilities(&self) -> Capabilities {
        (**self).capabilities()
    }
}

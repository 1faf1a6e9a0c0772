use std::fmt::{Debug, Display};
use std::sync::Arc;

use async_trait::async_trait;

use super::Capabilities;
use url::Url;

use crate::error::{Error, ErrorKind, Result};
use crate::job::JobId;
use crate::page::{Document, StoredDoc};

/// Stores documents as `{job-id}/{domain}/{page-title}.md` plus a per-job manifest.
///
/// # Contract
/// - `put` writes [`Document::to_file_bytes`] atomically (a reader never sees half a file) at
///   the first key of [`document_keys`](crate::keys::document_keys) not held by another URL
///   of the same job, else at the second; it returns where.
/// - `put` is idempotent: the same document put twice lands at the same key with the same
///   bytes, and the manifest lists it once.
/// - `get` returns the stored bytes of a key.
/// - `list_page` pages through the job's documents in an order the backend chooses and keeps
///   (memory and filesystem: by URL; S3: by document key): starting right after
///   the cursor `after` (`None`: from the start), at most `limit` documents (at least one is
///   asked for: `0` counts as `1`), and `next`, the cursor of the following page, `None`
///   after the last. A page may hold fewer than `limit` documents (even none) while `next`
///   is set. A listing followed to its end returns every document of the job once, none
///   twice, whatever the page size; a document put or removed during the listing may or may
///   not appear. A cursor is opaque: only one this sink returned for this job may be given
///   back. The memory a page takes does not grow with the job.
/// - `list` (provided) follows `list_page` to the end: only for a caller that truly needs
///   every document at once.
/// - `delete_job` removes every object of the job and nothing of any other job; it is safe
///   to re-run and returns how many documents it removed.
/// - `remove` removes one URL's document and its manifest entry (nothing else of the job),
///   returns what was stored, and is safe to re-run (`None` the second time). A later `put`
///   of that URL may take its old key again.
/// - `delete_aux` removes one auxiliary object; a missing one is not an error.
#[async_trait]
pub trait Sink: Debug + Display + Send + Sync + 'static {
    /// Stores one document.
    async fn put(&self, doc: &Document) -> Result<StoredDoc>;
    /// Bytes at `key` (relative to the sink root), if any.
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>>;
    /// One page of the job's stored documents (see the contract).
    async fn list_page(&self, job: &JobId, after: Option<&str>, limit: usize) -> Result<DocPage>;

    /// Every stored document of the job, in [`list_page`](Self::list_page) order. Its memory
    /// grows with the job: a caller that can work page by page uses `list_page`.
    async fn list(&self, job: &JobId) -> Result<Vec<StoredDoc>> {
        let mut out = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let page = self.list_page(job, after.as_deref(), LIST_PAGE).await?;
            out.extend(page.docs);
            match page.next {
                Some(n) => after = Some(n),
                None => return Ok(out),
            }
        }
    }
    /// Removes the job's documents and manifest.
    async fn delete_job(&self, job: &JobId) -> Result<usize>;

    /// Overwrites the document at an existing key with new markdown (used by template
    /// stripping when a crawl finalises). The default re-puts the document.
    async fn replace(&self, stored: &StoredDoc, doc: &Document) -> Result<StoredDoc> {
        let _ = stored;
        self.put(doc).await
    }

    /// Removes the document `url` holds in `job`; returns it, `None` when there was none.
    /// The default refuses: a sink that keeps sources in sync implements it.
    async fn remove(&self, job: &JobId, url: &Url) -> Result<Option<StoredDoc>> {
        let _ = (job, url);
        Err(Error::new(
            ErrorKind::Unsupported,
            format!("{self} cannot remove one document"),
        ))
    }

    /// Removes the auxiliary object `name` of `job` (see [`put_aux`](Self::put_aux)).
    async fn delete_aux(&self, job: &JobId, name: &str) -> Result<()> {
        let _ = (job, name);
        Err(Error::new(
            ErrorKind::Unsupported,
            format!("{self} cannot delete an auxiliary object"),
        ))
    }

    /// Called once when a job's writers are done (the engine calls it as the job completes):
    /// a sink that keeps a summary manifest writes it here. Idempotent. The default does
    /// nothing.
    async fn finish_job(&self, job: &JobId) -> Result<()> {
        let _ = job;
        Ok(())
    }

    /// Writes an auxiliary object (site template, chunks) under the job's prefix.
    async fn put_aux(&self, job: &JobId, name: &str, bytes: Vec<u8>) -> Result<String>;

    /// What this sink can do.
    fn capabilities(&self) -> Capabilities {
        Capabilities::LOCAL
    }
}

/// Documents per [`Sink::list_page`] call when the engine or [`Sink::list`] pages through a
/// job (S3 lists at most 1,000 keys a request).
pub const LIST_PAGE: usize = 1000;

/// One page of [`Sink::list_page`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DocPage {
    /// Documents, in the sink's listing order.
    pub docs: Vec<StoredDoc>,
    /// Cursor of the next page; `None` after the last.
    pub next: Option<String>,
}

impl DocPage {
    /// A page of `docs` followed by `next`.
    pub fn new(docs: Vec<StoredDoc>, next: Option<String>) -> Self {
        DocPage { docs, next }
    }
}

/// Calls `each` with every page of `job`'s documents in `sink`, `limit` at a time, so a
/// pass over a job holds one page at a time.
pub async fn for_each_doc_page<F, Fut>(
    sink: &dyn Sink,
    job: &JobId,
    limit: usize,
    mut each: F,
) -> Result<()>
where
    F: FnMut(Vec<StoredDoc>) -> Fut + Send,
    Fut: std::future::Future<Output = Result<()>> + Send,
{
    let mut after: Option<String> = None;
    loop {
        let page = sink.list_page(job, after.as_deref(), limit).await?;
        each(page.docs).await?;
        match page.next {
            Some(n) => after = Some(n),
            None => return Ok(()),
        }
    }
}

/// Shared sink handle.
pub type DynSink = Arc<dyn Sink>;

#[async_trait]
impl<T: Sink + ?Sized> Sink for Arc<T> {
    async fn put(&self, doc: &Document) -> Result<StoredDoc> {
        (**self).put(doc).await
    }
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        (**self).get(key).await
    }
    async fn list_page(&self, job: &JobId, after: Option<&str>, limit: usize) -> Result<DocPage> {
        (**self).list_page(job, after, limit).await
    }
    async fn list(&self, job: &JobId) -> Result<Vec<StoredDoc>> {
        (**self).list(job).await
    }
    async fn delete_job(&self, job: &JobId) -> Result<usize> {
        (**self).delete_job(job).await
    }
    async fn replace(&self, stored: &StoredDoc, doc: &Document) -> Result<StoredDoc> {
        (**self).replace(stored, doc).await
    }
    async fn finish_job(&self, job: &JobId) -> Result<()> {
        (**self).finish_job(job).await
    }
    async fn remove(&self, job: &JobId, url: &Url) -> Result<Option<StoredDoc>> {
        (**self).remove(job, url).await
    }
    async fn delete_aux(&self, job: &JobId, name: &str) -> Result<()> {
        (**self).delete_aux(job, name).await
    }
    async fn put_aux(&self, job: &JobId, name: &str, bytes: Vec<u8>) -> Result<String> {
        (**self).put_aux(job, name, bytes).await
    }
    fn capabilities(&self) -> Capabilities {
        (**self).capabilities()
    }
}

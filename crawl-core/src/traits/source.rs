use std::fmt::{Debug, Display};
use std::sync::Arc;

use async_trait::async_trait;
use url::Url;

use super::Capabilities;
use crate::error::Result;
use crate::source::{PageBatch, PageState, SourceId, SourceRecord};

/// Where the sources of a knowledge base and the per-page state of each live.
///
/// # Contract
/// - `put_source` creates or replaces the record with its id; `get_source` returns the last
///   one put; `list_sources` returns every source of one tenant (and none of another), in id
///   order.
/// - `put_pages` creates or replaces each page by its URL ([`PageState::url_key`]) within
///   the source; pages of another source are never touched. It is idempotent, and all pages
///   of one call are stored, or the call fails (a caller retries the whole call).
/// - `get_page` returns the last state put for that URL in that source.
/// - `remove_pages` removes those URLs from the source; removing one that is not there is
///   not an error. It returns how many were there.
/// - `list_pages` pages through a source in [`PageState::url_key`] order: starting `after`
///   a key (exclusive; `None` for the start), at most `limit` pages (at least 1), with `next`
///   set exactly when more follow. Pages put or removed during a listing may or may not be
///   seen, but every page present throughout is seen exactly once.
/// - `delete_source` removes the record and every page of the source, is safe to re-run, and
///   returns how many pages it removed.
#[async_trait]
pub trait SourceStore: Debug + Display + Send + Sync + 'static {
    /// Creates or replaces a source record.
    async fn put_source(&self, source: &SourceRecord) -> Result<()>;
    /// The record of `id`, if any.
    async fn get_source(&self, id: &SourceId) -> Result<Option<SourceRecord>>;
    /// Every source of `tenant`, in id order.
    async fn list_sources(&self, tenant: &str) -> Result<Vec<SourceRecord>>;
    /// Removes a source and all its pages; returns how many pages it had.
    async fn delete_source(&self, id: &SourceId) -> Result<usize>;
    /// The stored state of `url` in the source, if any.
    async fn get_page(&self, id: &SourceId, url: &Url) -> Result<Option<PageState>>;
    /// Creates or replaces these pages of the source.
    async fn put_pages(&self, id: &SourceId, pages: &[PageState]) -> Result<()>;
    /// Removes these URLs from the source; returns how many were there.
    async fn remove_pages(&self, id: &SourceId, urls: &[Url]) -> Result<usize>;
    /// One batch of the source's pages after `after`, at most `limit` of them.
    async fn list_pages(
        &self,
        id: &SourceId,
        after: Option<&str>,
        limit: usize,
    ) -> Result<PageBatch>;

    /// Every source of every tenant, in id order: what an embedded scheduler scans for due
    /// runs. A store that cannot list across tenants cheaply (DynamoDB: schedules run there
    /// through EventBridge Scheduler instead) answers [`ErrorKind::Unsupported`](crate::ErrorKind).
    async fn list_all_sources(&self) -> Result<Vec<SourceRecord>> {
        Err(crate::Error::new(
            crate::ErrorKind::Unsupported,
            format!("{self}: cannot list the sources of every tenant"),
        ))
    }

    /// What this store can do.
    fn capabilities(&self) -> Capabilities {
        Capabilities::LOCAL
    }
}

/// Shared source-store handle.
pub type DynSourceStore = Arc<dyn SourceStore>;

#[async_trait]
impl<T: SourceStore + ?Sized> SourceStore for Arc<T> {
    async fn put_source(&self, source: &SourceRecord) -> Result<()> {
        (**self).put_source(source).await
    }
    async fn get_source(&self, id: &SourceId) -> Result<Option<SourceRecord>> {
        (**self).get_source(id).await
    }
    async fn list_sources(&self, tenant: &str) -> Result<Vec<SourceRecord>> {
        (**self).list_sources(tenant).await
    }
    async fn delete_source(&self, id: &SourceId) -> Result<usize> {
        (**self).delete_source(id).await
    }
    async fn get_page(&self, id: &SourceId, url: &Url) -> Result<Option<PageState>> {
        (**self).get_page(id, url).await
    }
    async fn put_pages(&self, id: &SourceId, pages: &[PageState]) -> Result<()> {
        (**self).put_pages(id, pages).await
    }
    async fn remove_pages(&self, id: &SourceId, urls: &[Url]) -> Result<usize> {
        (**self).remove_pages(id, urls).await
    }
    async fn list_pages(
        &self,
        id: &SourceId,
        after: Option<&str>,
        limit: usize,
    ) -> Result<PageBatch> {
        (**self).list_pages(id, after, limit).await
    }
    async fn list_all_sources(&self) -> Result<Vec<SourceRecord>> {
        (**self).list_all_sources().await
    }
    fn capabilities(&self) -> Capabilities {
        (**self).capabilities()
    }
}

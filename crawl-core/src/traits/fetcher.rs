use std::fmt::{Debug, Display};
use std::sync::Arc;

use async_trait::async_trait;
use url::Url;

use crate::error::Result;
use crate::page::{FetchRequest, FetchResponse};

/// Gets one URL over HTTP.
///
/// # Contract
/// - `fetch` performs at most one GET of exactly `req.url` and never follows redirects: a
///   3xx comes back as a response with its `Location` header.
/// - The body is decompressed and never longer than `req.max_body`: for
///   [`FetchPurpose::Page`](crate::FetchPurpose::Page) a longer body is an
///   [`ErrorKind::TooLarge`](crate::ErrorKind::TooLarge) error and a non-HTML content type
///   comes back with an empty body; for robots and sitemaps it is truncated and `truncated` is set.
/// - Connection and deadline failures are errors with [`Error::is_temporary`](crate::Error)
///   set; HTTP statuses are not errors.
/// - `check` answers whether `url` may be fetched at all (robots.txt, network policy) without
///   fetching the page itself; wrappers forward it to what they wrap.
/// - `pace` waits as a `fetch` of `url` would before it starts (rate limits), then returns;
///   wrappers forward it.
#[async_trait]
pub trait Fetcher: Debug + Display + Send + Sync + 'static {
    /// Fetches `req.url` once.
    async fn fetch(&self, req: &FetchRequest) -> Result<FetchResponse>;

    /// Whether `url` may be fetched (robots.txt, policy). The default allows everything.
    async fn check(&self, url: &Url, job: Option<&crate::JobId>) -> Result<()> {
        let _ = (url, job);
        Ok(())
    }

    /// Waits until a request to `url`'s host may start, as `fetch` would, without fetching:
    /// the engine calls it before a page is loaded by another path (the browser), so
    /// politeness holds for rendered pages too. The default does not wait.
    async fn pace(&self, url: &Url, job: Option<&crate::JobId>) -> Result<()> {
        let _ = (url, job);
        Ok(())
    }
}

/// Shared fetcher handle.
pub type DynFetcher = Arc<dyn Fetcher>;

#[async_trait]
impl<T: Fetcher + ?Sized> Fetcher for Arc<T> {
    async fn fetch(&self, req: &FetchRequest) -> Result<FetchResponse> {
        (**self).fetch(req).await
    }
    async fn check(&self, url: &Url, job: Option<&crate::JobId>) -> Result<()> {
        (**self).check(url, job).await
    }
    async fn pace(&self, url: &Url, job: Option<&crate::JobId>) -> Result<()> {
        (**self).pace(url, job).await
    }
}

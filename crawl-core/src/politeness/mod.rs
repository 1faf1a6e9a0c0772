//! Politeness wrappers: robots.txt, per-host rate limit and retry, each a [`Fetcher`]
//! around another [`Fetcher`].
//!
//! # Order
//! [`stack`] builds `RobotsLayer → RetryLayer → RateLimitLayer → inner` (outermost first):
//! - robots is outermost so a disallowed URL is refused before anything is retried or
//!   waited for, and so that its OWN robots.txt fetches go through the inner layers: they are
//!   retried (a 503 with `Retry-After` on robots.txt gets a second chance before RFC 9309's
//!   "disallow all") and rate limited (robots.txt is a request to the host);
//! - retry wraps the rate limit so that EVERY attempt waits for its slot: a retry never
//!   bursts past the per-host interval;
//! - the rate limit reads the robots `Crawl-delay` through a shared [`HostPolicies`]
//!   handle that the robots layer fills.

mod rate;
mod retry;
mod robots;
mod robots_txt;

pub use rate::{HostLimiter, RateLimitLayer};
pub use retry::{parse_retry_after, RetryLayer};
pub use robots::RobotsLayer;
pub use robots_txt::{product_token, RobotsRules, PARSE_LIMIT};

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use url::Url;

use crate::job::JobId;
use crate::request::CrawlRequest;
use crate::Fetcher;

/// The politeness key of a URL: scheme, host and port (`https://example.com:443`).
pub fn origin_of(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// Per-(job, origin) facts learned from robots.txt that other layers need: today the
/// `Crawl-delay`. Cheap to clone (shared).
#[derive(Debug, Clone, Default)]
pub struct HostPolicies {
    delays: Arc<Mutex<DelayMap>>,
}

type DelayMap = HashMap<(Option<JobId>, String), Duration>;

impl HostPolicies {
    /// A fresh, empty handle.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the `Crawl-delay` of `origin` for `job`.
    pub fn set_crawl_delay(&self, job: Option<&JobId>, origin: &str, delay: Duration) {
        let mut m = self.delays.lock().unwrap_or_else(|p| p.into_inner());
        m.insert((job.cloned(), origin.to_owned()), delay);
    }

    /// The `Crawl-delay` of `origin` for `job`, if robots.txt set one.
    pub fn crawl_delay(&self, job: Option<&JobId>, origin: &str) -> Option<Duration> {
        let m = self.delays.lock().unwrap_or_else(|p| p.into_inner());
        m.get(&(job.cloned(), origin.to_owned())).copied()
    }

    /// Forgets everything about `job` (call when a job ends).
    pub fn forget_job(&self, job: &JobId) {
        let mut m = self.delays.lock().unwrap_or_else(|p| p.into_inner());
        m.retain(|(j, _), _| j.as_ref() != Some(job));
    }
}

/// Wraps `inner` (normally an [`HttpFetcher`](crate::http::HttpFetcher)) in the politeness
/// layers configured by `req`: robots.txt for `req.user_agent` (unless
/// `req.respect_robots` is off), retries with the defaults, and a per-host interval of
/// `req.min_interval()` raised by `Crawl-delay` up to `req.max_crawl_delay`. See the
/// module docs for the order. The per-host interval holds for this stack alone; use
/// [`stack_sharing`] to hold it across jobs.
pub fn stack(inner: Arc<dyn Fetcher>, req: &CrawlRequest) -> Arc<dyn Fetcher> {
    stack_sharing(inner, req, &HostLimiter::new())
}

/// [`stack`], with the per-host interval held across every stack sharing `hosts` (every job
/// of a runner): each job's own rate and `Crawl-delay` are spaced from the last start of any
/// of them.
pub fn stack_sharing(
    inner: Arc<dyn Fetcher>,
    req: &CrawlRequest,
    hosts: &HostLimiter,
) -> Arc<dyn Fetcher> {
    let policies = HostPolicies::new();
    let rate: Arc<dyn Fetcher> = Arc::new(
        RateLimitLayer::new(inner, req.min_interval())
            .with_max_crawl_delay(req.max_crawl_delay)
            .with_host_policies(policies.clone())
            .with_host_limiter(hosts.clone()),
    );
    let retry: Arc<dyn Fetcher> = Arc::new(RetryLayer::new(rate));
    if req.respect_robots {
        Arc::new(RobotsLayer::new(retry, &req.user_agent).with_host_policies(policies))
    } else {
        retry
    }
}

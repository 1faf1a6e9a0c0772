//! The per-host rate limit.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::time::Instant;
use url::Url;

use super::{origin_of, HostPolicies};
use crate::error::Result;
use crate::job::JobId;
use crate::page::{FetchRequest, FetchResponse};
use crate::Fetcher;

/// Spaces request STARTS to one host at least an interval apart: the request's rate
/// (`2/s` → 500 ms), raised by the robots.txt `Crawl-delay` of the origin (read from a
/// shared [`HostPolicies`]) up to a cap (default 10 s). With no rate and no crawl delay
/// requests are not limited; a crawl delay is obeyed even when the rate is unlimited.
///
/// Why hand-rolled rather than `governor`: the interval of a host changes when its
/// robots.txt arrives (`Crawl-delay`), which a GCRA quota cannot do per key, and GCRA admits
/// a cell at its theoretical arrival time, not at the moment the request really starts.
/// Here each host has a FIFO `tokio::sync::Mutex` holding the start time of its last
/// request; the next request holds the lock while it sleeps until `last + interval`, records
/// the actual start, and only then releases it — so two consecutive starts are never closer
/// than the interval, whatever the scheduler does, and waiters are served in order.
pub struct RateLimitLayer {
    inner: Arc<dyn Fetcher>,
    interval: Option<Duration>,
    max_crawl_delay: Duration,
    policies: HostPolicies,
    hosts: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<Instant>>>>>,
}

impl fmt::Debug for RateLimitLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitLayer")
            .field("inner", &self.inner)
            .field("interval", &self.interval)
            .field("max_crawl_delay", &self.max_crawl_delay)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for RateLimitLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RateLimitLayer({})", self.inner)
    }
}

impl RateLimitLayer {
    /// Limits `inner` to one request start per `interval` per host (`None`: unlimited).
    pub fn new(inner: Arc<dyn Fetcher>, interval: Option<Duration>) -> Self {
        RateLimitLayer {
            inner,
            interval: interval.filter(|d| !d.is_zero()),
            max_crawl_delay: Duration::from_secs(10),
            policies: HostPolicies::new(),
            hosts: Mutex::new(HashMap::new()),
        }
    }

    /// Caps the robots.txt `Crawl-delay` honoured (default 10 s).
    pub fn with_max_crawl_delay(mut self, cap: Duration) -> Self {
        self.max_crawl_delay = cap;
        self
    }

    /// Reads crawl delays from `policies` (shared with a [`RobotsLayer`](super::RobotsLayer)).
    pub fn with_host_policies(mut self, policies: HostPolicies) -> Self {
        self.policies = policies;
        self
    }

    /// The interval that applies to `url` in `job` now.
    pub fn interval_for(&self, url: &Url, job: Option<&JobId>) -> Option<Duration> {
        let delay = self
            .policies
            .crawl_delay(job, &origin_of(url))
            .map(|d| d.min(self.max_crawl_delay))
            .filter(|d| !d.is_zero());
        match (self.interval, delay) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or_default().max(b.unwrap_or_default())),
        }
    }

    /// Waits for the host's next slot and takes it.
    async fn wait_turn(&self, url: &Url, job: Option<&JobId>) {
        // The start is recorded even when no interval applies yet: the robots.txt fetch
        // runs before its Crawl-delay is known, and the first page must still wait for it.
        let slot = self.slot(url);
        let mut last = slot.lock().await;
        // Read after queueing: a Crawl-delay published meanwhile applies.
        let interval = self.interval_for(url, job);
        if let (Some(prev), Some(interval)) = (*last, interval) {
            tokio::time::sleep_until(prev + interval).await;
        }
        *last = Some(Instant::now());
    }

    fn slot(&self, url: &Url) -> Arc<tokio::sync::Mutex<Option<Instant>>> {
        let host = url.host_str().unwrap_or("").to_ascii_lowercase();
        let mut m = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(m.entry(host).or_default())
    }
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl Fetcher for RateLimitLayer {
    async fn fetch(&self, req: &FetchRequest) -> Result<FetchResponse> {
        self.wait_turn(&req.url, req.job.as_ref()).await;
        self.inner.fetch(req).await
    }

    async fn pace(&self, url: &Url, job: Option<&JobId>) -> Result<()> {
        self.wait_turn(url, job).await;
        self.inner.pace(url, job).await
    }

    async fn check(&self, url: &Url, job: Option<&JobId>) -> Result<()> {
        self.inner.check(url, job).await
    }
}

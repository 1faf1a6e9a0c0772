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
/// request (in a [`HostLimiter`]); the next request holds the lock while it sleeps until
/// `last + interval`, records the actual start, and only then releases it — so two
/// consecutive starts are never closer than the interval, whatever the scheduler does, and
/// waiters are served in order.
///
/// Across jobs: every job's layer of one runner shares one [`HostLimiter`]
/// ([`with_host_limiter`](Self::with_host_limiter)), so the host sees the interval whatever
/// the number of jobs. Each job keeps its own interval (its rate, its robots.txt
/// `Crawl-delay`), measured from the last start of ANY job. A job queues at most one request
/// at the shared lock per host at a time (its other requests wait in the job's own queue), so
/// the shared FIFO serves the waiting jobs in turn, whatever their concurrency.
pub struct RateLimitLayer {
    inner: Arc<dyn Fetcher>,
    interval: Option<Duration>,
    max_crawl_delay: Duration,
    policies: HostPolicies,
    shared: HostLimiter,
    turns: Mutex<HashMap<(Option<JobId>, String), Turn>>,
}

type Slot = Arc<tokio::sync::Mutex<Option<Instant>>>;
type Turn = Arc<tokio::sync::Mutex<()>>;

/// Host entries kept before idle ones are swept from a [`HostLimiter`].
const SWEEP_AT: usize = 1024;
/// A host whose last start is older than this is forgotten by a sweep (longer than any
/// interval: the crawl delay cap is at most minutes).
const IDLE: Duration = Duration::from_secs(600);

/// The start time of the last request to each host, shared by every [`RateLimitLayer`] that
/// holds a clone (one per runner: the default fetcher factory of a
/// [`Crawler`](crate::Crawler) makes one for all its jobs). Cheap to clone.
#[derive(Clone, Default)]
pub struct HostLimiter {
    hosts: Arc<Mutex<HashMap<String, Slot>>>,
}

impl fmt::Debug for HostLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.hosts.lock().map(|m| m.len()).unwrap_or_default();
        f.debug_struct("HostLimiter").field("hosts", &n).finish()
    }
}

impl HostLimiter {
    /// A limiter that knows no host yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn slot(&self, host: &str) -> Slot {
        let mut m = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
        if m.len() >= SWEEP_AT && !m.contains_key(host) {
            // Only entries nobody holds or waits for, idle for longer than any interval.
            m.retain(|_, slot| {
                Arc::strong_count(slot) > 1
                    || slot
                        .try_lock()
                        .map_or(true, |last| last.is_some_and(|t| t.elapsed() < IDLE))
            });
        }
        Arc::clone(m.entry(host.to_owned()).or_default())
    }
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
            shared: HostLimiter::new(),
            turns: Mutex::new(HashMap::new()),
        }
    }

    /// Spaces starts with every other layer holding `limiter` (default: a limiter of this
    /// layer alone).
    pub fn with_host_limiter(mut self, limiter: HostLimiter) -> Self {
        self.shared = limiter;
        self
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
        let host = url.host_str().unwrap_or("").to_ascii_lowercase();
        let turn = self.turn(job, &host);
        let _turn = turn.lock().await;
        let slot = self.shared.slot(&host);
        let mut last = slot.lock().await;
        // Read after queueing: a Crawl-delay published meanwhile applies.
        let interval = self.interval_for(url, job);
        if let (Some(prev), Some(interval)) = (*last, interval) {
            tokio::time::sleep_until(prev + interval).await;
        }
        *last = Some(Instant::now());
    }

    /// The queue of `job`'s requests to `host`: one of them at a time waits at the shared
    /// slot.
    fn turn(&self, job: Option<&JobId>, host: &str) -> Turn {
        let mut m = self.turns.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(m.entry((job.cloned(), host.to_owned())).or_default())
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

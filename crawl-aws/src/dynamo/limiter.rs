//! The per-host request interval held across processes: each request reserves the host's
//! next slot with an update in DynamoDB (one write unit while the host is busy, no read),
//! then sleeps until it.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use aws_sdk_dynamodb::types::ReturnValue;
use aws_sdk_dynamodb::Client;
use crawl_core::politeness::{origin_of, HostPolicies};
use crawl_core::{
    DynFetcher, Error, ErrorKind, FetchRequest, FetchResponse, Fetcher, JobId, Result,
};
use url::Url;

use super::table::{get_n, n, s};
use super::DynamoDedup;
use crate::error::AwsError;

const PK: &str = "pk";
const SK: &str = "sk";
const NEXT: &str = "next_slot_ms";
const EXPIRES: &str = "expires_at";
/// The partition of the dedup table the slots live in.
const PARTITION: &str = "\u{1}host-limiter";
/// Reservation attempts lost to other workers before giving up (temporary error).
const ATTEMPTS: usize = 64;

/// A [`Fetcher`] wrapper that spaces requests to one origin (scheme, host, port) by an
/// interval across every process sharing the table — the serverless counterpart of
/// [`RateLimitLayer`](crawl_core::politeness::RateLimitLayer). The interval is the
/// request's (`1 / rate`), raised by the robots.txt `Crawl-delay` published in the shared
/// [`HostPolicies`] (capped by `max_crawl_delay`).
///
/// Slots live in the dedup table (partition `\u{1}host-limiter`, sort key = origin), with
/// `expires_at` one hour ahead for TTL clean-up.
pub struct DynamoHostLimiter {
    inner: DynFetcher,
    client: Client,
    table: String,
    interval: Option<Duration>,
    policies: HostPolicies,
    max_crawl_delay: Duration,
    /// Per origin, the next slot as this limiter last left it: when that has passed, the
    /// origin is most likely idle and the idle update is tried first.
    last_next: Mutex<HashMap<String, i64>>,
    #[cfg(test)]
    updates: std::sync::atomic::AtomicUsize,
}

impl fmt::Debug for DynamoHostLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamoHostLimiter")
            .field("inner", &self.inner)
            .field("table", &self.table)
            .field("interval", &self.interval)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for DynamoHostLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DynamoHostLimiter({}, {})", self.table, self.inner)
    }
}

impl DynamoHostLimiter {
    /// Wraps `inner`, keeping slots in `dedup`'s table; `interval` `None` means no limit.
    pub fn new(inner: DynFetcher, dedup: &DynamoDedup, interval: Option<Duration>) -> Self {
        DynamoHostLimiter {
            inner,
            client: dedup.client().clone(),
            table: dedup.table().to_owned(),
            interval,
            policies: HostPolicies::new(),
            max_crawl_delay: Duration::ZERO,
            last_next: Mutex::default(),
            #[cfg(test)]
            updates: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Reads `Crawl-delay`s from `policies` (filled by the robots layer), capped at `cap`.
    pub fn with_host_policies(mut self, policies: HostPolicies, cap: Duration) -> Self {
        self.policies = policies;
        self.max_crawl_delay = cap;
        self
    }

    fn interval_for(&self, url: &Url, job: Option<&JobId>) -> Option<Duration> {
        let delay = self
            .policies
            .crawl_delay(job, &origin_of(url))
            .map(|d| d.min(self.max_crawl_delay));
        match (self.interval, delay) {
            (Some(i), Some(d)) => Some(i.max(d)),
            (i, d) => i.or(d),
        }
        .filter(|d| !d.is_zero())
    }

    /// Reserves the next slot of `origin`; returns how long to wait for it.
    /// Takes the origin's next slot: how long to wait for it. A busy origin (its next slot
    /// ahead of now) costs one update and no read: the slot moves on by one interval
    /// atomically, so concurrent workers never lose a race and retry. An idle origin costs a
    /// second update (the first one's condition fails), which sets the slot to now.
    async fn reserve(&self, origin: &str, interval: Duration) -> Result<Duration> {
        let slot = self.take_slot(origin, interval).await?;
        Ok(Duration::from_millis(
            u64::try_from(slot - now_ms()).unwrap_or(0),
        ))
    }

    /// The slot (Unix milliseconds) taken for one request to `origin`. Whichever of the two
    /// updates is likely to succeed goes first: the idle one when the next slot this limiter
    /// last saw has passed (a worker whose own requests are further apart than the interval
    /// finds the origin idle), else the busy one. A wrong guess costs the other update too.
    async fn take_slot(&self, origin: &str, interval: Duration) -> Result<i64> {
        let step = i64::try_from(interval.as_millis()).unwrap_or(i64::MAX / 4);
        let mut idle_first = self
            .last_next
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(origin)
            .is_some_and(|&next| next < now_ms());
        for _ in 0..ATTEMPTS {
            let now = now_ms();
            let taken = match idle_first {
                true => self.take_idle(origin, step, now).await?,
                false => self.take_busy(origin, step, now).await?,
            };
            if let Some(slot) = taken {
                self.last_next
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(origin.to_owned(), slot.saturating_add(step));
                return Ok(slot);
            }
            idle_first = !idle_first;
        }
        Err(Error::new(
            ErrorKind::Storage,
            format!("{self}: no slot for {origin} after {ATTEMPTS} attempts"),
        )
        .with_temporary(true))
    }

    /// The origin's next slot when it is busy (ahead of `now`), moved on by one interval
    /// atomically; `None` when it is idle.
    async fn take_busy(&self, origin: &str, step: i64, now: i64) -> Result<Option<i64>> {
        let busy = self
            .slot_update(origin, now)
            .update_expression("SET #n = #n + :step, #e = :exp")
            .condition_expression("#n >= :now")
            .expression_attribute_values(":step", n(step))
            .return_values(ReturnValue::UpdatedOld)
            .send()
            .await;
        match busy {
            Ok(out) => Ok(Some(
                out.attributes().and_then(|a| get_n(a, NEXT)).unwrap_or(now),
            )),
            Err(e) => self.lost_race(AwsError::sdk("UpdateItem", e)),
        }
    }

    /// `now` as the origin's slot when it is idle (no slot ahead of `now`); `None` when it
    /// is busy (another worker took it first).
    async fn take_idle(&self, origin: &str, step: i64, now: i64) -> Result<Option<i64>> {
        let idle = self
            .slot_update(origin, now)
            .update_expression("SET #n = :next, #e = :exp")
            .condition_expression("attribute_not_exists(#n) OR #n < :now")
            .expression_attribute_values(":next", n(now.saturating_add(step)))
            .send()
            .await;
        match idle {
            Ok(_) => Ok(Some(now)),
            Err(e) => self.lost_race(AwsError::sdk("UpdateItem", e)),
        }
    }

    /// An update of `origin`'s slot item (its names, `:now` and the TTL one hour ahead; tests
    /// count them); the caller adds the expressions.
    fn slot_update(
        &self,
        origin: &str,
        now: i64,
    ) -> aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder {
        #[cfg(test)]
        self.updates
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.client
            .update_item()
            .table_name(&self.table)
            .key(PK, s(PARTITION))
            .key(SK, s(origin))
            .expression_attribute_names("#n", NEXT)
            .expression_attribute_names("#e", EXPIRES)
            .expression_attribute_values(":now", n(now))
            .expression_attribute_values(":exp", n(now / 1000 + 3600))
    }

    /// A failed condition is `None` (the other update's turn); any other error is an error.
    fn lost_race(&self, e: AwsError) -> Result<Option<i64>> {
        match e.code() == Some("ConditionalCheckFailedException") {
            true => Ok(None),
            false => Err(e.into_core(self)),
        }
    }
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX / 4))
        .unwrap_or(0)
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl Fetcher for DynamoHostLimiter {
    async fn fetch(&self, req: &FetchRequest) -> Result<FetchResponse> {
        if let Some(interval) = self.interval_for(&req.url, req.job.as_ref()) {
            let wait = self.reserve(&origin_of(&req.url), interval).await?;
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
        }
        self.inner.fetch(req).await
    }
    async fn check(&self, url: &Url, job: Option<&JobId>) -> Result<()> {
        self.inner.check(url, job).await
    }
    async fn pace(&self, url: &Url, job: Option<&JobId>) -> Result<()> {
        if let Some(interval) = self.interval_for(url, job) {
            let wait = self.reserve(&origin_of(url), interval).await?;
            if !wait.is_zero() {
                tokio::time::sleep(wait).await;
            }
        }
        self.inner.pace(url, job).await
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_moto;
    use super::*;

    /// A limiter of `interval` over the stand-in's dedup table; `None` (the test skipped)
    /// without one.
    async fn limiter(interval: Duration) -> Option<DynamoHostLimiter> {
        let ep = test_moto::endpoint()?;
        let dedup = test_moto::dedup(&ep).await;
        let req = crawl_core::CrawlRequest::builder("http://example.test/")
            .build()
            .unwrap();
        let inner: DynFetcher =
            std::sync::Arc::new(crawl_core::http::HttpFetcher::for_request(&req).unwrap());
        Some(DynamoHostLimiter::new(inner, &dedup, Some(interval)))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_workers_get_slots_an_interval_apart() {
        let Some(limiter) = limiter(Duration::from_millis(200)).await else {
            return;
        };
        let limiter = std::sync::Arc::new(limiter);
        let slots: Vec<i64> = futures::future::try_join_all((0..24).map(|_| {
            let l = std::sync::Arc::clone(&limiter);
            async move {
                l.take_slot("http://example.test", Duration::from_millis(200))
                    .await
            }
        }))
        .await
        .unwrap();
        let mut sorted = slots.clone();
        sorted.sort_unstable();
        for pair in sorted.windows(2) {
            assert!(pair[1] - pair[0] >= 200, "slots too close: {sorted:?}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_worker_slower_than_the_interval_takes_each_slot_in_one_update() {
        let interval = Duration::from_millis(50);
        let Some(limiter) = limiter(interval).await else {
            return;
        };
        let origin = "http://idle.example.test";
        let mut slots = Vec::new();
        for _ in 0..6 {
            slots.push(limiter.take_slot(origin, interval).await.unwrap());
            // The worker's own work between two requests: longer than the interval, so the
            // origin is idle at each request.
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        for pair in slots.windows(2) {
            assert!(pair[1] - pair[0] >= 50, "slots too close: {slots:?}");
        }
        // Busy first, as before, costs a failed update and the idle one at every request: 12.
        let updates = limiter.updates.load(std::sync::atomic::Ordering::Relaxed);
        assert!(
            updates <= 7,
            "{updates} updates for 6 requests to an idle origin"
        );
    }
}

//! The per-host request interval held across processes: each request reserves the host's
//! next slot with a conditional update in DynamoDB, then sleeps until it.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
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
    async fn reserve(&self, origin: &str, interval: Duration) -> Result<Duration> {
        let err = |e: AwsError| e.into_core(self);
        for _ in 0..ATTEMPTS {
            let got = self
                .client
                .get_item()
                .table_name(&self.table)
                .key(PK, s(PARTITION))
                .key(SK, s(origin))
                .consistent_read(true)
                .send()
                .await
                .map_err(|e| err(AwsError::sdk("GetItem", e)))?;
            let old: Option<i64> = got.item().and_then(|i| get_n(i, NEXT));
            let now = now_ms();
            let slot = old.unwrap_or(0).max(now);
            let step = i64::try_from(interval.as_millis()).unwrap_or(i64::MAX / 4);
            let mut upd = self
                .client
                .update_item()
                .table_name(&self.table)
                .key(PK, s(PARTITION))
                .key(SK, s(origin))
                .update_expression("SET #n = :new, #e = :exp")
                .expression_attribute_names("#n", NEXT)
                .expression_attribute_names("#e", EXPIRES)
                .expression_attribute_values(":new", n(slot.saturating_add(step)))
                .expression_attribute_values(":exp", n(now / 1000 + 3600));
            upd = match old {
                Some(o) => upd
                    .condition_expression("#n = :old")
                    .expression_attribute_values(":old", n(o)),
                None => upd.condition_expression("attribute_not_exists(#n)"),
            };
            match upd.send().await {
                Ok(_) => {
                    return Ok(Duration::from_millis(
                        u64::try_from(slot - now).unwrap_or(0),
                    ))
                }
                Err(e) => {
                    let e = AwsError::sdk("UpdateItem", e);
                    if e.code() != Some("ConditionalCheckFailedException") {
                        return Err(err(e));
                    }
                }
            }
        }
        Err(Error::new(
            ErrorKind::Storage,
            format!("{self}: no slot for {origin} after {ATTEMPTS} attempts"),
        )
        .with_temporary(true))
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

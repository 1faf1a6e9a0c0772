//! Dedup store on moka: per-job caches whose entries carry their expiry, so the 24 h window
//! is enforced on insert with an injectable clock, while moka's own time-to-live keeps memory
//! bounded.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use crawl_core::clock::{DynClock, SystemClock};
use crawl_core::memory::DEFAULT_DEDUP_TTL;
use crawl_core::{Capabilities, DedupStore, JobId, Result};
use moka::future::Cache;
use moka::ops::compute::Op;

type JobCache = Cache<String, i64>;

/// A [`DedupStore`] on moka with a TTL window (24 h by default).
#[derive(Clone)]
pub struct MokaDedup {
    jobs: Cache<JobId, JobCache>,
    ttl: Duration,
    clock: DynClock,
}

impl fmt::Debug for MokaDedup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MokaDedup")
            .field("ttl", &self.ttl)
            .field("jobs", &self.jobs.entry_count())
            .finish()
    }
}

impl Default for MokaDedup {
    fn default() -> Self {
        Self::new()
    }
}

impl MokaDedup {
    /// A store with the 24 h TTL and the system clock.
    pub fn new() -> Self {
        Self::with_clock(DEFAULT_DEDUP_TTL, Arc::new(SystemClock))
    }

    /// A store with a chosen TTL and clock.
    pub fn with_clock(ttl: Duration, clock: DynClock) -> Self {
        MokaDedup {
            jobs: Cache::builder().time_to_idle(ttl).build(),
            ttl,
            clock,
        }
    }

    fn now_ms(&self) -> i64 {
        (self.clock.now().unix_timestamp_nanos() / 1_000_000) as i64
    }

    async fn job(&self, job: &JobId) -> JobCache {
        let ttl = self.ttl;
        self.jobs
            .get_with(job.clone(), async move {
                // moka's real-time TTL only frees memory; the window is checked on insert.
                Cache::builder().time_to_live(ttl).build()
            })
            .await
    }
}

impl fmt::Display for MokaDedup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MokaDedup(ttl={}s)", self.ttl.as_secs())
    }
}

#[async_trait]
impl DedupStore for MokaDedup {
    async fn insert(&self, job: &JobId, key: &str) -> Result<bool> {
        let cache = self.job(job).await;
        let now = self.now_ms();
        let expires = now + self.ttl.as_millis() as i64;
        let result = cache
            .entry(key.to_owned())
            .and_compute_with(|existing| {
                let op = match existing {
                    Some(e) if *e.value() > now => Op::Nop,
                    _ => Op::Put(expires),
                };
                std::future::ready(op)
            })
            .await;
        Ok(matches!(
            result,
            moka::ops::compute::CompResult::Inserted(_)
                | moka::ops::compute::CompResult::ReplacedWith(_)
        ))
    }

    async fn insert_many(&self, job: &JobId, keys: &[String]) -> Result<Vec<bool>> {
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            out.push(self.insert(job, k).await?);
        }
        Ok(out)
    }

    async fn contains(&self, job: &JobId, key: &str) -> Result<bool> {
        let now = self.now_ms();
        Ok(self
            .job(job)
            .await
            .get(key)
            .await
            .is_some_and(|exp| exp > now))
    }

    async fn clear_job(&self, job: &JobId) -> Result<()> {
        self.jobs.invalidate(job).await;
        Ok(())
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::LOCAL
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crawl_core::clock::ManualClock;

    #[tokio::test]
    async fn moka_dedup_passes_the_conformance_suite() {
        crawl_core::conformance::dedup_suite(Arc::new(MokaDedup::new())).await;
        let clock = Arc::new(ManualClock::new(time::OffsetDateTime::now_utc()));
        let d = MokaDedup::with_clock(DEFAULT_DEDUP_TTL, Arc::clone(&clock) as _);
        crawl_core::conformance::dedup_ttl_window(&d, &clock, DEFAULT_DEDUP_TTL).await;
    }
}

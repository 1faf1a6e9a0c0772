use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use time::OffsetDateTime;

use crate::clock::{DynClock, SystemClock};
use crate::error::{Error, ErrorKind, Result};
use crate::job::JobId;
use crate::traits::DedupStore;

/// The dedup TTL of the feature request: 24 hours.
pub const DEFAULT_DEDUP_TTL: Duration = Duration::from_secs(24 * 3600);

/// In-memory [`DedupStore`] with a TTL window and an injectable clock.
#[derive(Debug, Clone)]
pub struct MemoryDedup {
    inner: Arc<Mutex<HashMap<JobId, HashMap<String, OffsetDateTime>>>>,
    ttl: Duration,
    clock: DynClock,
}

impl Default for MemoryDedup {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryDedup {
    /// A store with the 24 h TTL and the system clock.
    pub fn new() -> Self {
        Self::with_clock(DEFAULT_DEDUP_TTL, Arc::new(SystemClock))
    }

    /// A store with a TTL and a clock of your choice.
    pub fn with_clock(ttl: Duration, clock: DynClock) -> Self {
        MemoryDedup {
            inner: Arc::default(),
            ttl,
            clock,
        }
    }

    fn lock(
        &self,
    ) -> Result<std::sync::MutexGuard<'_, HashMap<JobId, HashMap<String, OffsetDateTime>>>> {
        self.inner
            .lock()
            .map_err(|_| Error::new(ErrorKind::Internal, "dedup lock poisoned"))
    }
}

impl fmt::Display for MemoryDedup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MemoryDedup(ttl={}s)", self.ttl.as_secs())
    }
}

#[async_trait]
impl DedupStore for MemoryDedup {
    async fn insert(&self, job: &JobId, key: &str) -> Result<bool> {
        Ok(self.insert_many(job, &[key.to_owned()]).await?[0])
    }

    async fn insert_many(&self, job: &JobId, keys: &[String]) -> Result<Vec<bool>> {
        let now = self.clock.now();
        let expires = now + self.ttl;
        let mut g = self.lock()?;
        let m = g.entry(job.clone()).or_default();
        Ok(keys
            .iter()
            .map(|k| match m.get(k) {
                Some(exp) if *exp > now => false,
                _ => {
                    m.insert(k.clone(), expires);
                    true
                }
            })
            .collect())
    }

    async fn contains(&self, job: &JobId, key: &str) -> Result<bool> {
        let now = self.clock.now();
        Ok(self
            .lock()?
            .get(job)
            .and_then(|m| m.get(key))
            .is_some_and(|exp| *exp > now))
    }

    async fn clear_job(&self, job: &JobId) -> Result<()> {
        self.lock()?.remove(job);
        Ok(())
    }
}

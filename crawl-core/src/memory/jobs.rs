use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::clock::{DynClock, SystemClock};
use crate::error::{Error, ErrorKind, Result};
use crate::job::{JobId, JobRecord, JobStatus, PageOutcome};
use crate::traits::JobStore;

/// In-memory [`JobStore`].
#[derive(Debug, Clone)]
pub struct MemoryJobStore {
    inner: Arc<Mutex<HashMap<JobId, JobRecord>>>,
    clock: DynClock,
}

impl Default for MemoryJobStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryJobStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryJobStore {
            inner: Arc::default(),
            clock: Arc::new(SystemClock),
        }
    }

    fn with<T>(&self, job: &JobId, f: impl FnOnce(&mut JobRecord) -> T) -> Result<T> {
        let mut g = self
            .inner
            .lock()
            .map_err(|_| Error::new(ErrorKind::Internal, "job store lock poisoned"))?;
        let r = g
            .get_mut(job)
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("no job {job}")))?;
        Ok(f(r))
    }
}

impl fmt::Display for MemoryJobStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MemoryJobStore")
    }
}

#[async_trait]
impl JobStore for MemoryJobStore {
    async fn create(&self, record: &JobRecord) -> Result<()> {
        let mut g = self
            .inner
            .lock()
            .map_err(|_| Error::new(ErrorKind::Internal, "job store lock poisoned"))?;
        if g.contains_key(&record.id) {
            return Err(Error::new(
                ErrorKind::Conflict,
                format!("job {} already exists", record.id),
            ));
        }
        g.insert(record.id.clone(), record.clone());
        Ok(())
    }

    async fn get(&self, job: &JobId) -> Result<Option<JobRecord>> {
        let g = self
            .inner
            .lock()
            .map_err(|_| Error::new(ErrorKind::Internal, "job store lock poisoned"))?;
        Ok(g.get(job).cloned())
    }

    async fn list(&self, assistant_id: Option<&str>) -> Result<Vec<JobRecord>> {
        let g = self
            .inner
            .lock()
            .map_err(|_| Error::new(ErrorKind::Internal, "job store lock poisoned"))?;
        let mut v: Vec<JobRecord> = g
            .values()
            .filter(|r| assistant_id.is_none() || r.assistant_id.as_deref() == assistant_id)
            .cloned()
            .collect();
        v.sort_by(|a, b| b.started_at.cmp(&a.started_at).then(a.id.cmp(&b.id)));
        Ok(v)
    }

    async fn reserve_page(&self, job: &JobId) -> Result<bool> {
        self.with(job, JobRecord::try_reserve_page)
    }

    async fn record_page(&self, job: &JobId, outcome: &PageOutcome) -> Result<()> {
        self.with(job, |r| r.apply_outcome(outcome))
    }

    async fn record_excluded(&self, job: &JobId, reason: &str) -> Result<()> {
        self.with(job, |r| r.add_excluded(reason))
    }

    async fn record_excluded_counts(
        &self,
        job: &JobId,
        counts: &std::collections::BTreeMap<String, u64>,
    ) -> Result<()> {
        self.with(job, |r| {
            for (reason, n) in counts {
                r.add_excluded_n(reason, *n);
            }
        })
    }

    async fn record_changes(&self, job: &JobId, changes: &crate::ChangeCounts) -> Result<()> {
        self.with(job, |r| r.progress.changes = *changes)
    }

    async fn finish(
        &self,
        job: &JobId,
        status: JobStatus,
        failure: Option<String>,
    ) -> Result<bool> {
        if !status.is_final() {
            return Err(Error::invalid("finish: status must be COMPLETED or FAILED"));
        }
        let now = self.clock.now();
        self.with(job, |r| r.try_finish(status, failure, now))
    }

    async fn begin_ingestion(
        &self,
        job: &JobId,
        lease: std::time::Duration,
    ) -> Result<crate::IngestionClaim> {
        let now = self.clock.now().unix_timestamp();
        self.with(job, |r| r.try_begin_ingestion(now, lease.as_secs()))
    }

    async fn end_ingestion(&self, job: &JobId, failure: Option<String>) -> Result<()> {
        self.with(job, |r| r.end_ingestion(failure))
    }

    async fn delete(&self, job: &JobId) -> Result<()> {
        let mut g = self
            .inner
            .lock()
            .map_err(|_| Error::new(ErrorKind::Internal, "job store lock poisoned"))?;
        g.remove(job)
            .map(|_| ())
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("no job {job}")))
    }
}

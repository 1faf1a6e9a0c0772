//! Where jobs run: the [`Runner`] trait and the [`InProcessRunner`] (tokio tasks).

use std::collections::HashMap;
use std::fmt::{self, Debug, Display};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use std::time::Duration;

use crawl_core::engine::{hand_off, HandOff, INGEST_LEASE};
use crawl_core::{
    CrawlRequest, Crawler, DynSourceStore, Error, ErrorKind, IngestionState, JobHandle, JobId,
    JobStatus, Result, SourceRecord,
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Starts and stops crawl jobs. The API reads progress from the
/// [`JobStore`](crawl_core::JobStore) whichever runner is used.
///
/// # Contract
/// - `start` returns the new job's id once its [`JobRecord`](crawl_core::JobRecord) exists
///   in the job store the API reads (status `RUNNING`, `assistant_id` from the request); the
///   crawl itself runs in the background.
/// - `cancel` is best effort and idempotent: an unknown or ended job is `Ok`. A runner that can
///   know (in-process) returns only after the job has ended and will write nothing more; a
///   remote runner (Step Functions) returns once the stop was requested.
/// - A runner that keeps sources returns their store from `sources`, and `start_sync` starts
///   a run of the source of `request`'s root URL under `tenant` (creating the source on its
///   first run; [`ErrorKind::Conflict`] while another run of it goes), with the same
///   guarantees as `start`. A runner without sources (the defaults) runs every crawl as a
///   snapshot, and the API's source endpoints answer 501.
#[async_trait]
pub trait Runner: Debug + Display + Send + Sync + 'static {
    /// Starts a job for `request`.
    async fn start(&self, request: CrawlRequest) -> Result<JobId>;
    /// Stops the job, if it is running.
    async fn cancel(&self, job: &JobId) -> Result<()>;
    /// Where this runner's sources live, if it keeps any.
    fn sources(&self) -> Option<DynSourceStore> {
        None
    }
    /// Starts a run of the source of `request`'s root URL under `tenant`.
    async fn start_sync(
        &self,
        tenant: &str,
        request: CrawlRequest,
    ) -> Result<(SourceRecord, JobId)> {
        let _ = (tenant, request);
        Err(Error::new(
            ErrorKind::Unsupported,
            format!("{self} keeps no sources"),
        ))
    }
}

/// Shared runner handle.
pub type DynRunner = Arc<dyn Runner>;

#[derive(Debug, Clone)]
struct Running {
    cancel: CancellationToken,
    ended: watch::Receiver<bool>,
}

type RunningMap = Arc<Mutex<HashMap<JobId, Running>>>;

/// Runs each job as tokio tasks of one [`Crawler`] in this process, keeping each job's
/// handle so [`cancel`](Runner::cancel) can stop it and wait for its end.
#[derive(Debug, Clone)]
pub struct InProcessRunner {
    crawler: Crawler,
    running: RunningMap,
}

impl InProcessRunner {
    /// A runner over `crawler` (its job store and sink are the ones the API must read).
    pub fn new(crawler: Crawler) -> Self {
        InProcessRunner {
            crawler,
            running: Arc::default(),
        }
    }

    /// The crawler jobs run on.
    pub fn crawler(&self) -> &Crawler {
        &self.crawler
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, HashMap<JobId, Running>>> {
        lock(&self.running)
    }

    /// Keeps a started job's handle so `cancel` can stop it and wait for its end.
    fn track(&self, handle: JobHandle) -> Result<JobId> {
        let id = handle.id().clone();
        let (tx, rx) = watch::channel(false);
        self.lock()?.insert(
            id.clone(),
            Running {
                cancel: handle.cancellation_token(),
                ended: rx,
            },
        );
        let running = Arc::clone(&self.running);
        let job = id.clone();
        tokio::spawn(async move {
            if let Err(e) = handle.wait().await {
                tracing::warn!(job = %job, error = %e, "crawl job ended with an error");
            }
            if let Ok(mut m) = lock(&running) {
                m.remove(&job);
            }
            let _ = tx.send(true);
        });
        Ok(id)
    }

    /// Resumes every job the job store still holds as RUNNING but this runner does not run:
    /// the jobs of a process that stopped or crashed. Call it once at start-up; with a durable
    /// job store, frontier and dedup store (crawl-store's `RedbStore`) each resumed job ends
    /// with every page stored exactly once. Returns the resumed ids.
    pub async fn resume_interrupted(&self) -> Result<Vec<JobId>> {
        let mut resumed = Vec::new();
        for record in self.crawler.jobs().list(None).await? {
            if record.status.is_final() || self.lock()?.contains_key(&record.id) {
                continue;
            }
            match self.crawler.resume(&record.id).await {
                Ok(handle) => resumed.push(self.track(handle)?),
                Err(e) => tracing::warn!(job = %record.id, error = %e, "cannot resume job"),
            }
        }
        Ok(resumed)
    }
}

impl InProcessRunner {
    /// Hands over again, once, every COMPLETED job whose hand-off to the knowledge base was
    /// interrupted: its `ingestion` is still `pending` after an attempt began (the process
    /// stopped between [`begin_ingestion`](crawl_core::JobStore::begin_ingestion) and
    /// `end_ingestion`) and this runner does not run it. Call it once at start-up. Each goes
    /// through [`crawl_core::engine::hand_off`] with the diff read back from the sink (one
    /// more attempt counted), in the background; the returned ids are the jobs taken up.
    ///
    /// A job store no other process shares (memory, crawl-store's `RedbStore`, which locks
    /// its file) cannot have a live hand-off at start-up: the dead attempt's lease is ended at
    /// once, recorded as `failed` ("interrupted") and the hand-off retried. With a shared
    /// store another process may still hold it, so the retry waits for the lease to end;
    /// either way the job store's claim lets exactly one attempt hand it over.
    ///
    /// A job with no attempt begun is left alone: records written before hand-offs were
    /// recorded read as `pending` with 0 attempts, and were handed over by then.
    pub async fn resume_hand_offs(&self) -> Result<Vec<JobId>> {
        let jobs = Arc::clone(self.crawler.jobs());
        let shared = jobs.capabilities().shared;
        let mut taken = Vec::new();
        for record in jobs.list(None).await? {
            let ing = &record.ingestion;
            if record.status != JobStatus::Completed
                || ing.state != IngestionState::Pending
                || ing.attempts == 0
                || self.lock()?.contains_key(&record.id)
            {
                continue;
            }
            let now = time::OffsetDateTime::now_utc().unix_timestamp();
            let wait = match ing.lease_until {
                Some(until) if until > now && shared => {
                    Duration::from_secs(u64::try_from(until - now).unwrap_or(0) + 1)
                }
                Some(until) if until > now => {
                    jobs.end_ingestion(
                        &record.id,
                        Some("interrupted: the process stopped during the hand-off".into()),
                    )
                    .await?;
                    Duration::ZERO
                }
                _ => Duration::ZERO,
            };
            let crawler = self.crawler.clone();
            let id = record.id.clone();
            tokio::spawn(async move {
                tokio::time::sleep(wait).await;
                match hand_off(
                    &**crawler.jobs(),
                    &**crawler.sink(),
                    &**crawler.ingestor(),
                    &id,
                    INGEST_LEASE,
                )
                .await
                {
                    Ok(HandOff::Failed(e)) => {
                        tracing::warn!(job = %id, error = %e, "resumed hand-off failed");
                    }
                    Ok(_) => {}
                    Err(e) => tracing::warn!(job = %id, error = %e, "cannot resume hand-off"),
                }
            });
            taken.push(record.id);
        }
        Ok(taken)
    }
}

fn lock(m: &RunningMap) -> Result<std::sync::MutexGuard<'_, HashMap<JobId, Running>>> {
    m.lock()
        .map_err(|_| Error::new(ErrorKind::Internal, "runner lock poisoned"))
}

impl Display for InProcessRunner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "InProcessRunner({})", self.crawler.jobs())
    }
}

#[async_trait]
impl Runner for InProcessRunner {
    async fn start(&self, request: CrawlRequest) -> Result<JobId> {
        let handle = self.crawler.start(request).await?;
        self.track(handle)
    }

    fn sources(&self) -> Option<DynSourceStore> {
        Some(Arc::clone(self.crawler.sources()))
    }

    async fn start_sync(
        &self,
        tenant: &str,
        request: CrawlRequest,
    ) -> Result<(SourceRecord, JobId)> {
        let (source, handle) = self.crawler.start_sync(tenant, request).await?;
        Ok((source, self.track(handle)?))
    }

    async fn cancel(&self, job: &JobId) -> Result<()> {
        let Some(mut r) = self.lock()?.get(job).cloned() else {
            return Ok(());
        };
        r.cancel.cancel();
        // The sender sets `true` after the job task has returned; a closed channel means the
        // watcher is gone, which only happens after that.
        let _ = r.ended.wait_for(|ended| *ended).await;
        Ok(())
    }
}

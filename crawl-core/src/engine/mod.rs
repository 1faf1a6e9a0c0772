//! The crawl engine: a cheap-to-clone [`Crawler`] that runs jobs through the traits only.

mod admit;
mod context;
mod handoff;
mod page;
mod run;
mod sample;
mod sync;

pub use context::{request_gate, PageContext};
pub use handoff::{hand_off, retry_ingestion, stored_diff, HandOff, INGEST_LEASE};
pub use page::{probe_soft_404, process_page, strip_site_template, PageResult};
pub use sync::{
    begin_run, body_hash, finalise_run, is_removal_evidence, pending_name, source_for, SyncRun,
};

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::clock::{DynClock, SystemClock};
use crate::error::{Error, ErrorKind, Result};
use crate::job::{JobId, JobRecord};
use crate::memory::{MemoryDedup, MemoryFrontier, MemoryJobStore, MemorySink, MemorySourceStore};
use crate::request::CrawlRequest;
use crate::source::SourceRecord;
use crate::traits::{
    ComposedLedger, CrawlLedger, DedupStore, DynDedupStore, DynFetcher, DynFrontier, DynIngestor,
    DynJobStore, DynLedger, DynRenderer, DynSink, DynSourceStore, Frontier, JobStore, NoopIngestor,
};

/// Builds the fetcher for one job (the default builds the HTTP fetcher with the request's
/// network policy and user agent, wrapped in robots, rate-limit and retry layers).
pub type FetcherFactory = Arc<dyn Fn(&CrawlRequest) -> Result<DynFetcher> + Send + Sync>;

struct Inner {
    fetcher: FetcherFactory,
    renderer: Option<DynRenderer>,
    frontier: DynFrontier,
    dedup: DynDedupStore,
    sink: DynSink,
    jobs: DynJobStore,
    ledger: DynLedger,
    ingestor: DynIngestor,
    sources: DynSourceStore,
    clock: DynClock,
    render_deadline: Duration,
    template: TemplateOptions,
    /// Held while a run of a source is started: one run of a source at a time.
    starting: tokio::sync::Mutex<()>,
}

/// Site-template learning settings.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct TemplateOptions {
    /// Remove blocks that repeat across pages when the crawl finalises.
    pub enabled: bool,
    /// A block is template if it appears on at least this many pages...
    pub min_pages: usize,
    /// ...and on at least this fraction of the stored pages.
    pub min_fraction: f64,
    /// Also store the template blocks once as `site-template.md`.
    pub write_site_document: bool,
}

impl Default for TemplateOptions {
    fn default() -> Self {
        TemplateOptions {
            enabled: true,
            min_pages: 4,
            min_fraction: 0.5,
            write_site_document: true,
        }
    }
}

/// Runs crawl jobs. Cheap to clone: an `Arc` inside, like reqwest's `Client`.
#[derive(Clone)]
pub struct Crawler {
    inner: Arc<Inner>,
}

impl fmt::Debug for Crawler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Crawler")
            .field(
                "renderer",
                &self.inner.renderer.as_ref().map(ToString::to_string),
            )
            .field("frontier", &self.inner.frontier.to_string())
            .field("dedup", &self.inner.dedup.to_string())
            .field("sink", &self.inner.sink.to_string())
            .field("jobs", &self.inner.jobs.to_string())
            .field("ledger", &self.inner.ledger.to_string())
            .field("ingestor", &self.inner.ingestor.to_string())
            .finish()
    }
}

impl Crawler {
    /// A builder with in-memory backends and the HTTP fetcher.
    pub fn builder() -> CrawlerBuilder {
        CrawlerBuilder::default()
    }

    /// The job store (progress of every job).
    pub fn jobs(&self) -> &DynJobStore {
        &self.inner.jobs
    }

    /// The sink documents go to.
    pub fn sink(&self) -> &DynSink {
        &self.inner.sink
    }

    /// Where sources and their pages' state live.
    pub fn sources(&self) -> &DynSourceStore {
        &self.inner.sources
    }

    /// Starts a run of the source of `request`'s root URL under `tenant` (the assistant),
    /// creating the source on its first run. The run compares every page with the source's
    /// stored version and writes into the source's documents (under its first run's job
    /// id), so a page keeps one document key across runs; its diff is the job's
    /// `changes` counters and `{run}/changes.jsonl`. Refused with
    /// [`ErrorKind::Conflict`] while another run of the source is going.
    pub async fn start_sync(
        &self,
        tenant: &str,
        request: CrawlRequest,
    ) -> Result<(SourceRecord, JobHandle)> {
        crate::url::UrlPatterns::new(&request.include, &request.exclude)?;
        let fetcher = (self.inner.fetcher)(&request)?;
        let _one_at_a_time = self.inner.starting.lock().await;
        let (source, record) = sync::begin_run(
            &self.inner.sources,
            &self.inner.jobs,
            tenant,
            JobId::new(),
            request,
            self.inner.clock.now(),
        )
        .await?;
        Ok((source, self.spawn(record, fetcher, false)))
    }

    /// Hands a COMPLETED job whose knowledge-base hand-off failed to the crawler's ingestor
    /// again, without crawling: the diff is read back from the sink (a run's
    /// `changes.jsonl`, or every document of a plain crawl). Returns the record after the
    /// attempt (`ingestion` delivered, or failed with the reason); refused with
    /// [`ErrorKind::Conflict`] when it is already delivered, in progress, or the job is not
    /// COMPLETED. See [`retry_ingestion`].
    pub async fn retry_ingestion(&self, job: &JobId) -> Result<JobRecord> {
        retry_ingestion(
            &*self.inner.jobs,
            &*self.inner.sink,
            &*self.inner.ingestor,
            job,
        )
        .await
    }

    /// The ingestor completed jobs are handed to.
    pub fn ingestor(&self) -> &DynIngestor {
        &self.inner.ingestor
    }

    /// Starts a job in the background and returns its handle.
    pub async fn start(&self, request: CrawlRequest) -> Result<JobHandle> {
        self.start_with_id(JobId::new(), request).await
    }

    /// Starts a job with a chosen id.
    pub async fn start_with_id(&self, id: JobId, request: CrawlRequest) -> Result<JobHandle> {
        // A request that skipped the builder is refused here rather than crawled wrongly.
        crate::url::UrlPatterns::new(&request.include, &request.exclude)?;
        let fetcher = (self.inner.fetcher)(&request)?;
        let record = JobRecord::new(id.clone(), request, self.inner.clock.now());
        self.inner.jobs.create(&record).await?;
        Ok(self.spawn(record, fetcher, false))
    }

    /// Resumes a job that was interrupted (a crashed process): leased frontier entries are
    /// queued again and the job runs to its end. Needs durable backends to be useful.
    pub async fn resume(&self, id: &JobId) -> Result<JobHandle> {
        let record = self
            .inner
            .jobs
            .get(id)
            .await?
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("no job {id} to resume")))?;
        if record.status.is_final() {
            return Err(Error::invalid(format!(
                "job {id} already ended with status {}",
                record.status
            )));
        }
        let fetcher = (self.inner.fetcher)(&record.request)?;
        Ok(self.spawn(record, fetcher, true))
    }

    /// Runs a job to its end and returns its final record.
    pub async fn run(&self, request: CrawlRequest) -> Result<JobRecord> {
        self.start(request).await?.wait().await
    }

    fn spawn(&self, record: JobRecord, fetcher: DynFetcher, resume: bool) -> JobHandle {
        let cancel = CancellationToken::new();
        let id = record.id.clone();
        let run = run::JobRun::new(Arc::clone(&self.inner), record, fetcher, cancel.clone());
        let task = tokio::spawn(run.run(resume));
        JobHandle {
            id,
            jobs: Arc::clone(&self.inner.jobs),
            cancel,
            task: Some(task),
        }
    }
}

/// A running job: its id, live progress, cancellation, and its end.
#[derive(Debug)]
pub struct JobHandle {
    id: JobId,
    jobs: DynJobStore,
    cancel: CancellationToken,
    task: Option<JoinHandle<Result<JobRecord>>>,
}

impl JobHandle {
    /// The job's id.
    pub fn id(&self) -> &JobId {
        &self.id
    }

    /// The job's current record (status and counters).
    pub async fn record(&self) -> Result<JobRecord> {
        self.jobs
            .get(&self.id)
            .await?
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("no job {}", self.id)))
    }

    /// Asks the job to stop; it ends FAILED with reason `cancelled`, and nothing is written
    /// after [`wait`](Self::wait) returns.
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// Stops the job's task at once without finishing the job, as a crash would: the record
    /// stays RUNNING and [`Crawler::resume`] picks it up (with durable backends). For hosts
    /// shutting down.
    pub async fn abort(mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
            let _ = t.await;
        }
    }

    /// A token that cancels this job when cancelled.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Waits for the job to end and returns its final record.
    pub async fn wait(mut self) -> Result<JobRecord> {
        match self.task.take() {
            Some(t) => t
                .await
                .map_err(|e| Error::new(ErrorKind::Internal, format!("job task failed: {e}")))?,
            None => self.record().await,
        }
    }
}

/// Builds a [`Crawler`]; unset backends are in-memory.
#[derive(Default)]
#[must_use]
pub struct CrawlerBuilder {
    fetcher: Option<FetcherFactory>,
    renderer: Option<DynRenderer>,
    frontier: Option<DynFrontier>,
    dedup: Option<DynDedupStore>,
    sink: Option<DynSink>,
    jobs: Option<DynJobStore>,
    ledger: Option<DynLedger>,
    ingestor: Option<DynIngestor>,
    sources: Option<DynSourceStore>,
    clock: Option<DynClock>,
    render_deadline: Option<Duration>,
    template: TemplateOptions,
}

impl fmt::Debug for CrawlerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CrawlerBuilder").finish_non_exhaustive()
    }
}

impl CrawlerBuilder {
    /// Uses this fetcher for every job, as it is (no politeness layers are added: wrap it
    /// yourself, or use [`fetcher_factory`](Self::fetcher_factory)).
    pub fn fetcher(mut self, f: DynFetcher) -> Self {
        self.fetcher = Some(Arc::new(move |_req: &CrawlRequest| Ok(Arc::clone(&f))));
        self
    }
    /// Builds each job's fetcher with `f`.
    pub fn fetcher_factory(mut self, f: FetcherFactory) -> Self {
        self.fetcher = Some(f);
        self
    }
    /// The browser for `always` and `auto` render modes.
    pub fn renderer(mut self, r: DynRenderer) -> Self {
        self.renderer = Some(r);
        self
    }
    /// Frontier backend.
    pub fn frontier(mut self, f: DynFrontier) -> Self {
        self.frontier = Some(f);
        self
    }
    /// Dedup backend.
    pub fn dedup(mut self, d: DynDedupStore) -> Self {
        self.dedup = Some(d);
        self
    }
    /// Where documents go.
    pub fn sink(mut self, s: DynSink) -> Self {
        self.sink = Some(s);
        self
    }
    /// Job records and counters.
    pub fn jobs(mut self, j: DynJobStore) -> Self {
        self.jobs = Some(j);
        self
    }
    /// Admission and page-finish bookkeeping (default: composed from the frontier, dedup
    /// store and job store).
    pub fn ledger(mut self, l: DynLedger) -> Self {
        self.ledger = Some(l);
        self
    }
    /// One backend for the frontier, dedup store, job store and ledger (a durable embedded
    /// store), so admissions and page ends survive a crash whole.
    pub fn state<S>(mut self, s: Arc<S>) -> Self
    where
        S: Frontier + DedupStore + JobStore + CrawlLedger,
    {
        self.frontier = Some(Arc::clone(&s) as DynFrontier);
        self.dedup = Some(Arc::clone(&s) as DynDedupStore);
        self.jobs = Some(Arc::clone(&s) as DynJobStore);
        self.ledger = Some(s as DynLedger);
        self
    }
    /// Where sources and their pages' state live (default: in memory). A durable embedded
    /// store keeps them across processes, so a later run syncs instead of starting over.
    pub fn sources(mut self, s: DynSourceStore) -> Self {
        self.sources = Some(s);
        self
    }
    /// Knowledge-base hand-off.
    pub fn ingestor(mut self, i: DynIngestor) -> Self {
        self.ingestor = Some(i);
        self
    }
    /// Time source.
    pub fn clock(mut self, c: DynClock) -> Self {
        self.clock = Some(c);
        self
    }
    /// Per-page render deadline (default 30 s).
    pub fn render_deadline(mut self, d: Duration) -> Self {
        self.render_deadline = Some(d);
        self
    }
    /// Site-template learning settings.
    pub fn template(mut self, t: TemplateOptions) -> Self {
        self.template = t;
        self
    }

    /// Assembles the crawler. Refuses a renderer that cannot run JavaScript.
    pub fn build(self) -> Result<Crawler> {
        if let Some(r) = &self.renderer {
            if !r.capabilities().javascript {
                return Err(Error::invalid(format!(
                    "renderer: {r} does not run JavaScript"
                )));
            }
        }
        let fetcher = match self.fetcher {
            Some(f) => f,
            None => default_fetcher_factory(),
        };
        let frontier: DynFrontier = self
            .frontier
            .unwrap_or_else(|| Arc::new(MemoryFrontier::new()));
        let dedup: DynDedupStore = self.dedup.unwrap_or_else(|| Arc::new(MemoryDedup::new()));
        let jobs: DynJobStore = self.jobs.unwrap_or_else(|| Arc::new(MemoryJobStore::new()));
        let ledger: DynLedger = self.ledger.unwrap_or_else(|| {
            Arc::new(ComposedLedger::new(
                Arc::clone(&frontier),
                Arc::clone(&dedup),
                Arc::clone(&jobs),
            ))
        });
        Ok(Crawler {
            inner: Arc::new(Inner {
                fetcher,
                renderer: self.renderer,
                frontier,
                dedup,
                sink: self.sink.unwrap_or_else(|| Arc::new(MemorySink::new())),
                jobs,
                ledger,
                ingestor: self.ingestor.unwrap_or_else(|| Arc::new(NoopIngestor)),
                sources: self
                    .sources
                    .unwrap_or_else(|| Arc::new(MemorySourceStore::new())),
                starting: tokio::sync::Mutex::new(()),
                clock: self.clock.unwrap_or_else(|| Arc::new(SystemClock)),
                render_deadline: self.render_deadline.unwrap_or(Duration::from_secs(30)),
                template: self.template,
            }),
        })
    }
}

/// One [`HostLimiter`](crate::politeness::HostLimiter) for every job of the crawler, so the
/// per-host rate holds across jobs.
fn default_fetcher_factory() -> FetcherFactory {
    let hosts = crate::politeness::HostLimiter::new();
    Arc::new(move |req: &CrawlRequest| default_fetcher_sharing(req, &hosts))
}

/// The fetcher a job gets by default: the HTTP fetcher with the request's network policy and
/// user agent, wrapped in the retry, rate-limit and robots.txt layers. Its per-host interval
/// holds for this fetcher alone; a [`Crawler`] without a fetcher of its own uses
/// [`default_fetcher_sharing`] with one limiter for all its jobs.
pub fn default_fetcher(req: &CrawlRequest) -> Result<DynFetcher> {
    default_fetcher_sharing(req, &crate::politeness::HostLimiter::new())
}

/// [`default_fetcher`] whose per-host interval is held across every fetcher sharing `hosts`.
pub fn default_fetcher_sharing(
    req: &CrawlRequest,
    hosts: &crate::politeness::HostLimiter,
) -> Result<DynFetcher> {
    let http = crate::http::HttpFetcher::for_request(req)?;
    Ok(crate::politeness::stack_sharing(Arc::new(http), req, hosts))
}

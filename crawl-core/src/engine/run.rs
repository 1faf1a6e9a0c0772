//! One job from start to end: the worker loop, termination and finalisation.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::{debug, warn};

use super::admit::Admission;
use super::context::{request_gate, PageContext};
use super::page::{process_page, PageResult};
use super::sync::{finalise_run, SyncRun};
use super::Inner;
use crate::error::{Error, ErrorKind, Result};
use crate::job::{JobRecord, JobStatus, PageOutcome};
use crate::net::RequestGate;
use crate::request::SitemapMode;
use crate::traits::{DynFetcher, FrontierEntry};
use crate::url::normalize;

/// Most processed pages held while an earlier page is still running (each holds its links).
const READY_MAX: usize = 64;

/// A processed page waiting for its turn to admit its links.
struct Done {
    page: PageResult,
    candidates: Vec<crate::traits::Candidate>,
}

pub(super) struct JobRun {
    inner: Arc<Inner>,
    record: JobRecord,
    fetcher: DynFetcher,
    cancel: CancellationToken,
}

/// Why a job stopped early.
enum Stop {
    Cancelled,
    Failed(String),
}

impl JobRun {
    pub(super) fn new(
        inner: Arc<Inner>,
        record: JobRecord,
        fetcher: DynFetcher,
        cancel: CancellationToken,
    ) -> Self {
        JobRun {
            inner,
            record,
            fetcher,
            cancel,
        }
    }

    pub(super) async fn run(self, resume: bool) -> Result<JobRecord> {
        let id = self.record.id.clone();
        let jobs = &self.inner.jobs;
        let ctx = match self.context().await {
            Ok(ctx) => Arc::new(ctx),
            Err(e) => {
                jobs.finish(&id, JobStatus::Failed, Some(format!("sync: {e}")))
                    .await?;
                self.drop_crawl_state().await;
                return self.current().await;
            }
        };
        let outcome = self.crawl(resume, &ctx).await;
        match outcome {
            Ok(()) => match self.finalise(&ctx).await {
                Err(e) => {
                    warn!(job = %id, error = %e, "finalising failed");
                    jobs.finish(&id, JobStatus::Failed, Some(format!("finalise: {e}")))
                        .await?;
                }
                Ok(()) => {
                    jobs.finish(&id, JobStatus::Completed, None).await?;
                    // A refused hand-off leaves the job COMPLETED with `ingestion` failed
                    // and its reason, for a retry (Crawler::retry_ingestion).
                    super::handoff::hand_off(
                        &**jobs,
                        &*self.inner.sink,
                        &*self.inner.ingestor,
                        &id,
                        super::handoff::INGEST_LEASE,
                    )
                    .await?;
                }
            },
            Err(Stop::Cancelled) => {
                jobs.finish(&id, JobStatus::Failed, Some("cancelled".into()))
                    .await?;
            }
            Err(Stop::Failed(reason)) => {
                jobs.finish(&id, JobStatus::Failed, Some(reason)).await?;
            }
        }
        self.drop_crawl_state().await;
        self.current().await
    }

    /// An ended job cannot be resumed: its frontier and dedup records only take space (in a
    /// long-running host, memory; in a durable store, disk). Dropped at once; the record,
    /// its counters and the documents stay.
    async fn drop_crawl_state(&self) {
        let id = &self.record.id;
        if let Err(e) = self.inner.frontier.clear_job(id).await {
            warn!(job = %id, error = %e, "clearing the ended job's frontier failed");
        }
        if let Err(e) = self.inner.dedup.clear_job(id).await {
            warn!(job = %id, error = %e, "clearing the ended job's dedup records failed");
        }
    }

    async fn current(&self) -> Result<JobRecord> {
        self.inner.jobs.get(&self.record.id).await?.ok_or_else(|| {
            Error::new(
                ErrorKind::NotFound,
                format!("job {} vanished", self.record.id),
            )
        })
    }

    /// The pages' context; for a run of a source, with the source's state.
    async fn context(&self) -> Result<PageContext> {
        let sync = SyncRun::of(&self.record, &self.inner.sources)
            .await?
            .map(Arc::new);
        Ok(PageContext::new(
            self.record.id.clone(),
            self.record.request.clone(),
            Arc::clone(&self.fetcher),
            Arc::clone(&self.inner.sink),
            Arc::clone(&self.inner.dedup),
            Arc::clone(&self.inner.clock),
        )
        .with_renderer(self.inner.renderer.clone())
        .with_render_deadline(self.inner.render_deadline)
        .with_sync(sync)
        .with_linked_types(crate::linked::LinkedType::among(
            self.inner.ingestor.accepted_types(),
        )))
    }

    async fn crawl(&self, resume: bool, ctx: &Arc<PageContext>) -> std::result::Result<(), Stop> {
        let req = &self.record.request;
        let id = &self.record.id;
        let gate = request_gate(req);
        let ctx = Arc::clone(ctx);
        let admission = Arc::new(Admission::new(Arc::clone(&self.inner), (*ctx).clone()));
        let fail = |e: Error| Stop::Failed(e.to_string());

        // Seeding and the soft-404 probe make requests too: a cancel must not wait for them.
        let soft404 = tokio::select! {
            r = self.prepare(resume, &admission, &gate, &ctx) => r?,
            () = self.cancel.cancelled() => return Err(Stop::Cancelled),
        };
        let ctx = Arc::new((*ctx).clone().with_soft404(soft404));

        // Pages run concurrently, but their links are admitted in the order the pages were
        // admitted (the frontier is FIFO), each page's links in document order: admission is
        // breadth-first by depth, then parent, then link order, whatever the timing, so a
        // capped crawl admits the same pages at any concurrency. A page is finished in the
        // ledger only once its links are admitted, so a crash loses no link.
        let mut set: JoinSet<(u64, FrontierEntry, Result<Done>)> = JoinSet::new();
        let mut ready: BTreeMap<u64, (FrontierEntry, Done)> = BTreeMap::new();
        let (mut popped, mut admitted) = (0u64, 0u64);
        let concurrency = req.concurrency.max(1);
        loop {
            if self.cancel.is_cancelled() {
                set.abort_all();
                while set.join_next().await.is_some() {}
                return Err(Stop::Cancelled);
            }
            while set.len() < concurrency && ready.len() < READY_MAX {
                match self.inner.frontier.pop(id).await.map_err(fail)? {
                    Some(entry) => {
                        let ctx = Arc::clone(&ctx);
                        let seq = popped;
                        popped += 1;
                        set.spawn(async move {
                            let r = match process_page(&ctx, &entry).await {
                                Ok(page) => ctx
                                    .link_candidates(&page.links, entry.depth + 1)
                                    .await
                                    .map(|candidates| Done { page, candidates }),
                                Err(e) => Err(e),
                            };
                            (seq, entry, r)
                        });
                    }
                    None => break,
                }
            }
            if set.is_empty() && ready.is_empty() {
                return Ok(());
            }
            let joined = tokio::select! {
                j = set.join_next() => j,
                () = self.cancel.cancelled() => continue,
            };
            let Some(joined) = joined else { continue };
            let (seq, entry, result) =
                joined.map_err(|e| Stop::Failed(format!("page task: {e}")))?;
            match result {
                Ok(done) => {
                    ready.insert(seq, (entry, done));
                }
                Err(e) => {
                    // A page task only errors when a backend failed for good: stop the job,
                    // keeping what is stored.
                    set.abort_all();
                    while set.join_next().await.is_some() {}
                    let _ = self
                        .inner
                        .jobs
                        .record_page(id, &PageOutcome::Skipped(e.code().into_owned()))
                        .await;
                    return Err(Stop::Failed(format!("{e}")));
                }
            }
            while let Some((entry, done)) = ready.remove(&admitted) {
                admitted += 1;
                let Done { page, candidates } = done;
                debug!(url = %entry.url, outcome = ?page.outcome, "page done");
                let mut excluded = admission.admit_candidates(candidates).await.map_err(fail)?;
                if page.links_over_cap > 0 {
                    excluded.insert("links_per_page".to_owned(), page.links_over_cap);
                }
                self.inner
                    .ledger
                    .finish_page(id, &entry.url, &page.outcome, &excluded)
                    .await
                    .map_err(fail)?;
            }
        }
    }

    /// Queues the root (or re-queues a crashed run's leased pages) and probes for soft 404s.
    async fn prepare(
        &self,
        resume: bool,
        admission: &Admission,
        gate: &RequestGate,
        ctx: &PageContext,
    ) -> std::result::Result<Option<u64>, Stop> {
        let req = &self.record.request;
        let id = &self.record.id;
        let fail = |e: Error| Stop::Failed(e.to_string());
        if resume {
            self.inner.frontier.requeue_leased(id).await.map_err(fail)?;
        } else {
            let root = normalize(&req.url)
                .ok_or_else(|| Stop::Failed("root URL is not http(s)".into()))?;
            gate.check(&root).map_err(fail)?;
            match admission.admit_root(&root).await {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::RobotsUnreachable => {
                    return Err(Stop::Failed("robots_unreachable".into()))
                }
                Err(e) if e.kind() == ErrorKind::PolicyRefused => {
                    return Err(Stop::Failed(format!("network_policy: {}", e.message())))
                }
                Err(e) => return Err(fail(e)),
            }
            // Sitemap URLs join the links, at depth 1: none past a depth of 0.
            if req.sitemap == SitemapMode::Auto && req.max_depth >= super::admit::SITEMAP_DEPTH {
                admission.admit_sitemaps().await.map_err(fail)?;
            }
        }

        Ok(if req.detect_soft_404 {
            super::probe_soft_404(ctx).await
        } else {
            None
        })
    }

    /// Ends a completed crawl: the template pass and the manifest, or for a run of a source
    /// its diff (see [`finalise_run`]). What to hand to the knowledge base is read back
    /// from the sink, a page at a time (see [`stored_diff`](super::handoff::stored_diff)).
    async fn finalise(&self, ctx: &PageContext) -> Result<()> {
        let id = &self.record.id;
        match &ctx.sync {
            None => {
                super::page::strip_templates(&self.inner, &self.record).await?;
                self.inner.sink.finish_job(id).await
            }
            Some(sync) => {
                let record = self.current().await?;
                let below_cap = record.progress.pages_total < u64::from(record.request.max_pages);
                finalise_run(ctx, sync, &self.inner.jobs, &self.inner.template, below_cap)
                    .await
                    .map(|_| ())
            }
        }
    }
}

//! The five handlers. Plain async functions over [`Services`]: the Lambda runtime, the
//! local `--invoke` mode and tests call the same code. Every page goes through
//! [`crawl_core::engine::process_page`], as in the embedded engine; admissions and page
//! counts go through the [`LevelLedger`](crate::dynamo::LevelLedger), whose steps are
//! transactions that a re-run after a crash repeats with the same result.

use std::collections::BTreeMap;
use std::sync::Arc;

use crawl_core::engine::{
    finalise_run, hand_off, process_page, strip_site_template, HandOff, PageContext, SyncRun,
    TemplateOptions,
};
use crawl_core::url::normalize;
use crawl_core::{
    DynDedupStore, DynFetcher, DynSink, ErrorKind, FrontierEntry, JobId, JobRecord, JobStatus,
    PageOutcome, RenderMode, SitemapMode,
};
use futures::{StreamExt, TryStreamExt};
use serde_json::{json, Value};

use super::events::{BatchSummary, InitEvent, LevelState, MarkFailedEvent, PageItem, PageReport};
use super::robots::{RecordingFetcher, RobotsSnapshot};
use super::services::Services;
use super::sitemap::{SitemapSeed, SITEMAP_NAME};
use super::state::{
    batch_report_name, batch_report_prefix, get_json, level_name, put_json, s3_key, seen_name,
    ROBOTS_NAME,
};
use crate::sfn::{HandlerError, ERR_INGEST_BUSY, ERR_INVALID, ERR_JOB_FAILED, INGEST_LEASE_SECS};

type HResult<T> = std::result::Result<T, HandlerError>;

/// Batch reports read at once by the plan step.
const READ_CONCURRENCY: usize = 16;

fn context(svc: &Services, job: &JobId, record: &JobRecord, fetcher: DynFetcher) -> PageContext {
    PageContext::new(
        job.clone(),
        record.request.clone(),
        fetcher,
        Arc::clone(&svc.sink) as DynSink,
        Arc::clone(&svc.dedup) as DynDedupStore,
        Arc::clone(&svc.clock),
    )
}

/// The run of a source `record` is, if it is one: the page context's [`SyncRun`].
async fn sync_of(svc: &Services, record: &JobRecord) -> HResult<Option<Arc<SyncRun>>> {
    if record.request.sync.is_none() {
        return Ok(None);
    }
    let sources = svc.sources.as_ref().ok_or_else(|| {
        HandlerError::new(
            ERR_JOB_FAILED,
            format!(
                "job {}: a run of a source, but no source store is configured \
                 (KB_CRAWL_SOURCES_TABLE)",
                record.id
            ),
        )
    })?;
    Ok(SyncRun::of(record, sources).await?.map(Arc::new))
}

async fn record_of(svc: &Services, job: &JobId) -> HResult<JobRecord> {
    crawl_core::JobStore::get(&*svc.jobs, job)
        .await?
        .ok_or_else(|| HandlerError::new(ERR_INVALID, format!("no job {job}")))
}

fn level_state(svc: &Services, job: &JobId, level: u32, n: usize) -> HResult<LevelState> {
    Ok(LevelState {
        job_id: job.clone(),
        bucket: svc.sink.bucket().to_owned(),
        level,
        level_key: s3_key(&svc.sink, job, &level_name(level))?,
        has_next: n > 0,
    })
}

/// Admits candidates for `level` through the [`LevelLedger`](crate::dynamo::LevelLedger):
/// dedup, page budget and exclusion counts (plus `extra` ones, counted with them once);
/// returns the level's pages, the same on a re-run.
///
/// Candidates the job claimed at an earlier level (the `seen` list the previous plan run
/// wrote) are left out first, in memory: they cost no write. The keys claimed now are
/// added to that list, written as level `level`'s, before the level's list.
async fn admit(
    svc: &Services,
    job: &JobId,
    level: u32,
    mut candidates: Vec<crawl_core::Candidate>,
    extra: BTreeMap<String, u64>,
) -> HResult<Vec<PageItem>> {
    let mut seen: Vec<String> = match level.checked_sub(1) {
        Some(before) => get_json(&svc.sink, job, &seen_name(before))
            .await?
            .unwrap_or_default(),
        None => Vec::new(),
    };
    let known: std::collections::HashSet<&str> = seen.iter().map(String::as_str).collect();
    candidates.retain(|c| !known.contains(c.key.as_str()));
    let admission = svc
        .ledger
        .admit_level(job, level, candidates, extra)
        .await?;
    seen.extend(admission.claimed);
    put_json(&svc.sink, job, &seen_name(level), &seen).await?;
    Ok(admission
        .admitted
        .into_iter()
        .map(|e| PageItem {
            job_id: job.clone(),
            url: e.url,
            depth: e.depth,
            lastmod: e.lastmod,
        })
        .collect())
}

/// Init: builds the job's request from the event's body (the caller's url, depth, pages and
/// render mode) and [`Services::policy`] (everything else), validated against the
/// guardrails; creates the job, fetches robots.txt once (recorded for the other handlers),
/// admits the root and writes level 0. A job record that already exists (written by
/// [`StepFunctionsRunner`](crate::sfn) or a first delivery) is the job's request. Idempotent:
/// a second delivery returns the level already written.
pub async fn init(svc: &Services, ev: InitEvent) -> HResult<LevelState> {
    if let Some(sync) = ev.scheduled_sync {
        return init_scheduled(svc, sync).await;
    }
    let mut request = ev
        .request
        .into_request(&svc.policy, &svc.guardrails)
        .map_err(|e| HandlerError::new(ERR_INVALID, e.to_string()))?;
    refuse_linked_documents(&request)?;
    let job = ev.job_id.unwrap_or_default();
    if let Some(items) = get_json::<Vec<PageItem>>(&svc.sink, &job, &level_name(0)).await? {
        return level_state(svc, &job, 0, items.len());
    }
    if let Some(a) = ev.assistant_id.filter(|a| !a.is_empty()) {
        // The job API's rule for the path id; the template maps anything else to 'invalid id'.
        let ok = a.len() <= 128
            && a.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if !ok {
            return Err(HandlerError::new(
                ERR_INVALID,
                "assistant_id: must be 1 to 128 characters of letters, digits, '-', '_' or '.'",
            ));
        }
        request.assistant_id = Some(a);
    }
    let record = JobRecord::new(job.clone(), request, svc.clock.now());
    let record = match crawl_core::JobStore::create(&*svc.jobs, &record).await {
        Ok(()) => record,
        Err(e) if e.kind() == ErrorKind::Conflict => record_of(svc, &job).await?,
        Err(e) => return Err(e.into()),
    };
    init_job(svc, record).await
}

/// Init of a scheduled run of a source: begins the run as "Sync now" does (the source's
/// stored settings under the worker's policy; refused while another run of it goes), under
/// a job id derived from the schedule's fire time, so a retried or re-delivered invocation
/// goes on with the same run.
async fn init_scheduled(svc: &Services, sync: super::events::ScheduledSync) -> HResult<LevelState> {
    let job = sync.job_id();
    if let Some(items) = get_json::<Vec<PageItem>>(&svc.sink, &job, &level_name(0)).await? {
        return level_state(svc, &job, 0, items.len());
    }
    if let Some(record) = crawl_core::JobStore::get(&*svc.jobs, &job).await? {
        return init_job(svc, record).await;
    }
    let Some(sources) = &svc.sources else {
        return Err(HandlerError::new(
            ERR_INVALID,
            "scheduledSync: this deployment has no sources table (KB_CRAWL_SOURCES_TABLE)",
        ));
    };
    let source = sources
        .get_source(&sync.source_id)
        .await?
        .filter(|s| s.tenant == sync.assistant_id)
        .ok_or_else(|| {
            HandlerError::new(
                ERR_INVALID,
                format!(
                    "scheduledSync: no source {} for assistant {}",
                    sync.source_id, sync.assistant_id
                ),
            )
        })?;
    let request = source
        .request(&svc.policy, &svc.guardrails)
        .map_err(|e| HandlerError::new(ERR_INVALID, e.to_string()))?;
    refuse_linked_documents(&request)?;
    let jobs: crawl_core::DynJobStore = Arc::clone(&svc.jobs) as _;
    let record = match crawl_core::engine::begin_run(
        sources,
        &jobs,
        &source.tenant,
        job.clone(),
        request,
        svc.clock.now(),
    )
    .await
    {
        Ok((_, r)) => r,
        Err(e) if e.kind() == ErrorKind::Conflict => {
            match crawl_core::JobStore::get(&*svc.jobs, &job).await? {
                // A concurrent delivery of this same firing created it.
                Some(r) => r,
                None => return Err(HandlerError::new(ERR_JOB_FAILED, e.message().to_owned())),
            }
        }
        Err(e) => return Err(e.into()),
    };
    init_job(svc, record).await
}

/// The serverless path hands off through the state machine's ingestion, which takes
/// markdown only: a request for linked documents is refused by name rather than quietly
/// crawled without them.
fn refuse_linked_documents(request: &crawl_core::CrawlRequest) -> HResult<()> {
    if request.linked_documents {
        return Err(HandlerError::new(
            ERR_INVALID,
            "linkedDocuments: not supported by the serverless deployment yet (the embedded \
             crawler and examples/crawl --linked-docs --kb take it)",
        ));
    }
    Ok(())
}

/// The rest of Init for a job whose record exists: robots.txt, the root, level 0.
async fn init_job(svc: &Services, record: JobRecord) -> HResult<LevelState> {
    refuse_linked_documents(&record.request)?;
    let job = record.id.clone();
    let mut snapshot = None;
    let fetcher = svc.fetcher(&record.request, None, |inner| {
        let (rec, seen) = RecordingFetcher::new(inner);
        snapshot = Some(seen);
        Arc::new(rec)
    })?;
    let ctx = context(svc, &job, &record, fetcher);
    let root = normalize(&record.request.url)
        .ok_or_else(|| HandlerError::new(ERR_INVALID, "root URL is not http(s)"))?;
    if let Err(e) = ctx.gate.check(&root) {
        return Err(HandlerError::new(ERR_JOB_FAILED, e.to_string()));
    }
    let candidate = match ctx.root_candidate(&root).await {
        Ok(c) => c,
        Err(e) if e.kind() == ErrorKind::RobotsUnreachable => {
            return Err(HandlerError::new(ERR_JOB_FAILED, "robots_unreachable"))
        }
        Err(e) if e.kind() == ErrorKind::PolicyRefused => {
            return Err(HandlerError::new(
                ERR_JOB_FAILED,
                format!("network_policy: {}", e.message()),
            ))
        }
        Err(e) => return Err(e.into()),
    };
    // Sitemap URLs join the links at depth 1 (none past a depth of 0), kept for the plan
    // step of that level; read once: a re-delivered Init finds them.
    let req = &record.request;
    if req.sitemap == SitemapMode::Auto
        && req.max_depth >= crawl_core::sitemap::SITEMAP_DEPTH
        && get_json::<SitemapSeed>(&svc.sink, &job, SITEMAP_NAME)
            .await?
            .is_none()
    {
        let seed = SitemapSeed::read(&ctx, &candidate.key).await?;
        tracing::info!(job = %job, urls = seed.urls.len(), "sitemaps read");
        put_json(&svc.sink, &job, SITEMAP_NAME, &seed).await?;
    }
    let robots: RobotsSnapshot = snapshot
        .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).clone())
        .unwrap_or_default();
    put_json(&svc.sink, &job, ROBOTS_NAME, &robots).await?;
    let items = admit(svc, &job, 0, vec![candidate], BTreeMap::new()).await?;
    put_json(&svc.sink, &job, &level_name(0), &items).await?;
    level_state(svc, &job, 0, items.len())
}

/// How long a batch may go on starting pages by default
/// ([`Services::with_batch_time_budget`]), counted from the start of the Express child
/// execution that scrapes it (the event's `ExecutionStartTime`), so that retries of the
/// batch share it: a page is not started once the child has run this long, and is skipped
/// as `time_budget` instead. With a page's longest run (its fetch timeout, 30 s, times its
/// 3 attempts, plus the host slot's wait) and the scrape Task's bounded Retry, the child
/// ends inside Express's 5 minutes ([`crate::sfn::worst_child_secs`] adds it up).
pub const BATCH_TIME_BUDGET: std::time::Duration =
    std::time::Duration::from_secs(crate::sfn::BATCH_BUDGET_SECS);

/// Scrape a batch of one level's pages (the map's `ItemBatcher` item; one page is a batch
/// of one): one after another, each through [`process_page`] with the job's request (and
/// [`Services::renderer`] when its render mode is `always` or `auto`), paced by the host
/// limiter as before; then one report of the batch (each page's outcome and links)
/// written to S3 for the plan step. Returns a summary (the map's results stay small).
///
/// Failure stays per page: a page whose processing fails for good (a non-temporary error)
/// is skipped as `worker_failed` and the others are stored. A temporary error (throttling,
/// a storage 5xx) fails the invocation, and the state machine's Retry runs the batch again:
/// before failing, the invocation writes the batch's report of the pages it finished, and
/// a re-delivery keeps those outcomes (a page stored stays counted as stored, even once
/// the time budget has run out) and goes on with the others.
/// Idempotent: a second delivery stores the same documents at the same keys and
/// overwrites the same report; nothing is counted here.
pub async fn scrape(svc: &Services, ev: super::events::ScrapeEvent) -> HResult<BatchSummary> {
    let started = std::time::Instant::now();
    let (items, execution_start) = ev.into_parts();
    // Time spent so far by the batch's execution (all its attempts), else this invocation's.
    let elapsed = |clock: &dyn crawl_core::clock::Clock| match execution_start {
        Some(at) => std::time::Duration::try_from(clock.now() - at)
            .unwrap_or_default()
            .max(started.elapsed()),
        None => started.elapsed(),
    };
    let Some(first) = items.first() else {
        return Ok(BatchSummary::default());
    };
    let job = first.job_id.clone();
    let level = first.depth;
    if let Some(other) = items.iter().find(|i| i.job_id != job || i.depth != level) {
        return Err(HandlerError::new(
            ERR_INVALID,
            format!(
                "Items: {} (job {}, depth {}) is not of the batch's job {job} and depth {level}",
                other.url, other.job_id, other.depth
            ),
        ));
    }
    let record = record_of(svc, &job).await?;
    let mut reports = Vec::with_capacity(items.len());
    let ctx = if record.status.is_final() {
        None
    } else {
        let robots: RobotsSnapshot = get_json(&svc.sink, &job, ROBOTS_NAME)
            .await?
            .unwrap_or_default();
        let fetcher = svc.fetcher(&record.request, Some(robots), |f| f)?;
        let renderer = match record.request.render {
            RenderMode::Never => None,
            RenderMode::Always | RenderMode::Auto => svc.renderer.clone(),
        };
        Some(
            context(svc, &job, &record, fetcher)
                .with_renderer(renderer)
                .with_sync(sync_of(svc, &record).await?),
        )
    };
    let urls: Vec<String> = items.iter().map(|i| i.url.to_string()).collect();
    let name = batch_report_name(level, urls.iter().map(String::as_str));
    // What an earlier attempt of this batch finished (its report, written before it failed).
    let mut done: std::collections::HashMap<String, PageReport> =
        get_json::<Vec<PageReport>>(&svc.sink, &job, &name)
            .await?
            .unwrap_or_default()
            .into_iter()
            .filter(|r| r.outcome != "time_budget")
            .map(|r| (r.url.to_string(), r))
            .collect();
    for item in items {
        if let Some(r) = done.remove(item.url.as_str()) {
            reports.push(r);
            continue;
        }
        let skipped = |reason: &str| PageReport {
            url: item.url.clone(),
            outcome: reason.into(),
            links: Vec::new(),
            has_links: false,
            links_over_cap: 0,
        };
        let Some(ctx) = &ctx else {
            reports.push(skipped("cancelled"));
            continue;
        };
        if elapsed(&*svc.clock) >= svc.batch_time_budget {
            reports.push(skipped("time_budget"));
            continue;
        }
        let mut entry = FrontierEntry::new(item.url.clone(), item.depth);
        entry.lastmod = item.lastmod;
        match process_page(ctx, &entry).await {
            Ok(r) => reports.push(PageReport {
                url: item.url,
                outcome: match r.outcome {
                    PageOutcome::Stored => "stored".into(),
                    PageOutcome::Skipped(reason) => reason,
                },
                has_links: !r.links.is_empty(),
                links: r.links,
                links_over_cap: r.links_over_cap,
            }),
            Err(e) if e.is_temporary() => {
                // The pages finished so far, for the retry (best effort: it redoes them if
                // this write fails too).
                if !reports.is_empty() {
                    if let Err(w) = put_json(&svc.sink, &job, &name, &reports).await {
                        tracing::warn!(job = %job, error = %w, "partial batch report not written");
                    }
                }
                return Err(e.into());
            }
            Err(e) => {
                tracing::warn!(job = %job, url = %item.url, error = %e, "page failed; skipped");
                reports.push(skipped("worker_failed"));
            }
        }
    }
    put_json(&svc.sink, &job, &name, &reports).await?;
    let mut summary = BatchSummary {
        pages: u32::try_from(reports.len()).unwrap_or(u32::MAX),
        ..BatchSummary::default()
    };
    for r in &reports {
        summary.has_links |= r.has_links;
        if r.outcome == "stored" {
            summary.stored += 1;
        } else {
            *summary.skipped.entry(r.outcome.clone()).or_default() += 1;
        }
    }
    Ok(summary)
}

/// Plan: counts the level's pages once (one conditional update of the job per level that
/// also marks the level counted: a re-run counts nothing twice; a page without a report
/// counts as skipped `worker_failed`),
/// admits the level's links through dedup and the job's page budget, and writes the next
/// level's list (a re-run returns the list already written).
pub async fn plan(svc: &Services, st: LevelState) -> HResult<LevelState> {
    let job = st.job_id.clone();
    let record = record_of(svc, &job).await?;
    let robots: RobotsSnapshot = get_json(&svc.sink, &job, ROBOTS_NAME)
        .await?
        .unwrap_or_default();
    let fetcher = svc.fetcher(&record.request, Some(robots), |f| f)?;
    let ctx = context(svc, &job, &record, fetcher);
    let items: Vec<PageItem> = get_json(&svc.sink, &job, &level_name(st.level))
        .await?
        .unwrap_or_default();
    // The level's batch reports, found by listing (the map's ItemBatcher chose the
    // batches); a page in no report (its batch failed after retries) counts as skipped
    // `worker_failed`.
    let names = svc
        .sink
        .list_aux(&job, &batch_report_prefix(st.level))
        .await?;
    let (sink, owner) = (Arc::clone(&svc.sink), job.clone());
    let batches: Vec<Option<Vec<PageReport>>> = futures::stream::iter(names)
        .map(move |name| {
            let sink = Arc::clone(&sink);
            let job = owner.clone();
            async move { get_json::<Vec<PageReport>>(&sink, &job, &name).await }
        })
        .buffered(READ_CONCURRENCY)
        .try_collect()
        .await?;
    let mut by_key: std::collections::HashMap<String, PageReport> =
        std::collections::HashMap::new();
    for r in batches.into_iter().flatten().flatten() {
        // A page in two reports (a batch re-run in other company): a stored outcome wins.
        let key = ctx.key(&r.url);
        match by_key.get(&key) {
            Some(prior) if prior.outcome == "stored" => {}
            _ => {
                by_key.insert(key, r);
            }
        }
    }
    let mut links = Vec::new();
    let mut over_cap = 0u64;
    let mut outcomes = Vec::with_capacity(items.len());
    for item in &items {
        let report = by_key.remove(&ctx.key(&item.url));
        outcomes.push(match &report {
            Some(r) if r.outcome == "stored" => PageOutcome::Stored,
            Some(r) => PageOutcome::Skipped(r.outcome.clone()),
            None => PageOutcome::Skipped("worker_failed".into()),
        });
        if let Some(r) = report {
            links.extend(r.links);
            over_cap += r.links_over_cap;
        }
    }
    svc.ledger
        .record_level_once(&job, st.level, &outcomes)
        .await?;
    let next = st.level + 1;
    let next_items = match get_json::<Vec<PageItem>>(&svc.sink, &job, &level_name(next)).await? {
        Some(done) => done,
        None => {
            // Level 1 admits the sitemaps' URLs first, as the embedded engine does (it
            // admits them before the root page is fetched), then the root's links.
            let (mut candidates, mut extra) = match next {
                crawl_core::sitemap::SITEMAP_DEPTH => {
                    match get_json::<SitemapSeed>(&svc.sink, &job, SITEMAP_NAME).await? {
                        Some(mut seed) => {
                            let counts = std::mem::take(&mut seed.counts);
                            (seed.candidates(&ctx), counts)
                        }
                        None => (Vec::new(), BTreeMap::new()),
                    }
                }
                _ => (Vec::new(), BTreeMap::new()),
            };
            candidates.extend(ctx.link_candidates(&links, next).await?);
            if over_cap > 0 {
                *extra.entry("links_per_page".to_owned()).or_default() += over_cap;
            }
            let admitted = admit(svc, &job, next, candidates, extra).await?;
            put_json(&svc.sink, &job, &level_name(next), &admitted).await?;
            admitted
        }
    };
    level_state(svc, &job, next, next_items.len())
}

/// How long one finalise run holds a job's ingestion hand-off (see [`INGEST_LEASE_SECS`]).
const INGEST_LEASE: std::time::Duration = std::time::Duration::from_secs(INGEST_LEASE_SECS);

/// Finalise: the site-template pass over the stored documents, the sink's manifest, the
/// job COMPLETED, then the ingestion hand-off: [`Services::ingestor`] is called once per
/// completed job with its diff ([`hand_off`]). Idempotent: a re-delivered finalise finds the
/// job already delivered (recorded in the job store) and calls nothing. A failed hand-off
/// is recorded on the job (`ingestion` failed with the reason and the attempt count); a
/// temporary one is also the handler's error, for the state machine's retry. Returns the
/// final record.
pub async fn finalise(svc: &Services, st: LevelState) -> HResult<JobRecord> {
    let job = st.job_id;
    let record = record_of(svc, &job).await?;
    // A run of a source: its diff (idempotent: a re-run finds the pages already decided),
    // written as its changes.jsonl; the hand-off reads it (or a plain crawl's documents)
    // back from the sink a page at a time.
    match sync_of(svc, &record).await? {
        Some(sync) => {
            let robots: RobotsSnapshot = get_json(&svc.sink, &job, ROBOTS_NAME)
                .await?
                .unwrap_or_default();
            let fetcher = svc.fetcher(&record.request, Some(robots), |f| f)?;
            let ctx = context(svc, &job, &record, fetcher).with_sync(Some(Arc::clone(&sync)));
            let below_cap = record.progress.pages_total < u64::from(record.request.max_pages);
            let jobs: crawl_core::DynJobStore = Arc::clone(&svc.jobs) as _;
            finalise_run(&ctx, &sync, &jobs, &TemplateOptions::default(), below_cap).await?;
        }
        None => {
            strip_site_template(&*svc.sink, &job, &TemplateOptions::default()).await?;
            crawl_core::Sink::finish_job(&*svc.sink, &job).await?;
        }
    }
    crawl_core::JobStore::finish(&*svc.jobs, &job, JobStatus::Completed, None).await?;
    if let Some(ingestor) = &svc.ingestor {
        let sink: &dyn crawl_core::Sink = &*svc.sink;
        match hand_off(&*svc.jobs, sink, &**ingestor, &job, INGEST_LEASE).await? {
            HandOff::Delivered | HandOff::AlreadyDelivered | HandOff::NotCompleted => {}
            // Recorded on the job (`ingestion` failed, with the reason); a temporary
            // refusal is also the handler's error, for the state machine's retry. A
            // lasting one ends the execution with the job COMPLETED and its hand-off
            // failed, to retry through the job API once the knowledge base is fixed.
            HandOff::Failed(e) if e.is_temporary() => return Err(e.into()),
            HandOff::Failed(_) => {}
            HandOff::Busy => {
                return Err(HandlerError::new(
                    ERR_INGEST_BUSY,
                    format!("job {job}: another finalise run is handing it to {ingestor}"),
                ))
            }
        }
    }
    record_of(svc, &job).await
}

/// Mark failed: the job ends FAILED with the caught error's message as the reason.
pub async fn mark_failed(svc: &Services, ev: MarkFailedEvent) -> HResult<Value> {
    let reason = ev
        .error
        .map(|e| e.reason())
        .unwrap_or_else(|| "failed".into());
    crawl_core::JobStore::finish(
        &*svc.jobs,
        &ev.job_id,
        JobStatus::Failed,
        Some(reason.clone()),
    )
    .await?;
    Ok(json!({ "job_id": ev.job_id, "status": "FAILED", "failure": reason }))
}

//! Runs of a source: each page compared with its stored version, and the run's diff.
//!
//! A run of a source ([`SyncRun`]) sends the stored validators with every request. A page
//! that answers `304`, or whose markdown (without the site template, without `fetched_at`)
//! hashes as before, is `unchanged`: nothing is written. A page whose markdown differs is
//! *pending*: its new document is staged under the run and decided when the run finalises,
//! once the run's own site template is known, so a change of the site's navigation or
//! footer alone changes no page. A page the source did not have is `added`, stored at once
//! under the source's documents. A stored page is `removed` on evidence only (see
//! [`is_removal_evidence`] and [`finalise_run`]).
//!
//! Both the embedded engine and a serverless worker run this code.

use std::fmt;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use url::Url;

use super::context::PageContext;
use super::TemplateOptions;
use crate::error::Result;
use crate::extract::template::TemplateLearner;
use crate::job::{ChangeCounts, JobId, JobRecord};
use crate::page::{Document, StoredDoc, Validators};
use crate::source::{PageChange, PageState, SourceId, SourceRecord, SyncTarget};
use crate::traits::{DynJobStore, DynSourceStore, Sink};

/// Pages read or written per source-store call.
const BATCH: usize = 200;

/// SHA-256 (hex) of a markdown body: the content hash a source compares.
pub fn body_hash(markdown: &str) -> String {
    hex::encode(Sha256::digest(markdown.as_bytes()))
}

/// Skip reasons that prove a stored page is gone: removed from the knowledge base.
pub fn is_removal_evidence(code: &str) -> bool {
    matches!(
        code,
        "http_404"
            | "http_410"
            | "noindex"
            | "soft_404"
            | "duplicate_canonical"
            | "duplicate_redirect"
            | "redirect_out_of_scope"
            | "redirect_excluded_pattern"
            | "redirect_not_http"
            | "robots_disallowed"
    )
}

/// Exclusion reasons (found by [`PageContext::exclusion`]) that prove a stored page the run
/// did not reach is no longer part of the source.
fn is_exclusion_evidence(reason: &str) -> bool {
    matches!(reason, "pattern" | "robots_disallowed" | "out_of_scope")
}

/// The name of a pending page's staged document among the run's auxiliary objects.
pub fn pending_name(url: &Url) -> String {
    format!("pending-{}.md", &PageState::url_key(url)[..32])
}

/// A template learner that treats every block of `template` as template.
fn known_template(template: &str) -> TemplateLearner {
    let mut t = TemplateLearner::new(1, 0.0);
    if !template.trim().is_empty() {
        t.observe(template);
    }
    t
}

/// One run of a source, as a page sees it.
pub struct SyncRun {
    /// The source.
    pub source: SourceId,
    /// Where its pages' state lives.
    pub store: DynSourceStore,
    /// The job whose prefix holds the source's documents.
    pub documents: JobId,
    /// This run.
    pub run: JobId,
    template: TemplateLearner,
}

impl fmt::Debug for SyncRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SyncRun")
            .field("source", &self.source)
            .field("documents", &self.documents)
            .field("run", &self.run)
            .finish_non_exhaustive()
    }
}

impl SyncRun {
    /// Run `run` of `target`'s source, which knows the site template `template` so far.
    pub fn new(target: &SyncTarget, run: JobId, store: DynSourceStore, template: &str) -> Self {
        SyncRun {
            source: target.source.clone(),
            store,
            documents: target.documents.clone(),
            run,
            template: known_template(template),
        }
    }

    /// The run of `record` (a crawl whose request has a [`SyncTarget`]), reading the
    /// source's template from `store`. `None` when the request is not a run of a source.
    pub async fn of(record: &JobRecord, store: &DynSourceStore) -> Result<Option<Self>> {
        let Some(target) = &record.request.sync else {
            return Ok(None);
        };
        let source = store.get_source(&target.source).await?.ok_or_else(|| {
            crate::Error::new(
                crate::ErrorKind::NotFound,
                format!("sync: no source {}", target.source),
            )
        })?;
        Ok(Some(SyncRun::new(
            target,
            record.id.clone(),
            Arc::clone(store),
            &source.template,
        )))
    }

    /// `markdown` without the template the source knew before this run.
    pub fn strip(&self, markdown: &str) -> String {
        self.template.strip(markdown)
    }

    /// What the source holds for `url`; a page removed by an earlier run counts as absent.
    pub async fn prior(&self, url: &Url) -> Result<Option<PageState>> {
        Ok(self
            .store
            .get_page(&self.source, url)
            .await?
            .filter(|p| p.change != Some(PageChange::Removed) || p.last_seen == self.run))
    }

    /// `prior`, seen by this run with `change` (kept as it was when this run had already
    /// decided it: a resumed run processing a page again).
    fn seen(&self, prior: &PageState, change: PageChange, reason: &str) -> PageState {
        let mut p = prior.clone();
        if p.last_seen == self.run && p.change.is_some() {
            return p;
        }
        let before = p.hash_before(&self.run);
        p.last_seen = self.run.clone();
        p.with_change(change, before, Some(reason))
    }

    /// A stored page answered `304` (or its sitemap `lastmod` is not newer than its last
    /// check): unchanged.
    pub fn not_modified(
        &self,
        prior: &PageState,
        reason: &str,
        now: time::OffsetDateTime,
    ) -> PageState {
        let mut p = self.seen(prior, PageChange::Unchanged, reason);
        p.fetched_at = now;
        p
    }

    /// A stored page is gone, for `reason`.
    pub fn removed(&self, prior: &PageState, reason: &str) -> PageState {
        let mut p = prior.clone();
        if p.last_seen == self.run && p.change == Some(PageChange::Removed) {
            return p;
        }
        let before = p.hash_before(&self.run);
        p.last_seen = self.run.clone();
        p.with_change(PageChange::Removed, before, Some(reason))
    }

    /// Stores or stages a fetched page's document and returns its new state: `added`
    /// (stored now), `unchanged` (nothing written) or pending (staged; decided when the
    /// run finalises).
    pub async fn page(
        &self,
        ctx: &PageContext,
        doc: &Document,
        prior: Option<PageState>,
        links: &[Url],
        validators: Validators,
    ) -> Result<PageState> {
        let url = doc.meta.url.clone();
        // A linked document is compared by its bytes: no site template in a PDF.
        let hash = match &doc.linked {
            Some(_) => doc.content_hash(),
            None => body_hash(&self.strip(&doc.markdown)),
        };
        let validated = |p: PageState| {
            p.with_links(links.to_vec())
                .with_validators(validators.etag.clone(), validators.last_modified.clone())
        };
        let added_before = prior
            .as_ref()
            .is_some_and(|p| p.last_seen == self.run && p.change == Some(PageChange::Added));
        let Some(prior) = prior.filter(|_| !added_before) else {
            let stored = super::page::store(ctx, doc).await?;
            let p = PageState::new(url, stored.key, hash, doc.meta.fetched_at, self.run.clone());
            return Ok(validated(p.with_change(PageChange::Added, None, None)));
        };
        let before = prior.hash_before(&self.run);
        let pending = pending_name(&url);
        let mut p = prior.clone();
        p.last_seen = self.run.clone();
        p.fetched_at = doc.meta.fetched_at;
        if before.as_deref() == Some(hash.as_str()) {
            if prior.change == Some(PageChange::Pending) && prior.last_seen == self.run {
                ctx.sink.delete_aux(&self.run, &pending).await?;
            }
            return Ok(validated(p.with_change(
                PageChange::Unchanged,
                before,
                Some("same_content"),
            )));
        }
        if doc.linked.is_some() {
            // Changed bytes are a change, whatever the run's template: stored at once over
            // the stored version (same key), instead of staged.
            let stored = super::page::store(ctx, doc).await?;
            p.key = stored.key;
            p.content_hash = hash;
            return Ok(validated(p.with_change(PageChange::Changed, before, None)));
        }
        ctx.sink
            .put_aux(&self.run, &pending, doc.to_file_bytes())
            .await?;
        Ok(validated(p.with_change(PageChange::Pending, before, None)))
    }

    /// Saves page states.
    pub async fn save(&self, states: &[PageState]) -> Result<()> {
        for chunk in states.chunks(BATCH) {
            self.store.put_pages(&self.source, chunk).await?;
        }
        Ok(())
    }
}

/// Ends a run of a source: decides its pending pages (with the site template this run
/// learned), strips the template from the pages it added, removes pages on evidence,
/// writes `{run}/changes.jsonl`, the run's counters and the source's template, and
/// returns the counters (the diff to hand over is read back from `changes.jsonl`:
/// [`stored_diff`](super::handoff::stored_diff)). A stored page the run did not reach is removed when the crawl
/// `complete`d without reaching its page cap, or when it now falls out of the source's
/// scope or patterns or robots.txt disallows it; otherwise it stays. Safe to re-run.
///
/// The source's pages' state is read in batches, twice (once to learn the template, once to
/// decide each page and save it), so the memory finalise takes does not grow with the
/// source; `changes.jsonl` holds the pages that changed. The template is
/// kept as `{run}/finalise-template.md` from before the first page is decided until the
/// end, so a re-run after an interruption decides with the same one.
pub async fn finalise_run(
    ctx: &PageContext,
    sync: &SyncRun,
    jobs: &DynJobStore,
    opts: &TemplateOptions,
    complete: bool,
) -> Result<ChangeCounts> {
    let sink = &ctx.sink;
    let run = &sync.run;
    let template = run_template(sink.as_ref(), sync, opts).await?;

    let mut counts = ChangeCounts::default();
    // Streamed a batch of page states at a time: the file is never whole in memory.
    let mut changes = sink
        .aux_writer(run, crate::source::ChangeLine::FILE)
        .await?;
    let mut lines = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let batch = sync
            .store
            .list_pages(&sync.source, after.as_deref(), BATCH)
            .await?;
        let mut seen = Vec::new();
        let mut purge = Vec::new();
        // Which of `seen` to save again: the states made here, and those `decide` settles
        // (added: its hash after the template pass; pending: changed or not). A state the
        // pages already settled is stored as it is: an unchanged re-sync rewrites nothing.
        let mut resave = Vec::new();
        for p in batch.pages {
            if &p.last_seen == run {
                resave.push(matches!(
                    p.change,
                    Some(PageChange::Added | PageChange::Pending) | None
                ));
                seen.push(p);
            } else if p.change == Some(PageChange::Removed) {
                purge.push(p.url);
            } else {
                let reason = ctx.exclusion(&p.url).await?;
                let removed = match reason.as_deref() {
                    Some(r) if is_exclusion_evidence(r) => Some(sync.removed(&p, r)),
                    _ if complete => Some(sync.removed(&p, "not_reached")),
                    _ => None,
                };
                if let Some(state) = removed {
                    seen.push(state);
                    resave.push(true);
                }
            }
        }
        let staged = decide(sink.as_ref(), sync, &template, &mut seen, &mut counts).await?;
        let settled: Vec<PageState> = seen
            .iter()
            .zip(&resave)
            .filter(|(_, again)| **again)
            .map(|(p, _)| p.clone())
            .collect();
        sync.save(&settled).await?;
        // The staged copies of decided pages are no longer needed.
        for url in &staged {
            sink.delete_aux(run, &pending_name(url)).await?;
        }
        if !purge.is_empty() {
            sync.store.remove_pages(&sync.source, &purge).await?;
        }
        for p in seen.iter().filter(|p| {
            matches!(
                p.change,
                Some(PageChange::Added | PageChange::Changed | PageChange::Removed)
            )
        }) {
            let line = crate::source::ChangeLine::of(p);
            serde_json::to_writer(&mut lines, &line)
                .map_err(|e| crate::Error::new(crate::ErrorKind::Internal, e.to_string()))?;
            lines.push(b'\n');
        }
        if !lines.is_empty() {
            changes.write(&lines).await?;
            lines.clear();
        }
        match batch.next {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    changes.finish().await?;
    jobs.record_changes(run, &counts).await?;

    let template_md = template.template_markdown();
    if opts.write_site_document && !template_md.trim().is_empty() {
        sink.put_aux(
            &sync.documents,
            "site-template.md",
            template_md.clone().into_bytes(),
        )
        .await?;
    }
    // Read again: the record may have been edited (settings, schedule) while the run went.
    if let Some(mut s) = sync.store.get_source(&sync.source).await? {
        s.template = template_md;
        s.last_run = Some(run.clone());
        s.documents = Some(sync.documents.clone());
        sync.store.put_source(&s).await?;
    }
    sink.finish_job(&sync.documents).await?;
    sink.delete_aux(run, RUN_TEMPLATE).await?;
    Ok(counts)
}

/// Where a run keeps the template it decides its pages with.
const RUN_TEMPLATE: &str = "finalise-template.md";

/// The template a run's pages are decided with: the one kept by an earlier attempt at
/// finalising this run, else the source's template plus what this run's freshly fetched
/// pages (added or pending) show, when they are enough of the run's pages to tell
/// template from content. Learned from an evenly spread sample of at most
/// `TEMPLATE_SAMPLE` pages, read in one pass over the pages' state.
async fn run_template(
    sink: &dyn Sink,
    sync: &SyncRun,
    opts: &TemplateOptions,
) -> Result<TemplateLearner> {
    let run = &sync.run;
    let kept = crate::keys::aux_key(run, RUN_TEMPLATE)?;
    if let Some(bytes) = sink.get(&kept).await? {
        return Ok(known_template(&String::from_utf8_lossy(&bytes)));
    }
    let mut sample = super::sample::SpreadSample::new();
    let mut fetched = 0usize;
    let mut after: Option<String> = None;
    loop {
        let batch = sync
            .store
            .list_pages(&sync.source, after.as_deref(), BATCH)
            .await?;
        for p in batch.pages.into_iter().filter(|p| &p.last_seen == run) {
            match p.change {
                Some(c @ (PageChange::Added | PageChange::Pending)) => {
                    sample.offer((p.url, p.key, c));
                    fetched += 1;
                }
                Some(PageChange::Removed) => {}
                _ => fetched += 1,
            }
        }
        match batch.next {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    let source = sync.store.get_source(&sync.source).await?;
    let mut template = known_template(source.as_ref().map_or("", |s| s.template.as_str()));
    if opts.enabled
        && sample.seen() >= opts.min_pages.max(2)
        && sample.seen() as f64 >= opts.min_fraction * fetched as f64
    {
        let mut learner = TemplateLearner::new(opts.min_pages, opts.min_fraction);
        for (url, key, change) in sample.into_spread() {
            if let Some((_, body)) = read_fresh_at(sink, run, &url, &key, change).await? {
                learner.observe(&body);
            }
        }
        let learned = learner.template_markdown();
        if !learned.trim().is_empty() {
            template.observe(&learned);
        }
    }
    sink.put_aux(run, RUN_TEMPLATE, template.template_markdown().into_bytes())
        .await?;
    Ok(template)
}

/// Decides a batch of the run's pages (`seen`) with `template`, counting them in `counts`;
/// returns the URLs whose staged copy is no longer needed.
async fn decide(
    sink: &dyn Sink,
    sync: &SyncRun,
    template: &TemplateLearner,
    seen: &mut [PageState],
    counts: &mut ChangeCounts,
) -> Result<Vec<Url>> {
    let run = &sync.run;
    let mut staged = Vec::new();
    for p in seen.iter_mut() {
        match p.change {
            Some(PageChange::Added) => {
                if let Some((meta, body)) = read_fresh(sink, run, p).await? {
                    let stripped = template.strip(&body);
                    let stored = StoredDoc::new(p.url.clone(), p.key.clone(), String::new());
                    if stripped.trim() != body.trim() && !stripped.trim().is_empty() {
                        let doc = Document::new(sync.documents.clone(), meta, stripped.clone());
                        sink.replace(&stored, &doc).await?;
                    }
                    p.content_hash = body_hash(&stripped);
                }
                counts.added += 1;
            }
            Some(PageChange::Pending) => {
                staged.push(p.url.clone());
                match read_fresh(sink, run, p).await? {
                    Some((meta, body)) => {
                        let stripped = template.strip(&body);
                        let hash = body_hash(&stripped);
                        if p.previous_hash.as_deref() == Some(hash.as_str()) {
                            p.change = Some(PageChange::Unchanged);
                            p.reason = Some("same_content".into());
                            counts.unchanged += 1;
                        } else {
                            let keep = if stripped.trim().is_empty() {
                                body
                            } else {
                                stripped
                            };
                            let doc = Document::new(sync.documents.clone(), meta, keep);
                            let stored =
                                StoredDoc::new(p.url.clone(), p.key.clone(), String::new());
                            sink.replace(&stored, &doc).await?;
                            p.change = Some(PageChange::Changed);
                            counts.changed += 1;
                            // With the new hash (as `changes.jsonl` has it), not the old one.
                            p.content_hash.clone_from(&hash);
                        }
                        p.content_hash = hash;
                    }
                    None => {
                        // The staged document is gone (it cannot be, short of someone
                        // deleting it): keep the stored version.
                        p.change = Some(PageChange::Unchanged);
                        p.reason = Some("pending_lost".into());
                        counts.unchanged += 1;
                    }
                }
            }
            Some(PageChange::Changed) => {
                counts.changed += 1;
            }
            Some(PageChange::Unchanged) => counts.unchanged += 1,
            Some(PageChange::Removed) => {
                // The source's entry (key and hash), as `changes.jsonl` has it: a retried
                // hand-off reads the same diff back from there.
                sink.remove(&sync.documents, &p.url).await?;
                counts.removed += 1;
            }
            None => {}
        }
    }
    Ok(staged)
}

/// The fresh document of an added page (stored) or a pending one (staged).
async fn read_fresh(
    sink: &dyn Sink,
    run: &JobId,
    p: &PageState,
) -> Result<Option<(crate::page::DocumentMeta, String)>> {
    match p.change {
        Some(c) => read_fresh_at(sink, run, &p.url, &p.key, c).await,
        None => read_fresh_at(sink, run, &p.url, &p.key, PageChange::Added).await,
    }
}

/// [`read_fresh`] of the page at `url` stored at `key`, `change`d.
async fn read_fresh_at(
    sink: &dyn Sink,
    run: &JobId,
    url: &Url,
    key: &str,
    change: PageChange,
) -> Result<Option<(crate::page::DocumentMeta, String)>> {
    let key = match change {
        PageChange::Pending => crate::keys::aux_key(run, &pending_name(url))?,
        _ => key.to_owned(),
    };
    Ok(sink
        .get(&key)
        .await?
        .as_deref()
        .and_then(crate::keys::parse_file))
}

/// Begins run `id` of the source of `request`'s root under `tenant` (creating the source on
/// its first run): refuses with [`ErrorKind::Conflict`](crate::ErrorKind::Conflict) while
/// another run of it is going, points the request at the source ([`SyncTarget`]), saves the
/// source and creates the run's job record. The embedded [`Crawler::start_sync`] and a
/// serverless runner (before it starts the execution) both begin runs here.
///
/// [`Crawler::start_sync`]: super::Crawler::start_sync
pub async fn begin_run(
    store: &DynSourceStore,
    jobs: &DynJobStore,
    tenant: &str,
    id: JobId,
    mut request: crate::CrawlRequest,
    now: time::OffsetDateTime,
) -> Result<(SourceRecord, JobRecord)> {
    let root = crate::url::normalize(&request.url)
        .ok_or_else(|| crate::Error::invalid("url: the root URL is not http(s)"))?;
    let mut source = source_for(store, tenant, &root, now).await?;
    if let Some(last) = &source.last_run {
        if let Some(r) = jobs.get(last).await? {
            if !r.status.is_final() {
                return Err(crate::Error::new(
                    crate::ErrorKind::Conflict,
                    format!("source {}: run {last} is still going", source.id),
                ));
            }
        }
    }
    let documents = source.documents.clone().unwrap_or_else(|| id.clone());
    request.sync = Some(SyncTarget::new(source.id.clone(), documents.clone()));
    source.documents = Some(documents);
    source.last_run = Some(id.clone());
    source.settings = serde_json::to_value(crate::StartCrawl::from(&request)).unwrap_or_default();
    store.put_source(&source).await?;
    let record = JobRecord::new(id, request, now);
    jobs.create(&record).await?;
    Ok((source, record))
}

/// Creates the source of `root` under `tenant`, or returns the one there is.
pub async fn source_for(
    store: &DynSourceStore,
    tenant: &str,
    root: &Url,
    now: time::OffsetDateTime,
) -> Result<SourceRecord> {
    let fresh = SourceRecord::new(tenant, root.clone(), now);
    match store.get_source(&fresh.id).await? {
        Some(s) => Ok(s),
        None => Ok(fresh),
    }
}

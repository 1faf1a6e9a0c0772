//! One page: fetch (following redirects ourselves), decode, extract, render when needed,
//! and store; the links it found go back to the caller for admission.
//!
//! [`process_page`] is engine-independent: the embedded [`Crawler`](super::Crawler) and a
//! serverless worker run the same code for a page.

use std::time::Duration;

use url::Url;

use super::context::PageContext;
use crate::error::{Error, ErrorKind, Result};
use crate::extract::{decode_html, extract, ExtractOptions, Extracted};
use crate::job::PageOutcome;
use crate::page::{
    Document, DocumentMeta, FetchPath, FetchRequest, RenderRequest, Validators, WaitStrategy,
};
use crate::request::RenderMode;
use crate::source::PageState;
use crate::traits::FrontierEntry;
use crate::url::normalize;

/// Redirect hops followed for one page.
pub(super) const MAX_REDIRECTS: usize = 10;

/// Pages larger than this are extracted one at a time in the process: extracting a page
/// costs about 25 times its size at its peak (a 6 MB page of 300,000 links, 170 MB), so
/// several at once would multiply that; ordinary pages never wait.
const BIG_PAGE: usize = 1 << 20;

/// The one permit for extracting a [`BIG_PAGE`].
static BIG_EXTRACTION: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

/// Waits for the big-page permit when `html` is a big page.
async fn big_page_permit(html: &str) -> Option<tokio::sync::SemaphorePermit<'static>> {
    if html.len() > BIG_PAGE {
        BIG_EXTRACTION.acquire().await.ok()
    } else {
        None
    }
}

type BigJob = (
    String,
    Url,
    ExtractOptions,
    tokio::sync::oneshot::Sender<Option<Extracted>>,
);

/// Runs `f`, an extraction, and turns a panic in it into `None`: one page the extractor
/// cannot handle is skipped as `extract_failed`, and the crawl (and the big-page thread)
/// goes on.
fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).ok()
}

/// The thread big pages are extracted on: one thread, so the memory of one extraction is
/// reused by the next instead of each runtime worker's allocator arena keeping its own
/// peak. `None` when the thread could not be started (pages are then extracted in place).
fn big_page_thread() -> Option<&'static std::sync::mpsc::Sender<BigJob>> {
    static THREAD: std::sync::OnceLock<Option<std::sync::mpsc::Sender<BigJob>>> =
        std::sync::OnceLock::new();
    THREAD
        .get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::channel::<BigJob>();
            std::thread::Builder::new()
                .name("kb-crawl-extract".into())
                .spawn(move || {
                    for (html, url, opts, reply) in rx {
                        let ex = guarded(|| extract(&html, &url, &opts));
                        drop(html);
                        let _ = reply.send(ex);
                    }
                })
                .ok()
                .map(|_| tx)
        })
        .as_ref()
}

/// Extracts `html` (fetched from `url`); a big page on the big-page thread. `None` when
/// the extractor panicked on it.
async fn extract_page(html: String, url: &Url, opts: &ExtractOptions) -> Option<Extracted> {
    if html.len() > BIG_PAGE {
        if let Some(thread) = big_page_thread() {
            let (reply, done) = tokio::sync::oneshot::channel();
            match thread.send((html, url.clone(), opts.clone(), reply)) {
                Ok(()) => {
                    // The thread gone (it cannot be, its work is guarded): as a panic.
                    return done.await.ok().flatten();
                }
                Err(std::sync::mpsc::SendError((html, ..))) => {
                    return guarded(|| extract(&html, url, opts))
                }
            }
        }
    }
    guarded(|| extract(&html, url, opts))
}

/// How one page ended, and the links to admit at the next depth (empty when the page is
/// `nofollow`, at `max_depth`, or was skipped before extraction).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PageResult {
    /// Stored, or skipped with a reason.
    pub outcome: PageOutcome,
    /// Links found on the page to admit at `depth + 1`: normalized, in scope, one per
    /// dedup key, at most the request's `max_links_per_page`, in document order.
    pub links: Vec<Url>,
    /// In-scope links of the page beyond `max_links_per_page`, dropped (counted as
    /// excluded `links_per_page`).
    pub links_over_cap: u64,
}

impl PageResult {
    fn skipped(code: impl Into<String>) -> Result<Self> {
        Ok(PageResult {
            outcome: PageOutcome::Skipped(code.into()),
            links: Vec::new(),
            links_over_cap: 0,
        })
    }
}

/// A page's HTML and where it came from.
struct Loaded {
    url: Url,
    html: String,
    path: FetchPath,
    x_robots_noindex: bool,
    x_robots_nofollow: bool,
    /// The validators the server sent (`ETag`, `Last-Modified`).
    validators: Validators,
}

/// A linked document (see [`crate::linked`]), its type checked.
struct LinkedLoaded {
    url: Url,
    body: crate::linked::LinkedBody,
    x_robots_noindex: bool,
    validators: Validators,
}

enum Load {
    Page(Loaded),
    Linked(LinkedLoaded),
    Skip(String),
    /// `304 Not Modified` for a page the source has.
    NotModified(PageState),
}

/// What a run of a source learns about stored pages while one page is processed.
#[derive(Default)]
struct Visit {
    /// The source's state of the URL the page ended at.
    prior: Option<PageState>,
    /// Stored pages that now redirect (each a hop of this page's redirect chain).
    moved: Vec<PageState>,
    /// The page's new state, once stored, staged or found unchanged.
    state: Option<PageState>,
}

/// Processes one admitted page: redirects (each hop re-checked against scope, policy and
/// robots.txt, and claimed in the dedup store), status, content-type and binary checks,
/// `X-Robots-Tag`, extraction, rendering when the mode asks for it, canonical-duplicate
/// claims, `noindex`, empty content, and the sink write. Errors only when a backend (sink,
/// dedup) failed for good; everything about the page itself ends as an outcome. Running it
/// twice for the same entry stores one document (claims and `Sink::put` are idempotent).
///
/// In a run of a source ([`PageContext::sync`]) the page is compared with its stored version
/// (see [`SyncRun`](super::SyncRun)) and its new state saved.
pub async fn process_page(ctx: &PageContext, entry: &FrontierEntry) -> Result<PageResult> {
    let mut visit = Visit::default();
    let r = visit_page(ctx, entry, &mut visit).await?;
    if let Some(sync) = &ctx.sync {
        let mut states: Vec<PageState> = visit
            .moved
            .iter()
            .map(|p| sync.removed(p, "redirected"))
            .collect();
        match (&r.outcome, visit.state.take(), &visit.prior) {
            (_, Some(state), _) => states.push(state),
            (PageOutcome::Skipped(code), None, Some(prior))
                if super::sync::is_removal_evidence(code) =>
            {
                states.push(sync.removed(prior, code));
            }
            _ => {}
        }
        sync.save(&states).await?;
    }
    Ok(r)
}

/// A stored page found unchanged without a body: stored, and its stored links followed.
fn unchanged(ctx: &PageContext, entry: &FrontierEntry, prior: &PageState) -> PageResult {
    let (links, links_over_cap) = if entry.depth < ctx.request.max_depth {
        ctx.page_links(prior.links.iter())
    } else {
        (Vec::new(), 0)
    };
    PageResult {
        outcome: PageOutcome::Stored,
        links,
        links_over_cap,
    }
}

async fn visit_page(
    ctx: &PageContext,
    entry: &FrontierEntry,
    visit: &mut Visit,
) -> Result<PageResult> {
    let req = &*ctx.request;
    // A sitemap `lastmod` not newer than the page's last check: no request at all.
    if let (Some(sync), Some(lastmod)) = (&ctx.sync, entry.lastmod) {
        if let Some(prior) = sync.prior(&entry.url).await? {
            if lastmod <= prior.fetched_at {
                let r = unchanged(ctx, entry, &prior);
                visit.state = Some(sync.not_modified(&prior, "sitemap_lastmod", ctx.clock.now()));
                return Ok(r);
            }
        }
    }
    let loaded = match req.render {
        RenderMode::Always => render(ctx, &entry.url, visit).await?,
        RenderMode::Never | RenderMode::Auto => fetch(ctx, &entry.url, visit).await?,
    };
    let mut page = match loaded {
        Load::Page(p) => p,
        Load::Linked(l) => return linked_page(ctx, entry, visit, l).await,
        Load::Skip(code) => return PageResult::skipped(code),
        Load::NotModified(prior) => return Ok(not_modified(ctx, entry, visit, &prior)),
    };
    let mut big = big_page_permit(&page.html).await;
    // Auto mode looks at the fetched HTML again after extraction: keep it then.
    let auto = req.render == RenderMode::Auto && ctx.renderer.is_some();
    let html = if auto {
        page.html.clone()
    } else {
        std::mem::take(&mut page.html)
    };
    let Some(mut ex) = extract_page(html, &page.url, &req.extract).await else {
        return PageResult::skipped("extract_failed");
    };
    let mut render_reason = None;
    if auto {
        let needs = crate::detect::needs_render(&page.html, ex.text_len, ex.script_bytes);
        page.html = String::new();
        if let Some(reason) = needs {
            drop(big.take());
            match render(ctx, &page.url, visit).await? {
                Load::Page(mut p) => {
                    big = big_page_permit(&p.html).await;
                    let Some(rendered) =
                        extract_page(std::mem::take(&mut p.html), &p.url, &req.extract).await
                    else {
                        return PageResult::skipped("extract_failed");
                    };
                    ex = rendered;
                    // The HTML's validators still say whether the page changed.
                    p.validators = std::mem::take(&mut page.validators);
                    page = p;
                    render_reason = Some(reason.to_owned());
                }
                // The browser never answers with a linked document.
                Load::Linked(_) => return PageResult::skipped("not_html"),
                Load::Skip(code) => return PageResult::skipped(code),
                Load::NotModified(prior) => return Ok(not_modified(ctx, entry, visit, &prior)),
            }
        }
    }
    if entry.depth > 0
        && ctx.soft404.is_some()
        && ctx.soft404 == Some(page_fingerprint(&ex.markdown, &page.url))
    {
        return PageResult::skipped("soft_404");
    }
    let nofollow = ex.meta_robots.nofollow || page.x_robots_nofollow;
    if let Some(canonical) = canonical_duplicate(ctx, &ex, &page.url).await? {
        tracing::debug!(url = %page.url, %canonical, "duplicate of its canonical");
        return PageResult::skipped("duplicate_canonical");
    }
    let (links, links_over_cap) = if !nofollow && entry.depth < req.max_depth {
        ctx.page_links(ex.links.iter().map(|l| &l.url))
    } else {
        (Vec::new(), 0)
    };
    drop(std::mem::take(&mut ex.links));
    drop(big);
    let skip = |code: &str| {
        Ok(PageResult {
            outcome: PageOutcome::Skipped(code.to_owned()),
            links: links.clone(),
            links_over_cap,
        })
    };
    if ex.meta_robots.noindex || page.x_robots_noindex {
        return skip("noindex");
    }
    if ex.markdown.trim().is_empty() {
        return skip("empty_content");
    }
    let doc = Document::new(
        ctx.documents_job().clone(),
        DocumentMeta {
            url: page.url.clone(),
            canonical: ex.canonical.clone(),
            title: ex.title.clone(),
            description: ex.description.clone(),
            language: ex.language.clone(),
            fetched_at: ctx.clock.now(),
            depth: entry.depth,
            path: page.path,
            render_reason,
        },
        std::mem::take(&mut ex.markdown),
    );
    match &ctx.sync {
        None => {
            store(ctx, &doc).await?;
        }
        Some(sync) => {
            let prior = visit.prior.take();
            let validators = std::mem::take(&mut page.validators);
            visit.state = Some(sync.page(ctx, &doc, prior, &links, validators).await?);
        }
    }
    Ok(PageResult {
        outcome: PageOutcome::Stored,
        links,
        links_over_cap,
    })
}

/// A linked document: stored (or, in a run of a source, compared with its stored version)
/// like a page, by its bytes; it has no links to follow.
async fn linked_page(
    ctx: &PageContext,
    entry: &FrontierEntry,
    visit: &mut Visit,
    l: LinkedLoaded,
) -> Result<PageResult> {
    if l.x_robots_noindex {
        return PageResult::skipped("noindex");
    }
    // The file's name without its extension: the key's stem (`handbook.pdf` → `handbook`).
    let title = l
        .url
        .path_segments()
        .and_then(|mut s| s.next_back())
        .map(|name| name.rsplit_once('.').map_or(name, |(stem, _)| stem))
        .filter(|stem| !stem.is_empty())
        .map(str::to_owned);
    let doc = Document::linked(
        ctx.documents_job().clone(),
        DocumentMeta {
            url: l.url,
            canonical: None,
            title,
            description: None,
            language: None,
            fetched_at: ctx.clock.now(),
            depth: entry.depth,
            path: FetchPath::Http,
            render_reason: None,
        },
        l.body,
    );
    match &ctx.sync {
        None => {
            store(ctx, &doc).await?;
        }
        Some(sync) => {
            let prior = visit.prior.take();
            visit.state = Some(sync.page(ctx, &doc, prior, &[], l.validators).await?);
        }
    }
    Ok(PageResult {
        outcome: PageOutcome::Stored,
        links: Vec::new(),
        links_over_cap: 0,
    })
}

/// The page's canonical URL when it names another in-scope page that the job already has
/// (so this page is a duplicate).
async fn canonical_duplicate(ctx: &PageContext, ex: &Extracted, url: &Url) -> Result<Option<Url>> {
    let Some(c) = ex.canonical.as_ref().and_then(normalize) else {
        return Ok(None);
    };
    if ctx.key(&c) == ctx.key(url) || !ctx.gate.scope().contains(&c) {
        return Ok(None);
    }
    Ok(if ctx.claim(url, &c).await? {
        None
    } else {
        Some(c)
    })
}

/// A `304` for a stored page.
fn not_modified(
    ctx: &PageContext,
    entry: &FrontierEntry,
    visit: &mut Visit,
    prior: &PageState,
) -> PageResult {
    let r = unchanged(ctx, entry, prior);
    if let Some(sync) = &ctx.sync {
        visit.state = Some(sync.not_modified(prior, "not_modified", ctx.clock.now()));
    }
    r
}

/// Puts a document, retrying a temporary sink failure; where it landed.
pub(super) async fn store(ctx: &PageContext, doc: &Document) -> Result<crate::page::StoredDoc> {
    let mut delay = Duration::from_millis(100);
    let mut attempt = 0;
    loop {
        attempt += 1;
        match ctx.sink.put(doc).await {
            Ok(stored) => return Ok(stored),
            Err(e) if e.is_temporary() && attempt < 4 => {
                tracing::warn!(error = %e, attempt, "sink write failed, retrying");
                tokio::time::sleep(delay).await;
                delay *= 2;
            }
            Err(e) => {
                return Err(Error::new(
                    ErrorKind::Storage,
                    format!("sink {} failed for good: {}", ctx.sink, e),
                )
                .with_url(&doc.meta.url)
                .with_temporary(false))
            }
        }
    }
}

async fn fetch(ctx: &PageContext, start: &Url, visit: &mut Visit) -> Result<Load> {
    let req = &*ctx.request;
    let mut url = start.clone();
    let mut hops = 0;
    loop {
        let prior = match &ctx.sync {
            Some(sync) => sync.prior(&url).await?,
            None => None,
        };
        let mut freq = FetchRequest::page(url.clone()).with_job(&ctx.job);
        if !ctx.linked_types.is_empty() {
            freq = freq.with_linked(ctx.linked_types.clone());
        }
        if let Some(p) = &prior {
            freq = freq.with_validators(Validators::new(p.etag.clone(), p.last_modified.clone()));
        }
        let resp = match ctx.fetcher.fetch(&freq).await {
            Ok(r) => r,
            Err(e) => {
                visit.prior = prior;
                return Ok(Load::Skip(e.code().into_owned()));
            }
        };
        if resp.is_not_modified() {
            return Ok(match prior {
                Some(p) => Load::NotModified(p),
                None => Load::Skip("http_304".into()),
            });
        }
        if let Some(next) = resp.redirect_target() {
            // A stored page that now redirects is gone; its target is a page of its own.
            if let Some(p) = prior {
                visit.moved.push(p);
            }
            hops += 1;
            if hops > MAX_REDIRECTS {
                return Ok(Load::Skip("too_many_redirects".into()));
            }
            let Some(next) = normalize(&next) else {
                return Ok(Load::Skip("redirect_not_http".into()));
            };
            if let Err(e) = ctx.gate.check(&next) {
                return Ok(Load::Skip(match e.kind() {
                    ErrorKind::OutOfScope => "redirect_out_of_scope".into(),
                    _ => e.code().into_owned(),
                }));
            }
            if !ctx.patterns.allows(&next) {
                return Ok(Load::Skip("redirect_excluded_pattern".into()));
            }
            if let Err(e) = ctx.fetcher.check(&next, Some(&ctx.job)).await {
                return Ok(Load::Skip(e.code().into_owned()));
            }
            if ctx.key(&next) != ctx.key(start) && !ctx.claim(start, &next).await? {
                // The target is (or will be) crawled as its own page.
                return Ok(Load::Skip("duplicate_redirect".into()));
            }
            url = next;
            continue;
        }
        visit.prior = prior;
        if !(200..300).contains(&resp.status) {
            return Ok(Load::Skip(format!("http_{}", resp.status)));
        }
        let ct = resp.header("content-type").map(str::to_owned);
        let xr = resp
            .headers
            .iter()
            .filter(|(n, _)| n == "x-robots-tag")
            .map(|(_, v)| x_robots_applies(v, &req.user_agent))
            .fold((false, false), |a, b| (a.0 || b.0, a.1 || b.1));
        if let Some(kind) = ct
            .as_deref()
            .and_then(crate::linked::LinkedType::from_content_type)
            .filter(|k| ctx.linked_types.contains(k))
        {
            // Declared as a linked document: its bytes must say so too.
            if !kind.matches(&resp.body) {
                return Ok(Load::Skip(crate::linked::TYPE_MISMATCH.into()));
            }
            let validators = resp.validators();
            return Ok(Load::Linked(LinkedLoaded {
                url,
                body: crate::linked::LinkedBody::new(kind, resp.body),
                x_robots_noindex: xr.0,
                validators,
            }));
        }
        if resp.body.is_empty() {
            return Ok(Load::Skip(
                if ct.as_deref().is_some_and(crate::http::is_html_type) || ct.is_none() {
                    "empty_content".into()
                } else {
                    "not_html".into()
                },
            ));
        }
        if ct.as_deref().is_some_and(|c| !crate::http::is_html_type(c))
            || crate::http::is_binary(&resp.body)
        {
            return Ok(Load::Skip("not_html".into()));
        }
        let html = decode_html(&resp.body, ct.as_deref());
        return Ok(Load::Page(Loaded {
            url,
            html,
            path: FetchPath::Http,
            x_robots_noindex: xr.0,
            x_robots_nofollow: xr.1,
            validators: resp.validators(),
        }));
    }
}

async fn render(ctx: &PageContext, url: &Url, visit: &mut Visit) -> Result<Load> {
    let Some(renderer) = &ctx.renderer else {
        return Ok(Load::Skip("render_unavailable".into()));
    };
    // The browser's page load counts against the host's rate like a fetch.
    if let Err(e) = ctx.fetcher.pace(url, Some(&ctx.job)).await {
        return Ok(Load::Skip(e.code().into_owned()));
    }
    let rreq = RenderRequest {
        url: url.clone(),
        deadline: ctx.render_deadline,
        wait: WaitStrategy::NetworkIdle,
        gate: ctx.gate.clone(),
    };
    let p = match renderer.render(&rreq).await {
        Ok(p) => p,
        Err(e) => return Ok(Load::Skip(e.code().into_owned())),
    };
    if p.status >= 400 {
        return Ok(Load::Skip(format!("http_{}", p.status)));
    }
    let final_url = normalize(&p.final_url).unwrap_or_else(|| url.clone());
    if !ctx.gate.scope().contains(&final_url) {
        return Ok(Load::Skip("redirect_out_of_scope".into()));
    }
    if !ctx.patterns.allows(&final_url) {
        return Ok(Load::Skip("redirect_excluded_pattern".into()));
    }
    // A server or client redirect in the browser is claimed like an HTTP redirect.
    if ctx.key(&final_url) != ctx.key(url) && !ctx.claim(url, &final_url).await? {
        return Ok(Load::Skip("duplicate_redirect".into()));
    }
    if let Some(sync) = &ctx.sync {
        if &final_url != url {
            visit.prior = sync.prior(&final_url).await?;
        } else if visit.prior.is_none() {
            visit.prior = sync.prior(url).await?;
        }
    }
    Ok(Load::Page(Loaded {
        url: final_url,
        html: p.html,
        path: FetchPath::Rendered,
        x_robots_noindex: false,
        x_robots_nofollow: false,
        validators: Validators::default(),
    }))
}

/// A fingerprint of a page's markdown that ignores the page's own URL and path (soft-404
/// pages often repeat the path that was asked for).
fn page_fingerprint(markdown: &str, url: &Url) -> u64 {
    use std::hash::{Hash, Hasher};
    let text = markdown.replace(url.as_str(), "").replace(url.path(), "");
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for w in text.split_whitespace() {
        w.hash(&mut h);
    }
    h.finish()
}

/// Asks the site for a path that cannot exist. When it answers 200 with HTML (a soft-404
/// site), returns the answer's fingerprint for [`PageContext::with_soft404`]. The probe
/// goes through the fetcher (robots.txt, rate limit) and does not count as a page.
pub async fn probe_soft_404(ctx: &PageContext) -> Option<u64> {
    let probe = ctx
        .request
        .url
        .join(&format!(
            "/kb-crawl-probe-{:016x}-not-found",
            rand::random::<u64>()
        ))
        .ok()?;
    ctx.gate.check(&probe).ok()?;
    ctx.fetcher.check(&probe, Some(&ctx.job)).await.ok()?;
    let resp = ctx
        .fetcher
        .fetch(&FetchRequest::page(probe.clone()).with_job(&ctx.job))
        .await
        .ok()?;
    if resp.status != 200 || resp.body.is_empty() || crate::http::is_binary(&resp.body) {
        return None;
    }
    let html = decode_html(&resp.body, resp.header("content-type"));
    let ex = guarded(|| extract(&html, &probe, &ctx.request.extract))?;
    if ex.markdown.trim().is_empty() {
        return None;
    }
    tracing::info!(job = %ctx.job, "the site answers 200 for missing pages; soft-404 detection on");
    Some(page_fingerprint(&ex.markdown, &probe))
}

/// `(noindex, nofollow)` from one `X-Robots-Tag` value, honouring a `botname:` prefix.
fn x_robots_applies(value: &str, user_agent: &str) -> (bool, bool) {
    let token = user_agent
        .split(['/', ' '])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let v = value.to_ascii_lowercase();
    let directives = match v.split_once(':') {
        Some((bot, rest)) if !bot.contains(',') && !bot.trim().contains(' ') => {
            if bot.trim() == token {
                rest.to_owned()
            } else {
                return (false, false);
            }
        }
        _ => v,
    };
    let mut out = (false, false);
    for d in directives.split(',').map(str::trim) {
        match d {
            "noindex" => out.0 = true,
            "nofollow" => out.1 = true,
            "none" => out = (true, true),
            _ => {}
        }
    }
    out
}

/// Removes blocks that repeat across the job's pages (site template) from every stored
/// document, once the crawl has ended.
pub(super) async fn strip_templates(inner: &super::Inner, record: &crate::JobRecord) -> Result<()> {
    if inner.template.enabled {
        strip_site_template(&*inner.sink, &record.id, &inner.template).await?;
    }
    Ok(())
}

/// Site-template pass over a job's stored documents: learns the blocks that repeat across
/// pages, rewrites every document without them, and (optionally) stores them once as
/// `site-template.md`. Reads only what the sink holds: no page is fetched again. Returns how
/// many documents changed. Pages through the job twice ([`Sink::list_page`](crate::Sink)):
/// its memory does not grow with the job.
pub async fn strip_site_template(
    sink: &dyn crate::Sink,
    job: &crate::JobId,
    opts: &super::TemplateOptions,
) -> Result<usize> {
    // A site template shows on any sample of the site's pages: learning from an evenly
    // spread sample keeps this pass's memory bounded however large the crawl.
    let mut sample = super::sample::SpreadSample::new();
    crate::traits::for_each_doc_page(sink, job, crate::LIST_PAGE, |docs| {
        docs.into_iter().for_each(|d| sample.offer(d.key));
        async { Ok::<(), crate::Error>(()) }
    })
    .await?;
    if sample.seen() < opts.min_pages.max(2) {
        return Ok(0);
    }
    let mut learner =
        crate::extract::template::TemplateLearner::new(opts.min_pages, opts.min_fraction);
    for key in sample.into_spread() {
        if let Some((_, body)) = sink
            .get(&key)
            .await?
            .as_deref()
            .and_then(crate::keys::parse_file)
        {
            learner.observe(&body);
        }
    }
    let template = learner.template_markdown();
    if template.trim().is_empty() {
        return Ok(0);
    }
    let mut changed = 0;
    let mut after: Option<String> = None;
    loop {
        let page = sink
            .list_page(job, after.as_deref(), crate::LIST_PAGE)
            .await?;
        for d in &page.docs {
            let Some((meta, body)) = sink
                .get(&d.key)
                .await?
                .as_deref()
                .and_then(crate::keys::parse_file)
            else {
                continue;
            };
            let stripped = learner.strip(&body);
            if stripped.trim() == body.trim() || stripped.trim().is_empty() {
                continue;
            }
            let doc = Document::new(job.clone(), meta, stripped);
            sink.replace(d, &doc).await?;
            changed += 1;
        }
        match page.next {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    if opts.write_site_document {
        sink.put_aux(job, "site-template.md", template.into_bytes())
            .await?;
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x_robots_tag_parsing() {
        assert_eq!(
            x_robots_applies("noindex, nofollow", "kb-crawl/0.1"),
            (true, true)
        );
        assert_eq!(x_robots_applies("none", "kb-crawl/0.1"), (true, true));
        assert_eq!(
            x_robots_applies("googlebot: noindex", "kb-crawl/0.1"),
            (false, false)
        );
        assert_eq!(
            x_robots_applies("kb-crawl: noindex", "kb-crawl/0.1"),
            (true, false)
        );
        assert_eq!(
            x_robots_applies("unavailable_after: 2020", "kb-crawl/0.1"),
            (false, false)
        );
    }

    #[test]
    fn a_panicking_extraction_is_none() {
        // The page is skipped as `extract_failed`; the panic goes no further.
        let failed: Option<u32> = guarded(|| panic!("extractor bug"));
        assert_eq!(failed, None);
        assert_eq!(guarded(|| 7), Some(7));
    }
}

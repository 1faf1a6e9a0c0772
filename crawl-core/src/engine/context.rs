//! What one page needs, independent of the engine: the pieces both the embedded
//! [`Crawler`](super::Crawler) and a serverless worker (one Lambda per page) hand to
//! [`process_page`](super::process_page), and the admission checks for the links it finds.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use url::Url;

use crate::clock::DynClock;
use crate::error::{ErrorKind, Result};
use crate::job::JobId;
use crate::net::{NetworkPolicy, RequestGate};
use crate::request::CrawlRequest;
use crate::traits::{Candidate, DynDedupStore, DynFetcher, DynRenderer, DynSink, FrontierEntry};
use crate::url::{dedup_key, normalize, trap_reason, Scope, UrlPatterns};

/// The scope and network policy of a request, as one gate.
pub fn request_gate(req: &CrawlRequest) -> RequestGate {
    let policy = if req.allow_private_network {
        NetworkPolicy::allow_private()
    } else {
        NetworkPolicy::public_only()
    };
    RequestGate::new(Arc::new(Scope::of(req)), policy)
}

/// The compiled patterns of a request. A request that was never validated and holds a
/// broken pattern gets patterns that keep everything out: such a crawl fails closed.
fn request_patterns(req: &CrawlRequest) -> UrlPatterns {
    match UrlPatterns::new(&req.include, &req.exclude) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!(error = %e, "invalid patterns in an unvalidated request; nothing is admitted");
            UrlPatterns::new(&[], &["**".to_owned()]).unwrap_or_default()
        }
    }
}

/// Everything [`process_page`](super::process_page) uses: the job, its request, and the
/// backends (fetcher, optional renderer, sink, dedup store, clock). Cheap to clone.
#[derive(Clone)]
#[non_exhaustive]
pub struct PageContext {
    /// The job the page belongs to.
    pub job: JobId,
    /// The job's request.
    pub request: Arc<CrawlRequest>,
    /// The fetcher (normally with the politeness layers).
    pub fetcher: DynFetcher,
    /// The browser for `always` and `auto` render modes.
    pub renderer: Option<DynRenderer>,
    /// Where documents go.
    pub sink: DynSink,
    /// Dedup store (redirect and canonical claims).
    pub dedup: DynDedupStore,
    /// Time source (`fetched_at`).
    pub clock: DynClock,
    /// Scope and network policy of the request.
    pub gate: RequestGate,
    /// Per-page render deadline.
    pub render_deadline: Duration,
    /// Fingerprint of the site's answer for a path that cannot exist, when it answers 200
    /// (a soft-404 site): pages with the same fingerprint are skipped as `soft_404`.
    pub soft404: Option<u64>,
    /// The request's include/exclude patterns, compiled.
    pub patterns: Arc<UrlPatterns>,
    /// The run of a source this page belongs to, when the crawl is one.
    pub sync: Option<Arc<super::sync::SyncRun>>,
    /// The linked-document types pages may be (see [`crate::linked`]): those the
    /// ingestor accepts when the request asks for linked documents, else none.
    pub linked_types: Vec<crate::linked::LinkedType>,
}

impl fmt::Debug for PageContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PageContext")
            .field("job", &self.job)
            .field("fetcher", &self.fetcher.to_string())
            .field("sink", &self.sink.to_string())
            .field("dedup", &self.dedup.to_string())
            .finish_non_exhaustive()
    }
}

impl PageContext {
    /// A context without a renderer (render deadline 30 s); the gate comes from `request`.
    pub fn new(
        job: JobId,
        request: CrawlRequest,
        fetcher: DynFetcher,
        sink: DynSink,
        dedup: DynDedupStore,
        clock: DynClock,
    ) -> Self {
        let gate = request_gate(&request);
        let patterns = Arc::new(request_patterns(&request));
        PageContext {
            job,
            request: Arc::new(request),
            fetcher,
            renderer: None,
            sink,
            dedup,
            clock,
            gate,
            render_deadline: Duration::from_secs(30),
            soft404: None,
            patterns,
            sync: None,
            linked_types: Vec::new(),
        }
    }

    /// Lets pages be linked documents of these types (nothing happens unless the request
    /// asks for linked documents: without `linked_documents` the list stays empty).
    pub fn with_linked_types(mut self, types: Vec<crate::linked::LinkedType>) -> Self {
        self.linked_types = if self.request.linked_documents {
            types
        } else {
            Vec::new()
        };
        self
    }

    /// Makes the pages runs of a source (see [`SyncRun`](super::SyncRun)).
    pub fn with_sync(mut self, sync: Option<Arc<super::sync::SyncRun>>) -> Self {
        self.sync = sync;
        self
    }

    /// The job whose prefix documents are written under: the source's documents for a run
    /// of a source, else this job.
    pub fn documents_job(&self) -> &JobId {
        self.sync.as_ref().map_or(&self.job, |s| &s.documents)
    }

    /// Sets the soft-404 fingerprint (see [`probe_soft_404`](super::probe_soft_404)).
    pub fn with_soft404(mut self, fingerprint: Option<u64>) -> Self {
        self.soft404 = fingerprint;
        self
    }

    /// Sets the renderer.
    pub fn with_renderer(mut self, renderer: Option<DynRenderer>) -> Self {
        self.renderer = renderer;
        self
    }

    /// Sets the per-page render deadline.
    pub fn with_render_deadline(mut self, deadline: Duration) -> Self {
        self.render_deadline = deadline;
        self
    }

    /// The dedup key of a normalized URL in this job.
    pub fn key(&self, url: &Url) -> String {
        dedup_key(url, self.gate.scope().folds_www())
    }

    /// Why a new URL may not be crawled (include/exclude patterns, trap, scope/policy,
    /// robots.txt), if it may not.
    pub async fn exclusion(&self, url: &Url) -> Result<Option<String>> {
        if !self.patterns.allows(url) {
            return Ok(Some("pattern".to_owned()));
        }
        if let Some(trap) = trap_reason(url) {
            return Ok(Some(trap.to_owned()));
        }
        if let Err(e) = self.gate.check(url) {
            return Ok(Some(e.code().into_owned()));
        }
        match self.fetcher.check(url, Some(&self.job)).await {
            Ok(()) => Ok(None),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::RobotsDisallowed
                        | ErrorKind::RobotsUnreachable
                        | ErrorKind::PolicyRefused
                        | ErrorKind::OutOfScope
                ) =>
            {
                Ok(Some(e.code().into_owned()))
            }
            Err(e) => Err(e),
        }
    }

    /// The root's candidate (depth 0). An unreachable robots.txt or a refused address on
    /// the root's host comes back as an error: the job fails with that reason.
    pub async fn root_candidate(&self, root: &Url) -> Result<Candidate> {
        match self.fetcher.check(root, Some(&self.job)).await {
            Err(e) if e.kind() != ErrorKind::RobotsDisallowed => return Err(e),
            _ => {}
        }
        let excluded = self.exclusion(root).await?;
        Ok(Candidate::new(
            self.key(root),
            FrontierEntry::new(root.clone(), 0),
            excluded,
        ))
    }

    /// The links of a page the job takes: normalized, in scope, one per dedup key, in
    /// document order, at most the request's `max_links_per_page`; and how many more
    /// in-scope links the page had (dropped unlooked-at, so a page with a million links
    /// costs no more dedup lookups or records than one at the cap).
    pub fn page_links<'a>(&self, links: impl IntoIterator<Item = &'a Url>) -> (Vec<Url>, u64) {
        let cap = self.request.max_links_per_page as usize;
        let mut seen = HashSet::new();
        let mut kept = Vec::new();
        let mut over = 0u64;
        for link in links {
            let Some(u) = normalize(link) else { continue };
            if !self.gate.scope().contains(&u) {
                continue;
            }
            if kept.len() >= cap {
                // Past the cap only the count matters: no key is kept for dedup, so a
                // link repeated past the cap counts each time it appears.
                over += 1;
                continue;
            }
            if seen.insert(self.key(&u)) {
                kept.push(u);
            }
        }
        (kept, over)
    }

    /// The candidates for links found on a page, at `depth`: normalized, in scope, one per
    /// dedup key, each with its exclusion reason. Empty past the request's `max_depth`.
    pub async fn link_candidates(&self, links: &[Url], depth: u32) -> Result<Vec<Candidate>> {
        if depth > self.request.max_depth {
            return Ok(Vec::new());
        }
        let mut seen = HashSet::new();
        let mut candidates = Vec::new();
        for link in links {
            let Some(u) = normalize(link) else { continue };
            if !self.gate.scope().contains(&u) {
                continue;
            }
            let key = self.key(&u);
            if !seen.insert(key.clone()) {
                continue;
            }
            let excluded = self.exclusion(&u).await?;
            candidates.push(Candidate::new(key, FrontierEntry::new(u, depth), excluded));
        }
        Ok(candidates)
    }

    /// The candidates for sitemap URLs, at `depth`: as [`link_candidates`](Self::link_candidates),
    /// each entry carrying its `<lastmod>`.
    pub async fn sitemap_candidates(
        &self,
        urls: &[crate::sitemap::SitemapUrl],
        depth: u32,
    ) -> Result<Vec<Candidate>> {
        let links: Vec<Url> = urls.iter().map(|s| s.url.clone()).collect();
        let mut candidates = self.link_candidates(&links, depth).await?;
        let lastmods: std::collections::HashMap<String, time::OffsetDateTime> = urls
            .iter()
            .filter_map(|s| s.lastmod.map(|l| (self.key(&s.url), l)))
            .collect();
        for c in &mut candidates {
            c.entry.lastmod = lastmods.get(&c.key).copied();
        }
        Ok(candidates)
    }

    /// Claims `target`, reached from page `source` by a redirect or named as its canonical:
    /// `true` when no other page of the job has it. The claimant is recorded first, so a page
    /// that claimed `target` and was interrupted (a crash, a second delivery) still owns it
    /// when it is processed again.
    pub async fn claim(&self, source: &Url, target: &Url) -> Result<bool> {
        let target_key = self.key(target);
        let mine = format!("{target_key}\u{1}claimed-by\u{1}{}", self.key(source));
        let claimed_before = !self.dedup.insert(&self.job, &mine).await?;
        let won = self.dedup.insert(&self.job, &target_key).await?;
        Ok(won || claimed_before)
    }
}

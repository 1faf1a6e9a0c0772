//! Runs of a source over a loopback site that changes between runs: one page edited, one
//! deleted (404), one no longer linked but still served, one added, the banner of every page
//! changed (a layout-only change), and one page behind a redirect. Three servers: strong
//! ETags, Last-Modified only, and one that ignores conditional requests. Exact diffs; pages
//! that did not change are neither written again nor handed to the knowledge base.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::{Fixture, Hit, Reply};
use crawl_core::memory::{MemorySink, MemorySourceStore};
use crawl_core::{
    ChangeCounts, CrawlRequest, Crawler, DiffDocs, DocPage, Document, DynSink, Guardrails,
    Ingestor, JobId, JobRecord, JobStatus, PageChange, Result, RunDiff, Sink, SitemapMode,
    SourceStore, StoredDoc,
};
use url::Url;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Validation {
    ETag,
    LastModified,
    Ignored,
}

/// The site's pages in `version`: path → HTML; `None` is a 404.
fn page(version: u32, path: &str) -> Option<String> {
    let links: &[&str] = match (version, path) {
        (1, "/") => &["/a", "/b", "/c", "/d", "/old"],
        (_, "/") => &["/a", "/b", "/c", "/old", "/f"],
        _ => &[],
    };
    let body = match (version, path) {
        (_, "/") => "The home page of the example department lists what it offers.",
        (1, "/a") => "Admissions: apply by March with two letters of recommendation.",
        (_, "/a") => "Admissions: apply by April with three letters of recommendation.",
        (1, "/b") => "Bursary office hours are Monday to Friday, nine to five.",
        (_, "/c") => "Courses run in two semesters, each of fifteen weeks of teaching.",
        (_, "/d") => "Directions to the campus by bus, train and bicycle.",
        (_, "/e") => "Events this term include a lecture series and an open day.",
        (v, "/f") if v >= 2 => "Financial aid covers tuition for students in need.",
        _ => return None,
    };
    let list: String = links
        .iter()
        .map(|l| format!("<li><a href=\"{l}\">Go to {l}</a></li>"))
        .collect();
    let title = format!("Page {path}");
    // The links sit in the page's navigation, which is not content: the home page's markdown
    // is the same in both versions though its links change.
    Some(format!(
        "<!doctype html><html><head><title>{title}</title></head><body>\
         <nav><ul>{list}</ul></nav><main>\
         <h1>{title}</h1>\
         <p>Campus banner version {version}: the library opens late during exams this term.</p>\
         <p>{body}</p>\
         <p>Copyright Example University, all rights reserved, contact the web office.</p>\
         </main></body></html>"
    ))
}

fn etag(html: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    html.hash(&mut h);
    format!("\"{:016x}\"", h.finish())
}

fn header<'a>(hit: &'a Hit, name: &str) -> Option<&'a str> {
    hit.headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// A site whose version the test moves forward, and how many page bodies it sent.
struct Site {
    version: Arc<AtomicU32>,
    bodies: Arc<Mutex<BTreeMap<String, usize>>>,
    fx: Fixture,
}

impl Site {
    async fn start(mode: Validation) -> Site {
        let version = Arc::new(AtomicU32::new(1));
        let bodies: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
        let (v, b) = (Arc::clone(&version), Arc::clone(&bodies));
        let fx = Fixture::start(move |hit, _| {
            let version = v.load(Ordering::SeqCst);
            if hit.path == "/old" {
                return Reply::redirect(301, "/e");
            }
            let Some(html) = page(version, &hit.path) else {
                return Reply::status(404);
            };
            // Last-Modified: the version that last changed the page (every page changes
            // with the banner), as an HTTP date.
            let modified = httpdate::fmt_http_date(
                std::time::UNIX_EPOCH
                    + std::time::Duration::from_secs(1_700_000_000 + 86_400 * u64::from(version)),
            );
            let tag = etag(&html);
            let fresh = match mode {
                Validation::ETag => header(hit, "if-none-match") == Some(tag.as_str()),
                Validation::LastModified => header(hit, "if-modified-since")
                    .and_then(|s| httpdate::parse_http_date(s).ok())
                    .zip(httpdate::parse_http_date(&modified).ok())
                    .is_some_and(|(since, m)| m <= since),
                Validation::Ignored => false,
            };
            let with_validators = |r: Reply| match mode {
                Validation::ETag => r.header("ETag", &tag),
                Validation::LastModified => r.header("Last-Modified", &modified),
                Validation::Ignored => r,
            };
            if fresh {
                return with_validators(Reply::status(304));
            }
            *b.lock().unwrap().entry(hit.path.clone()).or_default() += 1;
            with_validators(Reply::html(&html))
        })
        .await;
        Site {
            version,
            bodies,
            fx,
        }
    }

    fn bodies(&self) -> usize {
        std::mem::take(&mut *self.bodies.lock().unwrap())
            .values()
            .sum()
    }
}

/// A sink that records the URL of every document written (put or replace).
#[derive(Debug, Clone)]
struct Watched {
    inner: Arc<MemorySink>,
    writes: Arc<Mutex<Vec<String>>>,
    /// Auxiliary objects put whole: name and bytes.
    aux_puts: Arc<Mutex<Vec<(String, usize)>>>,
    /// Writes to streamed auxiliary objects: name and bytes.
    aux_writes: Arc<Mutex<Vec<(String, usize)>>>,
}

/// A [`Watched`] sink's streamed auxiliary object, recording each write.
struct WatchedWriter<'a> {
    inner: crawl_core::DynAuxWriter<'a>,
    name: String,
    writes: Arc<Mutex<Vec<(String, usize)>>>,
}

#[async_trait]
impl crawl_core::AuxWriter for WatchedWriter<'_> {
    async fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.writes
            .lock()
            .unwrap()
            .push((self.name.clone(), bytes.len()));
        self.inner.write(bytes).await
    }
    async fn finish(self: Box<Self>) -> Result<String> {
        self.inner.finish().await
    }
}

impl fmt::Display for Watched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Watched")
    }
}

impl Watched {
    fn take(&self) -> BTreeSet<String> {
        std::mem::take(&mut *self.writes.lock().unwrap())
            .into_iter()
            .collect()
    }
}

#[async_trait]
impl Sink for Watched {
    async fn put(&self, doc: &Document) -> Result<StoredDoc> {
        self.writes
            .lock()
            .unwrap()
            .push(doc.meta.url.path().to_owned());
        self.inner.put(doc).await
    }
    async fn replace(&self, stored: &StoredDoc, doc: &Document) -> Result<StoredDoc> {
        self.writes
            .lock()
            .unwrap()
            .push(doc.meta.url.path().to_owned());
        self.inner.replace(stored, doc).await
    }
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.inner.get(key).await
    }
    async fn list(&self, job: &JobId) -> Result<Vec<StoredDoc>> {
        self.inner.list(job).await
    }
    async fn list_page(&self, job: &JobId, after: Option<&str>, limit: usize) -> Result<DocPage> {
        self.inner.list_page(job, after, limit).await
    }
    async fn delete_job(&self, job: &JobId) -> Result<usize> {
        self.inner.delete_job(job).await
    }
    async fn remove(&self, job: &JobId, url: &Url) -> Result<Option<StoredDoc>> {
        self.inner.remove(job, url).await
    }
    async fn delete_aux(&self, job: &JobId, name: &str) -> Result<()> {
        self.inner.delete_aux(job, name).await
    }
    async fn put_aux(&self, job: &JobId, name: &str, bytes: Vec<u8>) -> Result<String> {
        self.aux_puts
            .lock()
            .unwrap()
            .push((name.to_owned(), bytes.len()));
        self.inner.put_aux(job, name, bytes).await
    }
    async fn aux_writer<'a>(
        &'a self,
        job: &JobId,
        name: &str,
    ) -> Result<crawl_core::DynAuxWriter<'a>> {
        Ok(Box::new(WatchedWriter {
            inner: self.inner.aux_writer(job, name).await?,
            name: name.to_owned(),
            writes: Arc::clone(&self.aux_writes),
        }))
    }
}

/// An ingestor that keeps the diffs it was handed.
#[derive(Debug, Default)]
struct Recorder {
    diffs: Mutex<Vec<DiffDocs>>,
    /// Refuse this many hand-offs (after recording them), as a knowledge base answering 400.
    refuse: AtomicU32,
}

impl fmt::Display for Recorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Recorder")
    }
}

#[async_trait]
impl Ingestor for Recorder {
    async fn on_completed(&self, _job: &JobRecord, diff: &RunDiff<'_>) -> Result<()> {
        let docs = diff.collect().await?;
        self.diffs.lock().unwrap().push(docs);
        if self
            .refuse
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err(crawl_core::Error::new(
                crawl_core::ErrorKind::HttpStatus,
                "knowledge base refused the diff: 400 Bad Request",
            ));
        }
        Ok(())
    }
    async fn on_deleted(&self, _job: &JobRecord) -> Result<()> {
        Ok(())
    }
}

fn paths(docs: &[StoredDoc]) -> BTreeSet<String> {
    docs.iter().map(|d| d.url.path().to_owned()).collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// A request for the loopback site at `root`, `depth` deep and at most `pages` pages: no
/// rate limit, no sitemap, guardrails lifted.
fn loopback(root: &Url, depth: u32, pages: u32) -> crawl_core::CrawlRequestBuilder {
    CrawlRequest::builder(root.as_str())
        .max_depth(depth)
        .max_pages(pages)
        .rate(None)
        .sitemap(SitemapMode::Off)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
}

struct Harness {
    crawler: Crawler,
    sink: Watched,
    memory: Arc<MemorySink>,
    sources: Arc<MemorySourceStore>,
    recorder: Arc<Recorder>,
}

impl Harness {
    fn new() -> Harness {
        let memory = Arc::new(MemorySink::new());
        let sink = Watched {
            inner: Arc::clone(&memory),
            writes: Arc::default(),
            aux_puts: Arc::default(),
            aux_writes: Arc::default(),
        };
        let sources = Arc::new(MemorySourceStore::new());
        let recorder = Arc::new(Recorder::default());
        let crawler = Crawler::builder()
            .sink(Arc::new(sink.clone()) as DynSink)
            .sources(Arc::clone(&sources) as _)
            .ingestor(Arc::clone(&recorder) as _)
            .build()
            .unwrap();
        Harness {
            crawler,
            sink,
            memory,
            sources,
            recorder,
        }
    }

    async fn run(&self, site: &Site, concurrency: usize) -> JobRecord {
        let req = loopback(&site.fx.url("/"), 3, 50)
            .concurrency(concurrency)
            .build()
            .unwrap();
        let (_, handle) = self.crawler.start_sync("ast-1", req).await.unwrap();
        let rec = handle.wait().await.unwrap();
        assert_eq!(rec.status, JobStatus::Completed, "{rec:?}");
        rec
    }

    fn last_diff(&self) -> DiffDocs {
        self.recorder.diffs.lock().unwrap().last().cloned().unwrap()
    }

    /// The source's documents: path → (key, file bytes).
    async fn documents(&self, job: &JobId) -> BTreeMap<String, (String, Vec<u8>)> {
        let mut out = BTreeMap::new();
        for d in self.memory.list(job).await.unwrap() {
            let bytes = self.memory.get(&d.key).await.unwrap().unwrap();
            out.insert(d.url.path().to_owned(), (d.key, bytes));
        }
        out
    }
}

async fn changes_file(sink: &MemorySink, run: &JobId) -> Vec<serde_json::Value> {
    let bytes = sink
        .get(&format!("{run}/changes.jsonl"))
        .await
        .unwrap()
        .unwrap();
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

async fn edit_delete_add_and_relayout(mode: Validation) {
    let site = Site::start(mode).await;
    let h = Harness::new();

    // First run: every page added.
    let first = h.run(&site, 4).await;
    let pages1 = set(&["/", "/a", "/b", "/c", "/d", "/e"]);
    assert_eq!(
        first.progress.changes,
        ChangeCounts::new(6, 0, 0, 0),
        "{mode:?}"
    );
    assert_eq!(paths(&h.last_diff().upserts), pages1, "{mode:?}");
    let docs1 = h.documents(&first.id).await;
    assert_eq!(docs1.keys().cloned().collect::<BTreeSet<_>>(), pages1);
    for (path, (_, bytes)) in &docs1 {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text.contains("Campus banner"),
            "{mode:?} {path}: template kept\n{text}"
        );
    }
    h.sink.take();
    site.bodies();

    // The site changes: /a edited, /b deleted, /d unlinked, /f added, every banner new.
    site.version.store(2, Ordering::SeqCst);
    let second = h.run(&site, 4).await;
    assert_eq!(
        second.progress.changes,
        ChangeCounts::new(1, 1, 3, 2),
        "{mode:?}: added /f; changed /a; unchanged /, /c and /e (the home page's links \
         changed, its markdown did not); removed /b and /d"
    );
    let diff = h.last_diff();
    assert_eq!(paths(&diff.upserts), set(&["/a", "/f"]), "{mode:?}");
    assert_eq!(paths(&diff.deletions), set(&["/b", "/d"]), "{mode:?}");
    assert_eq!(
        h.sink.take(),
        set(&["/a", "/f"]),
        "{mode:?}: only added and changed pages are written"
    );
    // Same document keys, same prefix; unchanged pages keep their bytes.
    let documents = second.request.sync.as_ref().unwrap().documents.clone();
    assert_eq!(documents, first.id, "{mode:?}");
    let docs2 = h.documents(&documents).await;
    assert_eq!(
        docs2.keys().cloned().collect::<BTreeSet<_>>(),
        set(&["/", "/a", "/c", "/e", "/f"]),
        "{mode:?}"
    );
    for path in ["/", "/a", "/c", "/e"] {
        assert_eq!(docs2[path].0, docs1[path].0, "{mode:?} {path}: key moved");
    }
    for path in ["/", "/c", "/e"] {
        assert_eq!(docs2[path].1, docs1[path].1, "{mode:?} {path}: rewritten");
    }
    let a = String::from_utf8_lossy(&docs2["/a"].1).into_owned();
    assert!(
        a.contains("three letters") && !a.contains("Campus banner"),
        "{mode:?}\n{a}"
    );
    for gone in ["/b", "/d"] {
        let key = &docs1[gone].0;
        assert!(
            h.memory.get(key).await.unwrap().is_none(),
            "{mode:?} {gone} still stored"
        );
    }
    let lines = changes_file(&h.memory, &second.id).await;
    let by_change: BTreeMap<String, BTreeSet<String>> =
        lines.iter().fold(BTreeMap::new(), |mut m, l| {
            let url = Url::parse(l["url"].as_str().unwrap()).unwrap();
            m.entry(l["change"].as_str().unwrap().to_owned())
                .or_default()
                .insert(url.path().to_owned());
            m
        });
    assert_eq!(by_change["added"], set(&["/f"]), "{mode:?}");
    assert_eq!(by_change["changed"], set(&["/a"]), "{mode:?}");
    assert_eq!(by_change["removed"], set(&["/b", "/d"]), "{mode:?}");
    let removed_b = lines
        .iter()
        .find(|l| l["url"].as_str().unwrap().ends_with("/b"))
        .unwrap();
    assert_eq!(removed_b["reason"], "http_404", "{mode:?}");
    let changed_a = lines
        .iter()
        .find(|l| l["url"].as_str().unwrap().ends_with("/a"))
        .unwrap();
    assert_ne!(
        changed_a["contentHash"], changed_a["previousHash"],
        "{mode:?}"
    );
    // The staged copies of pending pages are gone.
    assert!(
        h.memory.keys().iter().all(|k| !k.contains("pending-")),
        "{mode:?}: {:?}",
        h.memory.keys()
    );
    let source = second.request.sync.as_ref().unwrap().source.clone();
    let d = h
        .sources
        .get_page(&source, &site.fx.url("/d"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(d.change, Some(PageChange::Removed), "{mode:?}");
    assert_eq!(d.reason.as_deref(), Some("not_reached"), "{mode:?}");
    site.bodies();

    // Nothing changed since: every page unchanged, nothing written, nothing handed over.
    let third = h.run(&site, 4).await;
    assert_eq!(
        third.progress.changes,
        ChangeCounts::new(0, 0, 5, 0),
        "{mode:?}"
    );
    assert!(
        h.sink.take().is_empty(),
        "{mode:?}: an unchanged site was written"
    );
    let diff = h.last_diff();
    assert!(
        diff.upserts.is_empty() && diff.deletions.is_empty(),
        "{mode:?}: {diff:?}"
    );
    let bodies = site.bodies();
    match mode {
        Validation::ETag | Validation::LastModified => {
            assert_eq!(bodies, 0, "{mode:?}: a 304 site sent page bodies")
        }
        Validation::Ignored => assert_eq!(bodies, 5, "{mode:?}"),
    }
    // Removed pages are purged from the source once a later run has ended.
    assert!(h
        .sources
        .get_page(&source, &site.fx.url("/d"))
        .await
        .unwrap()
        .is_none());
    assert_eq!(h.documents(&first.id).await.len(), 5);
}

#[tokio::test]
async fn a_changed_site_syncs_with_strong_etags() {
    edit_delete_add_and_relayout(Validation::ETag).await;
}

#[tokio::test]
async fn a_changed_site_syncs_with_last_modified_only() {
    edit_delete_add_and_relayout(Validation::LastModified).await;
}

#[tokio::test]
async fn a_changed_site_syncs_when_the_server_ignores_conditional_requests() {
    edit_delete_add_and_relayout(Validation::Ignored).await;
}

#[tokio::test]
async fn a_run_that_hits_its_cap_removes_only_on_evidence() {
    let site = Site::start(Validation::ETag).await;
    let h = Harness::new();
    h.run(&site, 1).await;
    site.version.store(2, Ordering::SeqCst);
    // A cap of 3 pages: most stored pages are not reached, and must stay.
    let req = loopback(&site.fx.url("/"), 3, 3)
        .concurrency(1)
        .build()
        .unwrap();
    let (_, handle) = h.crawler.start_sync("ast-1", req).await.unwrap();
    let rec = handle.wait().await.unwrap();
    assert_eq!(rec.status, JobStatus::Completed);
    let c = rec.progress.changes;
    assert!(c.removed <= 1, "only /b (404) may be removed: {c:?}");
    let docs = h
        .documents(&rec.request.sync.as_ref().unwrap().documents)
        .await;
    for kept in ["/c", "/d", "/e"] {
        assert!(
            docs.contains_key(kept),
            "{kept} removed without evidence: {c:?}"
        );
    }
}

/// A run of a source whose hand-off was refused: COMPLETED with `ingestion` failed, its
/// reason and one attempt; the retry re-hands the very diff finalise built (read back from
/// `{run}/changes.jsonl`, nothing fetched again), and a delivered run is not handed twice.
#[tokio::test]
async fn a_refused_hand_off_of_a_run_is_retried_with_the_same_diff_without_crawling() {
    use crawl_core::{IngestionState, StoredDoc};
    let site = Site::start(Validation::ETag).await;
    let h = Harness::new();
    h.run(&site, 1).await;
    site.version.store(2, Ordering::SeqCst);
    h.recorder.refuse.store(1, Ordering::SeqCst);
    let rec = h.run(&site, 1).await;
    assert_eq!(
        (
            rec.ingestion.state,
            rec.ingestion.attempts,
            rec.ingestion.reason.as_deref().unwrap_or("")
        ),
        (
            IngestionState::Failed,
            1,
            "http_status: knowledge base refused the diff: 400 Bad Request"
        ),
        "{rec:?}"
    );
    let refused = h.last_diff();
    assert!(
        !refused.upserts.is_empty() && !refused.deletions.is_empty(),
        "{refused:?}"
    );
    let fetches = site.fx.hits().len();
    let again = h.crawler.retry_ingestion(&rec.id).await.unwrap();
    assert_eq!(site.fx.hits().len(), fetches, "the retry fetched pages");
    assert_eq!(
        (
            again.status,
            again.ingestion.state,
            again.ingestion.attempts
        ),
        (JobStatus::Completed, IngestionState::Delivered, 2)
    );
    assert_eq!(again.ingestion.reason, None);
    let sorted = |d: &[StoredDoc]| {
        let mut v = d.to_vec();
        v.sort_by(|a, b| a.url.cmp(&b.url));
        v
    };
    let retried = h.last_diff();
    assert_eq!(retried.counts, refused.counts);
    assert_eq!(sorted(&retried.upserts), sorted(&refused.upserts));
    assert_eq!(sorted(&retried.deletions), sorted(&refused.deletions));
    let e = h.crawler.retry_ingestion(&rec.id).await.unwrap_err();
    assert_eq!(e.kind(), crawl_core::ErrorKind::Conflict, "{e}");
    assert_eq!(h.recorder.diffs.lock().unwrap().len(), 3, "delivered twice");
}

#[tokio::test]
async fn a_second_run_of_a_source_is_refused_while_one_is_going() {
    let fx = Fixture::start(|_, _| {
        Reply::raw(|_s| async move {
            tokio::time::sleep(std::time::Duration::from_secs(30)).await;
        })
    })
    .await;
    let h = Harness::new();
    let req = CrawlRequest::builder(fx.url("/").as_str())
        .rate(None)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .build()
        .unwrap();
    let (source, first) = h.crawler.start_sync("ast-1", req.clone()).await.unwrap();
    let err = h
        .crawler
        .start_sync("ast-1", req.clone())
        .await
        .unwrap_err();
    assert_eq!(err.kind(), crawl_core::ErrorKind::Conflict, "{err}");
    assert!(err.to_string().contains(source.id.as_str()), "{err}");
    // Another tenant's source of the same site is its own.
    let (other, second) = h.crawler.start_sync("ast-2", req).await.unwrap();
    assert_ne!(other.id, source.id);
    first.cancel();
    second.cancel();
    first.wait().await.unwrap();
    second.wait().await.unwrap();
}

#[tokio::test]
async fn a_sitemap_lastmod_not_newer_than_the_last_check_skips_the_request() {
    // /s is only in the sitemap; its <lastmod> is in the past, so once the source has
    // checked it a later run does not request it at all.
    let fx = Fixture::start(|hit, _| {
        let origin = format!(
            "http://{}",
            header(hit, "host").unwrap_or("127.0.0.1").to_owned()
        );
        match hit.path.as_str() {
            "/robots.txt" => {
                Reply::text(&format!("User-agent: *\nSitemap: {origin}/sitemap.xml\n"))
            }
            "/sitemap.xml" => Reply::ok(
                "application/xml",
                format!(
                    "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
                     <url><loc>{origin}/s</loc><lastmod>2020-01-01</lastmod></url>\
                     <url><loc>{origin}/t</loc><lastmod>2999-01-01</lastmod></url></urlset>"
                ),
            ),
            "/" | "/s" | "/t" => Reply::html(&format!(
                "<!doctype html><html><head><title>{p}</title></head><body><main><h1>{p}</h1>\
                 <p>The page {p} has enough words to be kept as a document here.</p></main>\
                 </body></html>",
                p = hit.path
            )),
            _ => Reply::status(404),
        }
    })
    .await;
    let h = Harness::new();
    let req = CrawlRequest::builder(fx.url("/").as_str())
        .max_depth(2)
        .rate(None)
        .sitemap(SitemapMode::Auto)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .build()
        .unwrap();
    let (_, first) = h.crawler.start_sync("ast-1", req.clone()).await.unwrap();
    let first = first.wait().await.unwrap();
    assert_eq!(first.progress.changes.added, 3, "{first:?}");
    assert_eq!((fx.count("/s"), fx.count("/t")), (1, 1));
    let (_, second) = h.crawler.start_sync("ast-1", req).await.unwrap();
    let second = second.wait().await.unwrap();
    assert_eq!(
        second.progress.changes,
        ChangeCounts::new(0, 0, 3, 0),
        "{second:?}"
    );
    assert_eq!(
        fx.count("/s"),
        1,
        "an unchanged sitemap page was requested again"
    );
    assert_eq!(
        fx.count("/t"),
        2,
        "a page with a newer lastmod must be checked"
    );
    let source = second.request.sync.as_ref().unwrap().source.clone();
    let s = h
        .sources
        .get_page(&source, &fx.url("/s"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(s.reason.as_deref(), Some("sitemap_lastmod"));
}

/// A site where, in version 2, `/n` carries `noindex`, robots.txt disallows `/r`, and the
/// source's settings exclude `/x`; six more pages make a capped run.
fn evidence_page(version: u32, path: &str) -> Option<String> {
    let links: &[&str] = match path {
        "/" => &["/n", "/r", "/x", "/k1", "/k2", "/k3", "/k4", "/k5", "/k6"],
        _ => &[],
    };
    let known = [
        "/", "/n", "/r", "/x", "/k1", "/k2", "/k3", "/k4", "/k5", "/k6",
    ];
    if !known.contains(&path) {
        return None;
    }
    let robots = if version >= 2 && path == "/n" {
        "<meta name=\"robots\" content=\"noindex\">"
    } else {
        ""
    };
    let list: String = links
        .iter()
        .map(|l| format!("<li><a href=\"{l}\">Go to {l}</a></li>"))
        .collect();
    Some(format!(
        "<!doctype html><html><head><title>Page {path}</title>{robots}</head><body>\
         <nav><ul>{list}</ul></nav><main><h1>Page {path}</h1>\
         <p>The page {path} of the example department describes one of its services in \
         enough words to be kept as content by the extractor.</p></main></body></html>"
    ))
}

#[tokio::test]
async fn stored_pages_are_removed_on_noindex_robots_and_pattern_evidence_in_a_capped_run() {
    let version = Arc::new(AtomicU32::new(1));
    let v = Arc::clone(&version);
    let fx = Fixture::start(move |hit, _| {
        let version = v.load(Ordering::SeqCst);
        if hit.path == "/robots.txt" {
            let rules = if version >= 2 {
                "User-agent: *\nDisallow: /r\n"
            } else {
                "User-agent: *\nAllow: /\n"
            };
            return Reply::text(rules);
        }
        match evidence_page(version, &hit.path) {
            Some(html) => Reply::html(&html),
            None => Reply::status(404),
        }
    })
    .await;
    let h = Harness::new();
    let request = |pages: u32, exclude: &[&str]| {
        loopback(&fx.url("/"), 1, pages)
            .concurrency(1)
            .exclude(exclude.iter().map(|s| (*s).to_owned()))
            .build()
            .unwrap()
    };
    let (_, first) = h
        .crawler
        .start_sync("ast-1", request(50, &[]))
        .await
        .unwrap();
    let first = first.wait().await.unwrap();
    assert_eq!(first.progress.changes.added, 10, "{:?}", first.progress);

    version.store(2, Ordering::SeqCst);
    // Capped at 5 pages: the root, /n and three of the /k pages are reached; /r and /x are
    // not admitted at all. Only evidence removes: /k4../k6 merely not reached stay.
    let (_, second) = h
        .crawler
        .start_sync("ast-1", request(5, &["/x"]))
        .await
        .unwrap();
    let second = second.wait().await.unwrap();
    assert_eq!(second.status, JobStatus::Completed, "{second:?}");
    assert_eq!(second.progress.pages_total, 5, "the cap was hit");
    let removed: BTreeMap<String, String> = changes_file(&h.memory, &second.id)
        .await
        .into_iter()
        .filter(|c| c["change"] == "removed")
        .map(|c| {
            let url = Url::parse(c["url"].as_str().unwrap()).unwrap();
            (
                url.path().to_owned(),
                c["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let want: BTreeMap<String, String> = [
        ("/n", "noindex"),
        ("/r", "robots_disallowed"),
        ("/x", "pattern"),
    ]
    .into_iter()
    .map(|(p, r)| (p.to_owned(), r.to_owned()))
    .collect();
    assert_eq!(removed, want);
    assert_eq!(second.progress.changes.removed, 3);
    let docs = h
        .documents(&second.request.sync.as_ref().unwrap().documents)
        .await;
    let kept: BTreeSet<String> = docs.keys().cloned().collect();
    assert_eq!(
        kept,
        set(&["/", "/k1", "/k2", "/k3", "/k4", "/k5", "/k6"]),
        "evidence removed three pages, nothing else left"
    );
    let diff = h.last_diff();
    assert_eq!(
        paths(&diff.deletions),
        set(&["/n", "/r", "/x"]),
        "the knowledge base is told of each removal"
    );
}

/// A source store that counts the page states written to it.
#[derive(Debug)]
struct CountingSources {
    inner: MemorySourceStore,
    states_put: std::sync::atomic::AtomicUsize,
}

impl fmt::Display for CountingSources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CountingSources")
    }
}

#[async_trait]
impl SourceStore for CountingSources {
    async fn put_source(&self, source: &crawl_core::SourceRecord) -> Result<()> {
        self.inner.put_source(source).await
    }
    async fn get_source(
        &self,
        id: &crawl_core::SourceId,
    ) -> Result<Option<crawl_core::SourceRecord>> {
        self.inner.get_source(id).await
    }
    async fn list_sources(&self, tenant: &str) -> Result<Vec<crawl_core::SourceRecord>> {
        self.inner.list_sources(tenant).await
    }
    async fn delete_source(&self, id: &crawl_core::SourceId) -> Result<usize> {
        self.inner.delete_source(id).await
    }
    async fn get_page(
        &self,
        id: &crawl_core::SourceId,
        url: &Url,
    ) -> Result<Option<crawl_core::PageState>> {
        self.inner.get_page(id, url).await
    }
    async fn put_pages(
        &self,
        id: &crawl_core::SourceId,
        pages: &[crawl_core::PageState],
    ) -> Result<()> {
        self.states_put.fetch_add(pages.len(), Ordering::SeqCst);
        self.inner.put_pages(id, pages).await
    }
    async fn remove_pages(&self, id: &crawl_core::SourceId, urls: &[Url]) -> Result<usize> {
        self.inner.remove_pages(id, urls).await
    }
    async fn list_pages(
        &self,
        id: &crawl_core::SourceId,
        after: Option<&str>,
        limit: usize,
    ) -> Result<crawl_core::PageBatch> {
        self.inner.list_pages(id, after, limit).await
    }
}

#[tokio::test]
async fn an_unchanged_resync_writes_each_page_state_once() {
    let site = Site::start(Validation::ETag).await;
    let sources = Arc::new(CountingSources {
        inner: MemorySourceStore::new(),
        states_put: Default::default(),
    });
    let crawler = Crawler::builder()
        .sink(Arc::new(MemorySink::new()) as DynSink)
        .sources(Arc::clone(&sources) as _)
        .build()
        .unwrap();
    let req = loopback(&site.fx.url("/"), 3, 50).build().unwrap();
    let mut puts = Vec::new();
    for _ in 0..2 {
        let before = sources.states_put.load(Ordering::SeqCst);
        let (_, handle) = crawler.start_sync("ast-1", req.clone()).await.unwrap();
        let rec = handle.wait().await.unwrap();
        assert_eq!(rec.status, JobStatus::Completed, "{rec:?}");
        puts.push((
            sources.states_put.load(Ordering::SeqCst) - before,
            rec.progress.changes,
        ));
    }
    assert_eq!(puts[0].1, ChangeCounts::new(6, 0, 0, 0));
    assert_eq!(puts[1].1, ChangeCounts::new(0, 0, 6, 0));
    // The re-sync saves each page's state when it is checked, and finalise adds nothing
    // (it used to save all six again).
    assert_eq!(puts[1].0, 6, "page states written by the re-sync: {puts:?}");
}

/// A source's run over more pages than finalise reads in one batch of page states writes
/// its `changes.jsonl` through the sink's aux writer, a batch at a time: the file is never
/// whole in memory (it was built as one buffer and put whole), and holds one line a page.
#[tokio::test]
async fn a_runs_changes_jsonl_is_streamed_to_the_sink_a_batch_at_a_time() {
    const LEAVES: usize = 450;
    let fx = Fixture::start(|hit, _| {
        if hit.path == "/" {
            let list: String = (0..LEAVES)
                .map(|i| format!("<li><a href=\"/p{i}\">Page {i}</a></li>"))
                .collect();
            return Reply::html(&format!(
                "<!doctype html><html><head><title>Home</title></head><body><main>\
                 <h1>Home</h1><p>Every page of the office, one link each.</p><ul>{list}</ul>\
                 </main></body></html>"
            ));
        }
        let Some(n) = hit.path.strip_prefix("/p") else {
            return Reply::status(404);
        };
        Reply::html(&format!(
            "<!doctype html><html><head><title>Page {n}</title></head><body><main>\
             <h1>Page {n}</h1><p>Page {n} says what the office does on day {n}.</p>\
             </main></body></html>"
        ))
    })
    .await;
    let h = Harness::new();
    let req = loopback(&fx.url("/"), 1, u32::try_from(LEAVES + 1).unwrap())
        .concurrency(8)
        .build()
        .unwrap();
    let (_, handle) = h.crawler.start_sync("ast-1", req).await.unwrap();
    let rec = handle.wait().await.unwrap();
    assert_eq!(rec.status, JobStatus::Completed, "{rec:?}");
    assert_eq!(
        rec.progress.changes,
        ChangeCounts::new(LEAVES as u64 + 1, 0, 0, 0)
    );

    let lines = changes_file(&h.memory, &rec.id).await;
    assert_eq!(lines.len(), LEAVES + 1);
    assert!(
        lines.iter().all(|l| l["change"] == "added"),
        "{:?}",
        lines[0]
    );
    let urls: BTreeSet<&str> = lines.iter().filter_map(|l| l["url"].as_str()).collect();
    assert_eq!(urls.len(), LEAVES + 1, "one line a page");

    let whole = h.sink.aux_puts.lock().unwrap().clone();
    assert!(
        !whole.iter().any(|(n, _)| n == "changes.jsonl"),
        "changes.jsonl was put whole: {whole:?}"
    );
    let writes: Vec<usize> = h
        .sink
        .aux_writes
        .lock()
        .unwrap()
        .iter()
        .filter(|(n, _)| n == "changes.jsonl")
        .map(|(_, b)| *b)
        .collect();
    let bytes = h
        .memory
        .get(&format!("{}/changes.jsonl", rec.id))
        .await
        .unwrap()
        .unwrap()
        .len();
    assert_eq!(writes.iter().sum::<usize>(), bytes);
    // Finalise reads the page states 200 at a time: three batches, three writes.
    assert!(writes.len() >= 3, "{} writes: {writes:?}", writes.len());
    let largest = writes.iter().copied().max().unwrap_or(0);
    assert!(
        largest <= bytes / 2,
        "a write of {largest} of the file's {bytes} bytes: {writes:?}"
    );
}

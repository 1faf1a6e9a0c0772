//! A canned site served by an in-test `Fetcher` (no network), and helpers to build the API
//! over it.
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use crawl_api::{ApiState, InProcessRunner};
use crawl_core::memory::MemorySink;
use crawl_core::{
    Crawler, DocPage, Document, DynIngestor, DynSink, FetchRequest, FetchResponse, Fetcher, JobId,
    NoopIngestor, Result, Sink, StoredDoc,
};

pub const ROOT: &str = "http://site.test/";

/// Serves a handful of HTML pages from a map, each after `delay`.
#[derive(Debug)]
pub struct CannedSite {
    pages: HashMap<String, String>,
    delay: Duration,
    pub fetches: AtomicUsize,
}

impl std::fmt::Display for CannedSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CannedSite({} pages)", self.pages.len())
    }
}

fn page(title: &str, links: &[&str], body: &str) -> String {
    let links: String = links
        .iter()
        .map(|l| format!("<li><a href=\"{l}\">{l}</a></li>"))
        .collect();
    format!(
        "<!doctype html><html lang=\"en\"><head><title>{title}</title></head><body>\
         <main><h1>{title}</h1><p>{body}</p><h2>Details</h2><p>More about {title}: \
         opening hours, contacts and forms for students.</p><ul>{links}</ul></main></body></html>"
    )
}

impl CannedSite {
    /// Five pages: the root links to a, b, c; a links to d.
    pub fn new(delay: Duration) -> Self {
        let mut pages = HashMap::new();
        pages.insert(
            "/".to_owned(),
            page(
                "Registrar",
                &["/a", "/b", "/c"],
                "Welcome to the registrar's office.",
            ),
        );
        pages.insert(
            "/a".to_owned(),
            page(
                "Enrollment",
                &["/d", "/"],
                "How to enroll in classes each term.",
            ),
        );
        pages.insert(
            "/b".to_owned(),
            page("Transcripts", &["/"], "Order official transcripts online."),
        );
        pages.insert(
            "/c".to_owned(),
            page("Calendar", &["/"], "Academic calendar with every deadline."),
        );
        pages.insert(
            "/d".to_owned(),
            page(
                "Deadlines",
                &["/a"],
                "Add and drop deadlines for full term classes.",
            ),
        );
        CannedSite {
            pages,
            delay,
            fetches: AtomicUsize::new(0),
        }
    }
}

#[async_trait]
impl Fetcher for CannedSite {
    async fn fetch(&self, req: &FetchRequest) -> Result<FetchResponse> {
        self.fetches.fetch_add(1, Ordering::SeqCst);
        if !self.delay.is_zero() {
            tokio::time::sleep(self.delay).await;
        }
        Ok(match self.pages.get(req.url.path()) {
            Some(html) => FetchResponse::new(req.url.clone(), 200, html.clone().into_bytes())
                .with_header("content-type", "text/html; charset=utf-8"),
            None => FetchResponse::new(req.url.clone(), 404, Vec::new())
                .with_header("content-type", "text/plain"),
        })
    }
}

/// A crawler over the canned site, writing to `sink`, and the API state over it.
pub fn state_with(sink: DynSink, ingestor: DynIngestor, site: Arc<CannedSite>) -> ApiState {
    let crawler = Crawler::builder()
        .fetcher(site)
        .sink(sink)
        .ingestor(Arc::clone(&ingestor))
        .build()
        .unwrap();
    ApiState::in_process(InProcessRunner::new(crawler), ingestor)
}

/// The API over a [`WatchedSink`] and a canned site answering after `delay`.
pub fn memory_state(delay: Duration) -> (ApiState, Arc<WatchedSink>, Arc<CannedSite>) {
    let sink = Arc::new(WatchedSink::default());
    let site = Arc::new(CannedSite::new(delay));
    (
        state_with(
            Arc::clone(&sink) as DynSink,
            Arc::new(NoopIngestor),
            Arc::clone(&site),
        ),
        sink,
        site,
    )
}

/// A memory sink that remembers which jobs were deleted and records any write to a job
/// after its `delete_job` (a late write that would survive the delete).
#[derive(Debug, Default)]
pub struct WatchedSink {
    pub inner: MemorySink,
    deleted: Mutex<HashSet<JobId>>,
    pub late_writes: Mutex<Vec<String>>,
    /// Calls of `list` (every document of a job at once).
    pub whole_lists: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Display for WatchedSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WatchedSink")
    }
}

impl WatchedSink {
    pub fn was_deleted(&self, job: &str) -> bool {
        self.deleted
            .lock()
            .unwrap()
            .iter()
            .any(|j| j.as_str() == job)
    }
    pub fn keys_of(&self, job: &str) -> Vec<String> {
        self.inner
            .keys()
            .into_iter()
            .filter(|k| k.starts_with(&format!("{job}/")))
            .collect()
    }
    fn check(&self, job: &JobId, what: &str) {
        if self.deleted.lock().unwrap().contains(job) {
            self.late_writes
                .lock()
                .unwrap()
                .push(format!("{what} {job}"));
        }
    }
}

#[async_trait]
impl Sink for WatchedSink {
    async fn put(&self, doc: &Document) -> Result<StoredDoc> {
        self.check(&doc.job, "put");
        self.inner.put(doc).await
    }
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.inner.get(key).await
    }
    async fn list(&self, job: &JobId) -> Result<Vec<StoredDoc>> {
        self.whole_lists
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.inner.list(job).await
    }
    async fn list_page(&self, job: &JobId, after: Option<&str>, limit: usize) -> Result<DocPage> {
        self.inner.list_page(job, after, limit).await
    }
    async fn delete_job(&self, job: &JobId) -> Result<usize> {
        self.deleted.lock().unwrap().insert(job.clone());
        self.inner.delete_job(job).await
    }
    async fn replace(&self, stored: &StoredDoc, doc: &Document) -> Result<StoredDoc> {
        self.check(&doc.job, "replace");
        self.inner.replace(stored, doc).await
    }
    async fn put_aux(&self, job: &JobId, name: &str, bytes: Vec<u8>) -> Result<String> {
        self.check(job, "put_aux");
        self.inner.put_aux(job, name, bytes).await
    }
    async fn remove(&self, job: &JobId, url: &url::Url) -> Result<Option<StoredDoc>> {
        self.check(job, "remove");
        self.inner.remove(job, url).await
    }
    async fn delete_aux(&self, job: &JobId, name: &str) -> Result<()> {
        self.inner.delete_aux(job, name).await
    }
    async fn finish_job(&self, job: &JobId) -> Result<()> {
        self.inner.finish_job(job).await
    }
}

/// Polls `f` every 20 ms until it returns `Some`, failing after a generous hang guard.
pub async fn eventually<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    for _ in 0..3000 {
        if let Some(v) = f().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("hang guard: {what} did not happen within 60 s");
}

//! Hostile sites end with recorded reasons, never with a hang, a crash or a stored half page:
//! a redirect loop, binary served as text/html, endless calendars, a site that answers 200
//! for every path (soft 404), and a sink that fails transiently or for good.

use crate::support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use kb_crawl::memory::MemorySink;
use kb_crawl::{
    CrawlRequest, Crawler, DocPage, Document, Error, ErrorKind, Guardrails, JobId, JobStatus,
    Result, Sink, StoredDoc,
};
use support::Fixture;

fn request(fx: &Fixture) -> CrawlRequest {
    CrawlRequest::builder(fx.url("/index.html"))
        .max_depth(2)
        .max_pages(50)
        .concurrency(4)
        .rate(None)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .build()
        .unwrap()
}

#[tokio::test]
async fn redirect_loops_binary_bodies_and_calendars_end_with_reasons() {
    let fx = Fixture::hostile(false).await;
    let sink = Arc::new(MemorySink::new());
    let crawler = Crawler::builder()
        .sink(Arc::clone(&sink) as _)
        .build()
        .unwrap();
    let rec = crawler.run(request(&fx)).await.unwrap();
    assert_eq!(rec.status, JobStatus::Completed, "{:?}", rec.failure);
    let p = &rec.progress;
    assert_eq!(p.pages_processed, p.pages_total);
    assert_eq!(p.skipped.get("too_many_redirects"), Some(&1), "{p:?}");
    assert_eq!(p.skipped.get("not_html"), Some(&1), "{p:?}");
    assert_eq!(p.skipped.get("http_404"), Some(&1), "{p:?}");
    assert_eq!(p.excluded.get("trap_calendar"), Some(&2), "{p:?}");
    // Redirects to the metadata address, in any spelling, are refused even though this
    // crawl allows private networks (it crawls 127.0.0.1).
    assert_eq!(p.skipped.get("network_policy"), Some(&2), "{p:?}");
    assert_eq!(p.stored, 2, "{p:?}");
    // The loop was followed at most 10 hops, then given up.
    let loops = fx
        .page_hits()
        .iter()
        .filter(|h| h.starts_with("/loop"))
        .count();
    assert!(loops <= 11, "{loops} loop requests");
}

#[tokio::test]
async fn a_site_that_answers_200_for_everything_gets_soft_404_skips() {
    let fx = Fixture::hostile(true).await;
    let sink = Arc::new(MemorySink::new());
    let crawler = Crawler::builder()
        .sink(Arc::clone(&sink) as _)
        .build()
        .unwrap();
    let rec = crawler.run(request(&fx)).await.unwrap();
    assert_eq!(rec.status, JobStatus::Completed);
    let p = &rec.progress;
    assert_eq!(p.skipped.get("soft_404"), Some(&1), "{p:?}");
    assert_eq!(p.skipped.get("http_404"), None, "{p:?}");
    assert_eq!(p.stored, 2, "{p:?}");
    let docs = sink.list(&rec.id).await.unwrap();
    assert!(
        docs.iter().all(|d| !d.url.path().contains("gone")),
        "{docs:?}"
    );
}

/// A sink over MemorySink that fails some puts.
#[derive(Debug)]
struct Flaky {
    inner: MemorySink,
    puts: AtomicUsize,
    /// Puts 1..=n fail with a temporary error.
    transient_first: usize,
    /// Puts after this many successful ones fail for good.
    permanent_after: Option<usize>,
    ok: AtomicUsize,
}

impl std::fmt::Display for Flaky {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Flaky")
    }
}

#[async_trait]
impl Sink for Flaky {
    async fn put(&self, doc: &Document) -> Result<StoredDoc> {
        let n = self.puts.fetch_add(1, Ordering::SeqCst) + 1;
        if n <= self.transient_first {
            return Err(Error::new(ErrorKind::Storage, "disk busy").with_temporary(true));
        }
        if self
            .permanent_after
            .is_some_and(|k| self.ok.load(Ordering::SeqCst) >= k)
        {
            return Err(Error::new(ErrorKind::Storage, "disk full").with_temporary(false));
        }
        let r = self.inner.put(doc).await?;
        self.ok.fetch_add(1, Ordering::SeqCst);
        Ok(r)
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
    async fn put_aux(&self, job: &JobId, name: &str, bytes: Vec<u8>) -> Result<String> {
        self.inner.put_aux(job, name, bytes).await
    }
}

fn flaky(transient_first: usize, permanent_after: Option<usize>) -> Arc<Flaky> {
    Arc::new(Flaky {
        inner: MemorySink::new(),
        puts: AtomicUsize::new(0),
        transient_first,
        permanent_after,
        ok: AtomicUsize::new(0),
    })
}

#[tokio::test]
async fn a_transient_sink_failure_is_retried() {
    let fx = Fixture::site().await;
    let sink = flaky(2, None);
    let crawler = Crawler::builder()
        .sink(Arc::clone(&sink) as _)
        .build()
        .unwrap();
    let mut req = request(&fx);
    req.url = url::Url::parse(&fx.url("/")).unwrap();
    req.concurrency = 1;
    let rec = crawler.run(req).await.unwrap();
    assert_eq!(rec.status, JobStatus::Completed, "{:?}", rec.failure);
    assert!(rec.progress.stored >= 10);
    assert_eq!(
        sink.inner.list(&rec.id).await.unwrap().len() as u64,
        rec.progress.stored
    );
}

#[tokio::test]
async fn a_permanent_sink_failure_fails_the_job_and_keeps_earlier_documents() {
    let fx = Fixture::site().await;
    let sink = flaky(0, Some(3));
    let crawler = Crawler::builder()
        .sink(Arc::clone(&sink) as _)
        .build()
        .unwrap();
    let mut req = request(&fx);
    req.url = url::Url::parse(&fx.url("/")).unwrap();
    req.concurrency = 1;
    let rec = crawler.run(req).await.unwrap();
    assert_eq!(rec.status, JobStatus::Failed);
    let why = rec.failure.unwrap_or_default();
    assert!(
        why.contains("disk full") && why.contains("storage"),
        "{why}"
    );
    assert_eq!(
        sink.inner.list(&rec.id).await.unwrap().len(),
        3,
        "earlier documents lost"
    );
}

#[tokio::test]
async fn an_unreachable_robots_txt_fails_the_job_instead_of_completing_empty() {
    use axum::http::StatusCode;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new()
        .route(
            "/robots.txt",
            axum::routing::get(|| async { StatusCode::SERVICE_UNAVAILABLE }),
        )
        .fallback(|| async {
            axum::response::Html("<main><h1>Hi</h1><p>Some page text.</p></main>")
        });
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let req = CrawlRequest::builder(format!("http://{addr}/"))
        .rate(None)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .build()
        .unwrap();
    let rec = Crawler::builder().build().unwrap().run(req).await.unwrap();
    server.abort();
    assert_eq!(rec.status, JobStatus::Failed);
    assert_eq!(rec.failure.as_deref(), Some("robots_unreachable"));
    assert_eq!(rec.progress.pages_total, 0);
}

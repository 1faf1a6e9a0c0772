//! The embedded crawl over the fixture site: exact file sets per depth, exact page caps
//! under concurrency, politeness, and every operation going through the traits.

use crate::support;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use kb_crawl::store::FsSink;
use kb_crawl::{
    CrawlRequest, Crawler, DynFetcher, FetchRequest, FetchResponse, Fetcher, JobRecord, JobStatus,
    Result,
};
use support::Fixture;
use url::Url;

fn request(fx: &Fixture, depth: u32, max_pages: u32, concurrency: usize) -> CrawlRequest {
    CrawlRequest::builder(fx.url("/"))
        .max_depth(depth)
        .max_pages(max_pages)
        .concurrency(concurrency)
        .rate(None)
        .guardrails(kb_crawl::Guardrails::lifted())
        .allow_private_network(true)
        .build()
        .unwrap()
}

/// The stored files of a job, as `domain/name.md`, with the URL-hash suffix of colliding
/// titles replaced by `#` (which of two same-titled pages gets the plain name depends on
/// timing).
fn files(root: &std::path::Path, rec: &JobRecord) -> BTreeSet<String> {
    let dir = root.join(rec.id.as_str());
    let mut out = BTreeSet::new();
    for domain in std::fs::read_dir(&dir).unwrap() {
        let domain = domain.unwrap();
        if !domain.file_type().unwrap().is_dir() {
            continue;
        }
        for f in std::fs::read_dir(domain.path()).unwrap() {
            let name = f.unwrap().file_name().to_string_lossy().into_owned();
            let name = match name.strip_prefix("same-title-") {
                Some(rest) if rest.len() == 11 => "same-title-#.md".to_owned(),
                _ => name,
            };
            out.insert(name);
        }
    }
    out
}

fn expected(depth: u32) -> BTreeSet<String> {
    let levels: [&[&str]; 5] = [
        &["fixture-home"],
        &[
            "section-a",
            "section-b",
            "section-c",
            "b-page-two",
            "café-latin",
        ],
        &[
            "a-one",
            "a-two",
            "a-three",
            "b-page-three",
            "same-title",
            "same-title-#",
        ],
        &["a-one-deep", "c-one-x"],
        &["a-one-deeper"],
    ];
    levels
        .iter()
        .take(depth as usize + 1)
        .flat_map(|l| l.iter().map(|n| format!("{n}.md")))
        .collect()
}

async fn crawl(req: CrawlRequest) -> (tempfile::TempDir, JobRecord) {
    let dir = tempfile::tempdir().unwrap();
    let crawler = Crawler::builder()
        .sink(Arc::new(FsSink::new(dir.path()).unwrap()))
        .build()
        .unwrap();
    let rec = crawler.run(req).await.unwrap();
    (dir, rec)
}

#[tokio::test]
async fn depth_gives_the_exact_set_of_files() {
    for depth in 0..=4 {
        for concurrency in [1, 16] {
            let fx = Fixture::site().await;
            let (dir, rec) = crawl(request(&fx, depth, 500, concurrency)).await;
            assert_eq!(rec.status, JobStatus::Completed, "{:?}", rec.failure);
            assert_eq!(
                files(dir.path(), &rec),
                expected(depth),
                "depth {depth} c{concurrency}"
            );
            let p = &rec.progress;
            assert_eq!(p.pages_processed, p.pages_total, "depth {depth}");
            assert_eq!(
                p.stored + p.skipped.values().sum::<u64>(),
                p.pages_processed
            );
            if depth >= 1 {
                assert_eq!(p.excluded.get("robots_disallowed"), Some(&1), "{p:?}");
                assert_eq!(p.skipped.get("http_404"), Some(&1), "{p:?}");
                assert_eq!(p.skipped.get("not_html"), Some(&1), "{p:?}");
                assert_eq!(p.skipped.get("redirect_out_of_scope"), Some(&1), "{p:?}");
            }
            if depth >= 2 {
                assert_eq!(p.skipped.get("noindex"), Some(&1), "{p:?}");
            }
            // Duplicates by fragment, trailing slash and tracking parameters are fetched once.
            let hits = fx.page_hits();
            assert!(
                !hits
                    .iter()
                    .any(|h| h.contains("utm_") || h.contains("fbclid")),
                "{hits:?}"
            );
            assert_eq!(
                hits.iter().filter(|h| *h == "/a/").count(),
                usize::from(depth >= 1)
            );
            assert!(
                !hits.iter().any(|h| h.starts_with("/private/")),
                "robots.txt ignored"
            );
        }
    }
}

#[tokio::test]
async fn max_pages_is_exact_under_concurrency() {
    for max in [1u32, 5, 17] {
        for concurrency in [1, 16] {
            let fx = Fixture::site().await;
            let (dir, rec) = crawl(request(&fx, 5, max, concurrency)).await;
            let p = &rec.progress;
            assert_eq!(rec.status, JobStatus::Completed);
            assert_eq!(
                (p.pages_total, p.pages_processed),
                (u64::from(max), u64::from(max)),
                "max {max} c{concurrency}: {p:?}"
            );
            assert_eq!(p.stored as usize, files(dir.path(), &rec).len());
            // Each admitted page is one page fetch, plus the hops of the two redirect chains.
            let fetched: BTreeSet<String> = fx
                .page_hits()
                .into_iter()
                .filter(|h| !matches!(h.as_str(), "/redirect-1" | "/b/page2.html" | "/elsewhere"))
                .filter(|h| !h.starts_with("/kb-crawl-probe-"))
                // The sitemap lookup is not a page.
                .filter(|h| h != "/sitemap.xml")
                .collect();
            assert!(
                fetched.len() <= max as usize,
                "max {max}: fetched {fetched:?}"
            );
        }
    }
}

#[tokio::test]
async fn non_utf8_page_is_decoded_before_extraction() {
    let fx = Fixture::site().await;
    let (dir, rec) = crawl(request(&fx, 1, 500, 4)).await;
    let domain = format!("127.0.0.1_{}", fx.addr.port());
    let text = std::fs::read_to_string(
        dir.path()
            .join(rec.id.as_str())
            .join(domain)
            .join("café-latin.md"),
    )
    .unwrap();
    assert!(text.contains("naïve, élève"), "{text}");
    assert!(text.contains("language: \"fr\""), "{text}");
}

#[tokio::test]
async fn consecutive_requests_respect_the_rate_limit() {
    let fx = Fixture::site().await;
    let req = CrawlRequest::builder(fx.url("/"))
        .max_depth(1)
        .max_pages(8)
        .concurrency(8)
        .rate(Some(5.0))
        .allow_private_network(true)
        .guardrails(kb_crawl::Guardrails::lifted())
        .build()
        .unwrap();
    let (_dir, rec) = crawl(req).await;
    assert_eq!(rec.status, JobStatus::Completed);
    let hits = fx.hits();
    assert!(hits.len() >= 8, "{hits:?}");
    for w in hits.windows(2) {
        let gap = w[1].at.duration_since(w[0].at);
        // 100 ms interval; a few ms of slack for the server's own scheduling.
        assert!(
            gap >= Duration::from_millis(95),
            "{} -> {} only {gap:?} apart",
            w[0].path,
            w[1].path
        );
    }
}

/// A fetcher that records every call and forwards to the real one.
#[derive(Debug)]
struct Recording {
    inner: DynFetcher,
    calls: Mutex<Vec<String>>,
}

impl std::fmt::Display for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Recording({})", self.inner)
    }
}

#[async_trait]
impl Fetcher for Recording {
    async fn fetch(&self, req: &FetchRequest) -> Result<FetchResponse> {
        self.calls.lock().unwrap().push(req.url.path().to_owned());
        self.inner.fetch(req).await
    }
    async fn check(&self, url: &Url, job: Option<&kb_crawl::JobId>) -> Result<()> {
        self.inner.check(url, job).await
    }
}

#[tokio::test]
async fn every_fetch_and_write_goes_through_the_traits() {
    let fx = Fixture::site().await;
    let req = request(&fx, 3, 500, 8);
    // Record at the bottom of the stack, so robots.txt fetches made by the politeness layers
    // are seen too.
    let http = Arc::new(kb_crawl::http::HttpFetcher::for_request(&req).unwrap());
    let rec_fetcher = Arc::new(Recording {
        inner: http,
        calls: Mutex::default(),
    });
    let stacked = kb_crawl::politeness::stack(Arc::clone(&rec_fetcher) as _, &req);
    let sink = Arc::new(kb_crawl::memory::MemorySink::new());
    let crawler = Crawler::builder()
        .fetcher(stacked)
        .sink(Arc::clone(&sink) as _)
        .build()
        .unwrap();
    let rec = crawler.run(req).await.unwrap();
    assert_eq!(rec.status, JobStatus::Completed);
    let mut calls = rec_fetcher.calls.lock().unwrap().clone();
    let mut hits = fx.hits().into_iter().map(|h| h.path).collect::<Vec<_>>();
    calls.sort();
    hits.sort();
    // Query strings are part of the hit path; the fixture's links carry none after
    // normalization.
    assert_eq!(
        calls, hits,
        "a request reached the server without going through the Fetcher"
    );
    let docs = sink
        .keys()
        .into_iter()
        .filter(|k| k.ends_with(".md"))
        .count() as u64;
    assert_eq!(docs, rec.progress.stored);
}

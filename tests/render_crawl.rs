//! The engine with headless Chromium: `auto` renders only pages that need it and follows the
//! links scripts make; on a plain site it never starts a browser; a browser killed mid-crawl
//! is replaced and every page is stored once. Needs Debian's chromium (scripts/chromium.sh);
//! skipped without it unless `KB_CRAWL_REQUIRE_SERVICES=1`.

use crate::support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kb_crawl::memory::MemorySink;
use kb_crawl::render::{ChromeConfig, ChromeRenderer};
use kb_crawl::{CrawlRequest, Crawler, Guardrails, JobStatus, RenderMode, Sink};
use support::Fixture;

fn renderer(tabs: usize) -> Option<Arc<ChromeRenderer>> {
    match ChromeRenderer::new(ChromeConfig::default().with_max_tabs(tabs)) {
        Ok(r) => Some(Arc::new(r)),
        Err(e) => {
            assert!(
                std::env::var("KB_CRAWL_REQUIRE_SERVICES").as_deref() != Ok("1"),
                "chromium not found but KB_CRAWL_REQUIRE_SERVICES=1: {e}"
            );
            println!("SKIPPED: chromium not found (install with scripts/chromium.sh): {e}");
            None
        }
    }
}

fn request(fx: &Fixture, path: &str, depth: u32, mode: RenderMode) -> CrawlRequest {
    CrawlRequest::builder(fx.url(path))
        .max_depth(depth)
        .max_pages(100)
        .concurrency(2)
        .rate(None)
        .render(mode)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .build()
        .unwrap()
}

async fn stored(sink: &MemorySink, job: &kb_crawl::JobId) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for d in sink.list(job).await.unwrap() {
        let text = String::from_utf8(sink.get(&d.key).await.unwrap().unwrap()).unwrap();
        out.insert(d.url.path().to_owned(), text);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_mode_renders_script_pages_and_follows_their_links() {
    let Some(r) = renderer(2) else { return };
    let fx = Fixture::site().await;
    let sink = Arc::new(MemorySink::new());
    let crawler = Crawler::builder()
        .sink(Arc::clone(&sink) as _)
        .renderer(Arc::clone(&r) as _)
        .build()
        .unwrap();
    let rec = crawler
        .run(request(&fx, "/js/index.html", 1, RenderMode::Auto))
        .await
        .unwrap();
    assert_eq!(rec.status, JobStatus::Completed, "{:?}", rec.failure);
    let docs = stored(&sink, &rec.id).await;
    let home = docs.get("/js/index.html").unwrap_or_else(|| {
        panic!(
            "rendered home not stored: {:?} {:?}",
            docs.keys(),
            rec.progress
        )
    });
    assert!(home.contains("inserted by JavaScript"), "{home}");
    assert!(
        home.contains("fetched_by: rendered") && home.contains("render_reason: \"empty_app_root\""),
        "{home}"
    );
    let made = docs
        .get("/js/made-by-script.html")
        .expect("the script-made link was not followed");
    // A plain page needs no browser, even in auto mode.
    assert!(made.contains("fetched_by: http"), "{made}");
    kb_crawl::Renderer::shutdown(&*r).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_mode_on_a_plain_site_launches_no_browser() {
    let Some(r) = renderer(2) else { return };
    let fx = Fixture::site().await;
    let sink = Arc::new(MemorySink::new());
    let crawler = Crawler::builder()
        .sink(Arc::clone(&sink) as _)
        .renderer(Arc::clone(&r) as _)
        .build()
        .unwrap();
    let rec = crawler
        .run(request(&fx, "/", 3, RenderMode::Auto))
        .await
        .unwrap();
    assert_eq!(rec.status, JobStatus::Completed);
    assert!(rec.progress.stored >= 10);
    assert!(
        r.launched_pids().is_empty(),
        "a browser was launched: {:?}",
        r.launched_pids()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_browser_killed_mid_crawl_is_replaced_and_every_page_stored_once() {
    let Some(r) = renderer(1) else { return };
    let fx = Fixture::site().await;
    let sink = Arc::new(MemorySink::new());
    let crawler = Crawler::builder()
        .sink(Arc::clone(&sink) as _)
        .renderer(Arc::clone(&r) as _)
        .build()
        .unwrap();
    let mut req = request(&fx, "/", 2, RenderMode::Always);
    req.concurrency = 1;
    let handle = crawler.start(req).await.unwrap();
    let job = handle.id().clone();
    let killer = {
        let r = Arc::clone(&r);
        let sink = Arc::clone(&sink);
        let job = job.clone();
        tokio::spawn(async move {
            for _ in 0..600 {
                if sink.list(&job).await.unwrap().len() >= 2 {
                    if let Some(pid) = r.browser_pid().await {
                        let _ = std::process::Command::new("kill")
                            .args(["-9", &pid.to_string()])
                            .status();
                        return true;
                    }
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            false
        })
    };
    let rec = handle.wait().await.unwrap();
    assert!(killer.await.unwrap(), "the browser was never killed");
    assert_eq!(rec.status, JobStatus::Completed, "{:?}", rec.failure);
    assert_eq!(rec.progress.pages_processed, rec.progress.pages_total);
    assert!(
        r.launched_pids().len() >= 2,
        "browser not relaunched: {:?}",
        r.launched_pids()
    );
    let docs = sink.list(&job).await.unwrap();
    let mut urls: Vec<_> = docs.iter().map(|d| d.url.to_string()).collect();
    urls.sort();
    let n = urls.len();
    urls.dedup();
    assert_eq!(n, urls.len(), "a page was stored twice");
    // The pages a plain HTTP crawl stores at depth 2, all present.
    for p in [
        "/",
        "/a/",
        "/b/",
        "/c/",
        "/a/1.html",
        "/c/1.html",
        "/latin1.html",
    ] {
        assert!(
            urls.iter().any(|u| u.ends_with(p)),
            "{p} missing from {urls:#?}"
        );
    }
    kb_crawl::Renderer::shutdown(&*r).await;
}

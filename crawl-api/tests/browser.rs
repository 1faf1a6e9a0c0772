//! The Website Sources page in headless Chromium: fill the URL, start a crawl, watch the
//! progress reach 100 % and COMPLETED, see the job in the list, delete it, and check its
//! files and chunks are gone. Saves `target/screenshots/website-sources.png`.
//!
//! Without Chromium it prints `SKIPPED: chromium not found`; with
//! `KB_CRAWL_REQUIRE_SERVICES=1` a missing Chromium fails.

mod support;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::handler::viewport::Viewport;
use chromiumoxide::page::ScreenshotParams;
use chromiumoxide::Page;
use crawl_api::ingest::{ChunkIngestor, CHUNKS_FILE};
use crawl_api::ui;
use crawl_core::DynSink;
use crawl_store::FsSink;
use futures::StreamExt;
use support::{state_with, CannedSite, ROOT};

fn chromium() -> Option<PathBuf> {
    let from_env = std::env::var_os("CHROME").map(PathBuf::from);
    from_env
        .into_iter()
        .chain(
            [
                "/usr/bin/chromium",
                "/usr/bin/chromium-browser",
                "/usr/bin/google-chrome",
            ]
            .map(PathBuf::from),
        )
        .find(|p| p.is_file())
}

/// Every CDP call gets a deadline: a stuck browser fails the test instead of hanging it.
async fn cdp<T, E: std::fmt::Debug>(what: &str, f: impl Future<Output = Result<T, E>>) -> T {
    match tokio::time::timeout(Duration::from_secs(60), f).await {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => panic!("{what}: {e:?}"),
        Err(_) => panic!("hang guard: {what} took over 60 s"),
    }
}

async fn js<T: serde::de::DeserializeOwned>(page: &Page, expr: &str) -> T {
    let r = cdp(expr, page.evaluate(expr)).await;
    r.into_value().unwrap_or_else(|e| panic!("{expr}: {e}"))
}

/// Polls a page-side expression until it is true.
async fn until(page: &Page, what: &str, expr: &str) {
    for _ in 0..1200 {
        if js::<bool>(page, expr).await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("hang guard: {what} ({expr}) not true within 60 s");
}

fn screenshot_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/screenshots/website-sources.png")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_watch_list_and_delete_a_crawl_in_the_page() {
    let Some(chrome) = chromium() else {
        if std::env::var("KB_CRAWL_REQUIRE_SERVICES").as_deref() == Ok("1") {
            panic!("chromium not found and KB_CRAWL_REQUIRE_SERVICES=1");
        }
        println!("SKIPPED: chromium not found");
        return;
    };

    let data = tempfile::tempdir().unwrap();
    let sink: DynSink = Arc::new(FsSink::new(data.path()).unwrap());
    let ingestor = Arc::new(ChunkIngestor::new(Arc::clone(&sink)));
    let state = state_with(
        sink,
        ingestor,
        Arc::new(CannedSite::new(Duration::from_millis(100))),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = ui::app(state, "demo");
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });

    let profile = tempfile::tempdir().unwrap();
    let config = BrowserConfig::builder()
        .chrome_executable(&chrome)
        .no_sandbox()
        .user_data_dir(profile.path())
        .viewport(Viewport {
            width: 1100,
            height: 900,
            device_scale_factor: Some(1.0),
            ..Viewport::default()
        })
        .window_size(1100, 900)
        .args(["--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"])
        .build()
        .unwrap();
    let (mut browser, mut handler) = cdp("launch", Browser::launch(config)).await;
    // Handler errors (unknown CDP events) are not fatal: keep polling.
    let events = tokio::spawn(async move { while handler.next().await.is_some() {} });

    let page = cdp("new_page", browser.new_page(format!("http://{addr}/"))).await;
    until(
        &page,
        "page loaded",
        "document.getElementById('url') !== null",
    )
    .await;
    let title: String = js(&page, "document.querySelector('h1').textContent").await;
    assert_eq!(title, "Website Sources");
    let assistant: String = js(&page, "document.getElementById('assistant-id').textContent").await;
    assert_eq!(assistant, "demo");

    let url = cdp("find #url", page.find_element("#url")).await;
    cdp("click #url", url.click()).await;
    cdp("type url", url.type_str(ROOT)).await;
    let depth: String = js(&page, "document.getElementById('depth').value").await;
    let max_pages: String = js(&page, "document.getElementById('max-pages').value").await;
    assert_eq!(
        (depth.as_str(), max_pages.as_str()),
        ("2", "100"),
        "the page's defaults"
    );
    cdp(
        "click start",
        cdp("find #start", page.find_element("#start"))
            .await
            .click(),
    )
    .await;

    until(
        &page,
        "progress at 100 % and COMPLETED",
        "document.getElementById('progress').getAttribute('aria-valuenow') === '100' \
         && document.getElementById('active-status').textContent === 'COMPLETED'",
    )
    .await;
    let progress: String = js(
        &page,
        "document.getElementById('progress-text').textContent",
    )
    .await;
    let (done, total) = progress
        .trim_end_matches(" pages")
        .split_once(" / ")
        .unwrap_or_else(|| panic!("progress text: {progress}"));
    assert_eq!(done, total, "{progress}");
    assert!(total.parse::<u32>().unwrap() >= 1, "{progress}");

    until(
        &page,
        "job listed as COMPLETED",
        "(() => { const r = document.querySelector('#jobs tr[data-job-id]'); \
          return !!r && r.querySelector('.pill').textContent === 'COMPLETED'; })()",
    )
    .await;
    let job: String = js(
        &page,
        "document.querySelector('#jobs tr[data-job-id]').dataset.jobId",
    )
    .await;
    let listed_url: String = js(
        &page,
        "document.querySelector('#jobs tr[data-job-id] .url').textContent",
    )
    .await;
    assert_eq!(listed_url, ROOT);
    let pages: String = js(
        &page,
        "document.querySelector('#jobs tr[data-job-id] .pages').textContent",
    )
    .await;
    assert_eq!(pages, done, "the list shows the page count");
    let job_dir = data.path().join(&job);
    assert!(
        job_dir.join(CHUNKS_FILE).is_file(),
        "the chunk ingestor ran"
    );

    // The bar animates its width: let it reach the end before the screenshot.
    until(
        &page,
        "bar drawn full",
        "document.getElementById('progress').getBoundingClientRect().width + 1 >= \
         document.getElementById('bar').getBoundingClientRect().width",
    )
    .await;
    let shot = screenshot_path();
    std::fs::create_dir_all(shot.parent().unwrap()).unwrap();
    cdp(
        "screenshot",
        page.save_screenshot(ScreenshotParams::builder().full_page(true).build(), &shot),
    )
    .await;

    // Delete asks for a confirmation click.
    let del = cdp(
        "find delete",
        page.find_element("#jobs tr[data-job-id] button.delete"),
    )
    .await;
    cdp("click delete", del.click()).await;
    until(
        &page,
        "confirm state",
        "document.querySelector('button.delete').textContent === 'Confirm delete'",
    )
    .await;
    cdp("click confirm", del.click()).await;
    until(
        &page,
        "job gone from the list",
        "document.querySelector('#jobs tr[data-job-id]') === null \
         && document.querySelector('#jobs .empty') !== null",
    )
    .await;
    assert!(!job_dir.exists(), "the job's files and chunks are gone");
    let leftovers: Vec<_> = std::fs::read_dir(data.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().starts_with("job-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let status = reqwest_free_get(addr, &format!("/assistants/demo/crawl/{job}")).await;
    assert_eq!(status, 404);

    let _ = cdp("close", browser.close()).await;
    let _ = browser.wait().await;
    events.abort();
    server.abort();
}

/// The status of a GET over a raw HTTP/1.1 exchange (no client crate needed).
async fn reqwest_free_get(addr: std::net::SocketAddr, path: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await
    .unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.unwrap();
    let head = String::from_utf8_lossy(&buf);
    head.split_whitespace().nth(1).unwrap().parse().unwrap()
}

//! The scrape handler renders with Chromium when the job asks for it (feature
//! `aws-lambda-chrome`): a page whose text only exists once its script ran, served on
//! 127.0.0.1, stored by the real `init` and `scrape` handlers against S3 and DynamoDB on moto.
//! Needs `KB_CRAWL_AWS_ENDPOINT` and Chromium (`scripts/chromium.sh`); skipped without them
//! unless `KB_CRAWL_REQUIRE_SERVICES=1`.

use crate::common;

use std::sync::Arc;

use axum::response::Html;
use axum::routing::get;
use axum::Router;
use crawl_aws::lambda::{
    init, lambda_renderer, scrape, InitEvent, PageItem, ScrapeEvent, Services,
};
use crawl_core::{CrawlRequest, Guardrails, JobId, RenderMode, Sink};
use serde_json::json;

/// The text the script writes; absent from the HTML as served.
const SCRIPTED: &str = "Timetables are published by the registrar every term";

fn page() -> String {
    // The sentence is assembled by the script, so it is not in the HTML as served.
    let (head, tail) = SCRIPTED.split_at(10);
    format!(
        "<!doctype html><html lang=\"en\"><head><title>Scripted</title></head><body><main>\
         <h1>Scripted page</h1><div id=\"app\"></div>\
         <script>document.getElementById('app').innerHTML = '<p>' + ['{head}' + '{tail},', \
         'and this paragraph has enough words to count as the main content of the page,', \
         'which the extractor keeps.'].join(' ') + '</p>';</script>\
         </main></body></html>"
    )
}

async fn serve() -> String {
    let app = Router::new().route("/", get(|| async { Html(page()) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/")
}

fn chromium_available() -> bool {
    let ok =
        std::path::Path::new("/usr/bin/chromium").exists() || std::env::var_os("CHROME").is_some();
    if !ok {
        assert!(
            std::env::var("KB_CRAWL_REQUIRE_SERVICES").as_deref() != Ok("1"),
            "Chromium missing but KB_CRAWL_REQUIRE_SERVICES=1 (run scripts/chromium.sh)"
        );
        println!("SKIPPED: no Chromium (run scripts/chromium.sh)");
    }
    ok
}

async fn services(endpoint: &str) -> Services {
    Services::new(
        common::sink(endpoint, "kb").await,
        common::dedup(endpoint, None).await,
        common::jobs(endpoint).await,
    )
    .with_guardrails(Guardrails::lifted())
    .with_policy(
        crawl_core::CrawlPolicy::default()
            .with_allow_private_network(true)
            .with_rate(None),
    )
}

/// Runs init and the root's scrape; returns the root's outcome and its stored markdown.
async fn crawl_root(svc: &Services, url: &str) -> (String, Option<String>) {
    let req = CrawlRequest::builder(url)
        .max_depth(0)
        .render(RenderMode::Always)
        .rate(None)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .build()
        .unwrap();
    let job = JobId::new();
    let level = init(svc, InitEvent::new(job.clone(), &req)).await.unwrap();
    assert!(level.has_next);
    let item: PageItem =
        serde_json::from_value(json!({ "job_id": job, "url": url, "depth": 0 })).unwrap();
    let summary = scrape(svc, ScrapeEvent::Page(item)).await.unwrap();
    let docs = svc.sink.list(&job).await.unwrap();
    let body = match docs.first() {
        Some(d) => Some(String::from_utf8(svc.sink.get(&d.key).await.unwrap().unwrap()).unwrap()),
        None => None,
    };
    let outcome = match summary.skipped.keys().next() {
        Some(reason) => reason.clone(),
        None if summary.stored == 1 => "stored".to_owned(),
        None => "none".to_owned(),
    };
    (outcome, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scrape_handler_renders_a_scripted_page_with_chromium() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    if !chromium_available() {
        return;
    }
    assert!(!page().contains(SCRIPTED));
    let url = serve().await;

    // The zip build's worker has no browser: the page is skipped, nothing is stored.
    let plain = services(&endpoint).await;
    let (outcome, body) = crawl_root(&plain, &url).await;
    assert_eq!(outcome, "render_unavailable");
    assert!(body.is_none());

    // The container image's worker renders it: the script's text is in the document.
    let renderer = Arc::new(lambda_renderer(std::env::var("CHROME").ok()).unwrap());
    let chrome = services(&endpoint)
        .await
        .with_renderer(Arc::clone(&renderer) as _);
    let (outcome, body) = crawl_root(&chrome, &url).await;
    assert_eq!(outcome, "stored");
    let body = body.expect("a stored document");
    assert!(body.contains(SCRIPTED), "{body}");
    crawl_core::Renderer::shutdown(&*renderer).await;
}

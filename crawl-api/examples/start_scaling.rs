//! Does a start get slower as finished jobs accumulate? Times 1,000 `POST .../crawl` through
//! the router on an empty job store, then again with 4,000 more finished jobs in it, and
//! prints both and their ratio (issue 18: it was 2.4 s and 13.1 s, a scan of the job store per
//! start). The site answers instantly from memory; no network.
//!
//! ```text
//! cargo run --release -p crawl-api --example start_scaling [ACCUMULATED]
//! ```

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use crawl_api::{router, ApiState, InProcessRunner, Retention};
use crawl_core::{
    CrawlPolicy, CrawlRequest, Crawler, FetchRequest, FetchResponse, Fetcher, Guardrails, JobId,
    JobRecord, JobStatus, JobStore, NoopIngestor,
};
use tower::ServiceExt;

const STARTS: usize = 1_000;
/// Finished jobs added between the two rounds (first argument; default 4,000).
const ACCUMULATED: usize = 4_000;

/// Answers 404 to everything at once: robots.txt allows all, the root is skipped.
#[derive(Debug)]
struct Empty;

impl fmt::Display for Empty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Empty")
    }
}

#[async_trait]
impl Fetcher for Empty {
    async fn fetch(&self, req: &FetchRequest) -> crawl_core::Result<FetchResponse> {
        Ok(FetchResponse::new(req.url.clone(), 404, Vec::new())
            .with_header("content-type", "text/plain"))
    }
}

async fn starts(app: &Router, round: usize) -> Duration {
    let t = Instant::now();
    for i in 0..STARTS {
        let req = Request::post(format!("/assistants/r{round}-{i}/crawl"))
            .header("content-type", "application/json")
            .body(Body::from(r#"{"url": "http://site.test/", "maxDepth": 0}"#))
            .expect("request");
        let resp = app.clone().oneshot(req).await.expect("router");
        assert_eq!(resp.status(), StatusCode::ACCEPTED);
    }
    t.elapsed()
}

async fn settle(jobs: &dyn JobStore) {
    while jobs
        .list(None)
        .await
        .expect("list")
        .iter()
        .any(|r| !r.status.is_final())
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let crawler = Crawler::builder()
        .fetcher(Arc::new(Empty))
        .sink(Arc::new(crawl_core::memory::MemorySink::new()))
        .build()?;
    let jobs = Arc::clone(crawler.jobs());
    let state = ApiState::in_process(InProcessRunner::new(crawler), Arc::new(NoopIngestor))
        .guardrails(Guardrails::lifted())
        .policy(CrawlPolicy::default().with_rate(None))
        .max_running_per_assistant(usize::MAX)
        .max_running_total(usize::MAX)
        .retention(Retention::keep_all());
    let app = router(state);

    let accumulated = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(ACCUMULATED);
    let first = starts(&app, 0).await;
    settle(&*jobs).await;
    for i in 0..accumulated {
        let req = CrawlRequest::builder("http://site.test/")
            .assistant_id(Some(format!("old-{}", i % 50)))
            .build()?;
        let id = JobId::new();
        jobs.create(&JobRecord::new(
            id.clone(),
            req,
            time::OffsetDateTime::now_utc(),
        ))
        .await?;
        jobs.finish(&id, JobStatus::Completed, None).await?;
    }
    let held = jobs.list(None).await?.len();
    let second = starts(&app, 1).await;
    settle(&*jobs).await;
    println!(
        "{STARTS} starts, empty job store:          {:>8.3} s",
        first.as_secs_f64()
    );
    println!(
        "{STARTS} starts, {held} jobs in the store: {:>8.3} s",
        second.as_secs_f64()
    );
    println!("ratio: {:.2}", second.as_secs_f64() / first.as_secs_f64());
    // What each start did before: list the assistant's jobs to count the running ones (the
    // in-memory store filters all of them).
    let t = Instant::now();
    for i in 0..STARTS {
        let running = jobs
            .list(Some(&format!("r1-{i}")))
            .await?
            .iter()
            .filter(|r| r.status == JobStatus::Running)
            .count();
        std::hint::black_box(running);
    }
    println!(
        "for comparison, the former per-start scan alone, {STARTS} times over {held} jobs: {:.3} s",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

//! The serverless crawl end to end: the generated state machine runs in moto's Step
//! Functions (execute mode), its Lambda tasks served by the real handlers through a local
//! invoke proxy, against S3 and DynamoDB on the same moto, crawling a fixture site on
//! 127.0.0.1. Needs `KB_CRAWL_AWS_ENDPOINT` (set when moto is available; this test starts
//! its own moto from `.venv/moto`, see scripts/moto.sh); skipped without it unless
//! `KB_CRAWL_REQUIRE_SERVICES=1`.

mod common;
#[path = "sfn/harness.rs"]
mod harness;
#[path = "../../tests/support/mod.rs"]
mod support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crawl_aws::lambda::InitEvent;
use crawl_aws::sfn::{state_machine, SfnOptions};
use crawl_core::memory::MemorySink;
use crawl_core::{
    CrawlRequest, Crawler, DynSink, Guardrails, JobId, JobRecord, JobStatus, JobStore, Sink,
};
use harness::Harness;
use serde_json::json;
use support::Fixture;

fn services_available() -> bool {
    match std::env::var("KB_CRAWL_AWS_ENDPOINT") {
        Ok(e) if !e.trim().is_empty() => true,
        _ => {
            assert!(
                std::env::var("KB_CRAWL_REQUIRE_SERVICES").as_deref() != Ok("1"),
                "KB_CRAWL_AWS_ENDPOINT not set but KB_CRAWL_REQUIRE_SERVICES=1"
            );
            println!("SKIPPED: KB_CRAWL_AWS_ENDPOINT not set (start moto with scripts/moto.sh)");
            false
        }
    }
}

async fn site() -> Fixture {
    Fixture::serve(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/site")).await
}

fn request(fx: &Fixture, depth: u32, pages: u32) -> CrawlRequest {
    CrawlRequest::builder(fx.url("/"))
        .max_depth(depth)
        .max_pages(pages)
        .concurrency(1)
        .rate(None)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .build()
        .unwrap()
}

/// page URL → file bytes without the `fetched_at` and `depth` lines (see the redirect note
/// in the first test for why depth may differ). Keyed by URL, not by storage key: when two
/// pages share a title, the one written first gets the plain key, and serverless pages of a
/// level are written in parallel.
async fn documents(sink: &dyn Sink, job: &JobId) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for d in sink.list(job).await.unwrap() {
        let bytes = sink.get(&d.key).await.unwrap().unwrap();
        let text: String = String::from_utf8(bytes)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("fetched_at: ") && !l.starts_with("depth: "))
            .map(|l| format!("{l}\n"))
            .collect();
        out.insert(d.url.to_string(), text);
    }
    out
}

/// The same request crawled by the embedded engine (breadth first, one page at a time).
async fn embedded(req: &CrawlRequest) -> (JobRecord, BTreeMap<String, String>) {
    let sink: DynSink = Arc::new(MemorySink::new());
    let crawler = Crawler::builder().sink(Arc::clone(&sink)).build().unwrap();
    let rec = crawler.run(req.clone()).await.unwrap();
    let docs = documents(&*sink, &rec.id).await;
    (rec, docs)
}

/// Creates the generated state machine; returns its ARN.
async fn create_state_machine(h: &Harness) -> String {
    create_state_machine_with(h, SfnOptions::default()).await
}

/// Creates the state machine generated with `opts` (and the harness's function prefix).
async fn create_state_machine_with(h: &Harness, opts: SfnOptions) -> String {
    let opts =
        opts.with_function_prefix("arn:aws:lambda:us-east-1:123456789012:function:kb-crawl-");
    let def = h.definition_for_moto(state_machine(&opts));
    let sm = h
        .sfn(
            "CreateStateMachine",
            json!({
                "name": format!("kb-crawl-{}", &JobId::new().as_str()[4..]),
                "definition": def,
                "roleArn": "arn:aws:iam::123456789012:role/kb-crawl-sfn",
                "type": "STANDARD"
            }),
        )
        .await;
    sm["stateMachineArn"].as_str().unwrap().to_owned()
}

/// Creates the state machine, runs one execution to its end; returns its status and the
/// job record.
async fn run(h: &Harness, req: &CrawlRequest) -> (String, JobRecord) {
    execute(h, req, JobId::new()).await
}

/// Runs job `job` (its record may exist already) as one execution to its end.
async fn execute(h: &Harness, req: &CrawlRequest, job: JobId) -> (String, JobRecord) {
    let sm = create_state_machine(h).await;
    execute_on(h, &sm, req, job).await
}

/// Runs job `job` as one execution of state machine `sm` to its end.
async fn execute_on(h: &Harness, sm: &str, req: &CrawlRequest, job: JobId) -> (String, JobRecord) {
    let input = serde_json::to_string(&InitEvent::new(job.clone(), req)).unwrap();
    let ex = h
        .sfn(
            "StartExecution",
            json!({ "stateMachineArn": sm, "name": job.as_str(), "input": input }),
        )
        .await;
    let mut status = String::new();
    for _ in 0..600 {
        let d = h
            .sfn(
                "DescribeExecution",
                json!({ "executionArn": ex["executionArn"] }),
            )
            .await;
        status = d["status"].as_str().unwrap_or_default().to_owned();
        if status != "RUNNING" {
            if status != "SUCCEEDED" {
                println!("execution {status}: {d}");
            }
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let rec = h.svc.jobs.get(&job).await.unwrap().expect("job record");
    (status, rec)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn serverless_crawl_stores_the_same_documents_as_the_embedded_engine() {
    if !services_available() {
        return;
    }
    let fx = site().await;
    let h = Harness::start().await;
    // Every scrape item delivered twice: still one document and one count per page.
    h.faults.lock().unwrap().duplicate_scrapes = true;
    // The ingestion webhook refuses the first delivery: finalise fails, is retried, and
    // the retry delivers.
    h.webhook.lock().unwrap().fail_next = 1;
    let req = request(&fx, 3, 100);
    let (status, rec) = run(&h, &req).await;
    assert_eq!(status, "SUCCEEDED", "{rec:?}");
    assert_eq!(rec.status, JobStatus::Completed, "{rec:?}");
    assert_eq!(rec.progress.pages_processed, rec.progress.pages_total);
    let (emb, emb_docs) = embedded(&req).await;
    // Same documents and stored count. The skip counters may differ by redirects: a level's
    // pages run at once here, so a page redirecting to a URL first linked on the same level
    // claims it before the plan step sees the link (the embedded engine, admitting links as
    // each page ends, admits the target first and skips the redirect as duplicate_redirect).
    // The redirecting page then stores the target's document at its own depth (here the
    // fixture's /old → /b/page2.html: depth 1 instead of 2); bytes are otherwise identical.
    assert_eq!(
        rec.progress.stored, emb.progress.stored,
        "{rec:?} vs {emb:?}"
    );
    let docs = documents(&*h.svc.sink, &rec.id).await;
    assert!(docs.len() > 5, "{docs:?}");
    assert_eq!(
        docs.keys().collect::<Vec<_>>(),
        emb_docs.keys().collect::<Vec<_>>()
    );
    assert_eq!(docs, emb_docs);

    let (invoked, durations) = {
        let f = h.faults.lock().unwrap();
        (f.invoked.clone(), f.durations.clone())
    };
    for name in ["init", "scrape", "plan", "finalise"] {
        let d: Vec<f64> = durations
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, d)| d.as_secs_f64() * 1000.0)
            .collect();
        // Figures for crawl-aws/docs/cost.md (not asserted).
        println!(
            "MEASURED: {name}: {} runs, mean {:.1} ms, max {:.1} ms",
            d.len(),
            d.iter().sum::<f64>() / d.len().max(1) as f64,
            d.iter().copied().fold(0.0, f64::max)
        );
    }
    assert_eq!(invoked.first().map(String::as_str), Some("init"));
    assert_eq!(invoked.last().map(String::as_str), Some("finalise"));

    // The ingestion hand-off: one refused delivery, then one accepted, signed, listing
    // every stored document.
    let received = h.webhook.lock().unwrap().received.clone();
    let statuses: Vec<u16> = received.iter().map(|r| r.3).collect();
    assert_eq!(statuses, [503, 200], "{received:?}");
    let (signature, delivery, body, _) = &received[1];
    let timestamp = h.webhook.lock().unwrap().timestamps[1].clone();
    assert!(crawl_api::ingest::verify(
        harness::WEBHOOK_SECRET,
        body,
        signature,
        &timestamp,
        delivery,
        time::OffsetDateTime::now_utc().unix_timestamp(),
    ));
    assert_eq!(delivery, &format!("crawl.completed:{}", rec.id));
    let manifest: crawl_api::ingest::Manifest = serde_json::from_slice(body).unwrap();
    assert_eq!(manifest.crawl_job_id, rec.id.to_string());
    let mut urls: Vec<String> = manifest.documents.iter().map(|d| d.url.clone()).collect();
    urls.sort();
    assert_eq!(urls, docs.keys().cloned().collect::<Vec<_>>());
    // A re-delivered finalise (Lambda at-least-once): the job is already ingested.
    let state: crawl_aws::lambda::LevelState = serde_json::from_value(json!({
        "job_id": rec.id, "bucket": "unused", "level": 0, "level_key": "unused", "has_next": false
    }))
    .unwrap();
    let again = crawl_aws::lambda::finalise(&h.svc, state).await.unwrap();
    assert_eq!(again.status, JobStatus::Completed);
    assert_eq!(h.webhook.lock().unwrap().received.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn page_cap_and_depth_are_exact_and_a_failing_page_is_tolerated() {
    if !services_available() {
        return;
    }
    let fx = site().await;
    let h = Harness::start().await;
    // Depth 1: only the root's links.
    let req = request(&fx, 1, 100);
    let (status, rec) = run(&h, &req).await;
    assert_eq!(status, "SUCCEEDED");
    let (emb, emb_docs) = embedded(&req).await;
    assert_eq!(rec.progress.stored, emb.progress.stored);
    assert_eq!(rec.progress.pages_processed, rec.progress.pages_total);
    assert_eq!(documents(&*h.svc.sink, &rec.id).await, emb_docs);

    // Page cap 4: exactly four pages admitted and processed.
    let req = request(&fx, 3, 4);
    let (status, rec) = run(&h, &req).await;
    assert_eq!(status, "SUCCEEDED");
    assert_eq!(rec.progress.pages_total, 4);
    assert_eq!(rec.progress.pages_processed, 4);
    assert!(rec.progress.excluded.get("max_pages").copied().unwrap_or(0) > 0);

    // One worker crashes for good: the map tolerates it, the plan counts its pages
    // skipped. A crashed invocation loses its whole batch (here batches of one page; a
    // page failing inside a batch is the next test's).
    h.faults.lock().unwrap().failing_paths = vec!["/a/".into()];
    let req = request(&fx, 3, 100);
    let sm = create_state_machine_with(&h, SfnOptions::default().with_max_items_per_batch(1)).await;
    let (status, rec) = execute_on(&h, &sm, &req, JobId::new()).await;
    assert_eq!(status, "SUCCEEDED", "{rec:?}");
    assert_eq!(rec.status, JobStatus::Completed);
    assert_eq!(rec.progress.pages_processed, rec.progress.pages_total);
    assert_eq!(
        rec.progress.skipped.get("worker_failed"),
        Some(&1),
        "{rec:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_failing_page_of_a_batch_is_skipped_and_the_rest_of_the_batch_is_stored() {
    if !services_available() {
        return;
    }
    let fx = site().await;
    let h = Harness::start_with_sink_through_proxy().await;
    // Batches of 50: each level of the fixture site is one batch, one scrape invocation.
    let opts = SfnOptions::default().with_max_items_per_batch(50);
    let sm = create_state_machine_with(&h, opts).await;
    let req = request(&fx, 3, 100);
    let (status, clean) = execute_on(&h, &sm, &req, JobId::new()).await;
    assert_eq!(status, "SUCCEEDED", "{clean:?}");
    let clean_docs = documents(&*h.svc.sink, &clean.id).await;
    let levels = h
        .faults
        .lock()
        .unwrap()
        .invoked
        .iter()
        .filter(|n| *n == "scrape")
        .count();
    assert_eq!(levels, 4, "one batch per level (depths 0 to 3)");

    // The store of /a/3.html (a depth-2 page whose links are all known) is refused for
    // good inside the batch's one invocation: that page is skipped with its reason, the
    // batch's other pages are stored, and the batch is not retried.
    let target = fx.url("/a/3.html").to_string();
    {
        let mut f = h.faults.lock().unwrap();
        f.deny_document_put_containing = Some("This is the fixture page called A Three.".into());
        f.invoked.clear();
    }
    let (status, rec) = execute_on(&h, &sm, &req, JobId::new()).await;
    assert_eq!(status, "SUCCEEDED", "{rec:?}");
    let (denied, scrapes) = {
        let f = h.faults.lock().unwrap();
        let scrapes = f.invoked.iter().filter(|n| *n == "scrape").count();
        (f.denied_puts, scrapes)
    };
    assert_eq!(denied, 1, "one refused PUT, no retry of the batch");
    assert_eq!(scrapes, 4, "one invocation per level's batch");
    assert_eq!(rec.progress.pages_total, clean.progress.pages_total);
    assert_eq!(rec.progress.pages_processed, rec.progress.pages_total);
    assert_eq!(rec.progress.stored + 1, clean.progress.stored, "{rec:?}");
    assert_eq!(
        rec.progress.skipped.get("worker_failed"),
        Some(&1),
        "{rec:?}"
    );
    let docs = documents(&*h.svc.sink, &rec.id).await;
    let mut expected = clean_docs.clone();
    assert!(expected.remove(&target).is_some(), "{clean_docs:?}");
    assert_eq!(docs, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn include_and_exclude_patterns_apply_to_the_serverless_crawl_too() {
    if !services_available() {
        return;
    }
    let fx = site().await;
    let h = Harness::start().await;
    // The scrape and plan handlers admit links through the same check as the engine
    // (PageContext::exclusion): /b/ and everything under it stays out, and /old, which
    // redirects to /b/page2.html, is skipped.
    let req = CrawlRequest::builder(fx.url("/"))
        .max_depth(3)
        .max_pages(100)
        .concurrency(1)
        .rate(None)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .exclude(["/b/**"])
        .build()
        .unwrap();
    let (status, rec) = run(&h, &req).await;
    assert_eq!(status, "SUCCEEDED", "{rec:?}");
    let (emb, emb_docs) = embedded(&req).await;
    let docs = documents(&*h.svc.sink, &rec.id).await;
    assert!(docs.len() > 3, "{docs:?}");
    assert!(
        !docs.keys().any(|u| u.contains("/b/")),
        "an excluded page was stored: {docs:?}"
    );
    assert_eq!(docs, emb_docs);
    assert_eq!(rec.progress.excluded.get("pattern"), Some(&1), "{rec:?}");
    assert_eq!(
        rec.progress.excluded.get("pattern"),
        emb.progress.excluded.get("pattern")
    );
    assert_eq!(
        rec.progress.skipped.get("redirect_excluded_pattern"),
        Some(&1),
        "{rec:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_plan_run_dying_between_admission_and_the_level_list_is_retried_without_loss() {
    if !services_available() {
        return;
    }
    let fx = site().await;
    let h = Harness::start_with_sink_through_proxy().await;
    // The first plan run admits level 1 (dedup records, page reservations), then every S3
    // PUT of the level-1 list fails: the run ends with a retryable error, as if the Lambda had
    // died there. Step Functions retries the plan step; the retry must re-collect what the
    // first run admitted rather than see those URLs as already crawled.
    {
        let mut f = h.faults.lock().unwrap();
        f.fail_put_of = Some("sfn-level-1.json".into());
        f.fail_put_in_plan_runs = 1;
    }
    let req = request(&fx, 3, 100);
    let (status, rec) = run(&h, &req).await;
    let (invoked, failed_puts) = {
        let f = h.faults.lock().unwrap();
        (f.invoked.clone(), f.failed_puts)
    };
    assert!(failed_puts > 0, "the fault was not injected: {invoked:?}");
    assert_eq!(status, "SUCCEEDED", "{rec:?}");
    assert_eq!(rec.status, JobStatus::Completed, "{rec:?}");
    assert_eq!(
        rec.progress.pages_processed, rec.progress.pages_total,
        "{rec:?}"
    );
    let (emb, emb_docs) = embedded(&req).await;
    // Same documents as the embedded engine (totals may differ by a redirect: see the
    // first test).
    assert_eq!(
        rec.progress.stored, emb.progress.stored,
        "{rec:?} vs {emb:?}"
    );
    assert_eq!(documents(&*h.svc.sink, &rec.id).await, emb_docs);
    // The failed plan run was retried: one run more than the levels it planned.
    let plans = invoked.iter().filter(|n| *n == "plan").count();
    assert!(plans >= 2, "{invoked:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unreachable_robots_txt_fails_the_job_through_mark_failed() {
    if !services_available() {
        return;
    }
    let h = Harness::start().await;
    // Nothing listens on this port: robots.txt is unreachable, Init fails, MarkFailed runs.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let req = CrawlRequest::builder(format!("http://127.0.0.1:{port}/"))
        .rate(None)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .build()
        .unwrap();
    let (status, rec) = run(&h, &req).await;
    assert_eq!(status, "FAILED");
    assert_eq!(rec.status, JobStatus::Failed);
    assert_eq!(
        rec.failure.as_deref(),
        Some("robots_unreachable"),
        "{rec:?}"
    );
    let invoked = h.faults.lock().unwrap().invoked.clone();
    assert_eq!(invoked.last().map(String::as_str), Some("mark-failed"));
}

/// A site whose home page links to 5,000 pages that link nowhere.
fn wide_site() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kbc-wide-{}", &JobId::new().as_str()[4..]));
    std::fs::create_dir_all(dir.join("p")).unwrap();
    let page = |title: &str, body: &str| {
        format!(
            "<!doctype html><html lang=\"en\"><head><title>{title}</title></head><body><main>\
             <h1>{title}</h1><p>This page is called {title}; it has enough words to count as \
             real content for the extractor, which keeps paragraphs like this.</p>{body}\
             </main></body></html>"
        )
    };
    let links: String = (0..5000)
        .map(|i| format!("<a href=\"/p/{i}.html\">page {i}</a> "))
        .collect();
    std::fs::write(dir.join("index.html"), page("Wide Home", &links)).unwrap();
    for i in 0..5000 {
        std::fs::write(
            dir.join(format!("p/{i}.html")),
            page(&format!("Leaf {i}"), ""),
        )
        .unwrap();
    }
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_page_with_5000_links_and_a_level_without_links() {
    if !services_available() {
        return;
    }
    let dir = wide_site();
    let fx = Fixture::serve(dir.clone()).await;
    let h = Harness::start().await;
    // 5,000 links on the root: they travel through S3, never through the state payload;
    // level 1 has no links at all, and the plan step ends the crawl without a runtime error.
    let req = request(&fx, 3, 12);
    let (status, rec) = run(&h, &req).await;
    assert_eq!(status, "SUCCEEDED", "{rec:?}");
    assert_eq!(rec.status, JobStatus::Completed);
    assert_eq!(rec.progress.pages_total, 12);
    assert_eq!(rec.progress.pages_processed, 12);
    assert_eq!(rec.progress.stored, 12);
    assert_eq!(rec.progress.excluded.get("max_pages"), Some(&(5000 - 11)));
    let (invoked, durations) = {
        let f = h.faults.lock().unwrap();
        (f.invoked.clone(), f.durations.clone())
    };
    for (name, d) in &durations {
        if name != "scrape" {
            println!("MEASURED: {name}: {:.1} s", d.as_secs_f64());
        }
    }
    assert_eq!(
        invoked.iter().filter(|n| *n == "plan").count(),
        2,
        "{invoked:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn step_functions_runner_starts_and_cancels_jobs() {
    use crawl_api::Runner;
    use crawl_aws::sfn::StepFunctionsRunner;
    if !services_available() {
        return;
    }
    let fx = site().await;
    let h = Harness::start().await;
    let sm = create_state_machine(&h).await;
    let runner = StepFunctionsRunner::new(sm, Arc::clone(&h.svc.jobs), Some(h.moto_url.clone()))
        .await
        .unwrap()
        .with_guardrails(Guardrails::lifted());
    let mut req = request(&fx, 2, 100);
    req.assistant_id = Some("asst-1".into());
    let job = runner.start(req.clone()).await.unwrap();
    let first = h
        .svc
        .jobs
        .get(&job)
        .await
        .unwrap()
        .expect("record exists once start returns");
    assert_eq!(first.assistant_id.as_deref(), Some("asst-1"));
    let mut rec = first;
    for _ in 0..600 {
        rec = h.svc.jobs.get(&job).await.unwrap().unwrap();
        if rec.status.is_final() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(rec.status, JobStatus::Completed, "{rec:?}");
    assert_eq!(rec.progress.pages_processed, rec.progress.pages_total);
    assert!(rec.progress.stored > 5);

    // Its handlers wait until it is cancelled: on a loaded machine the small site was
    // crawled to the end before the cancel reached Step Functions.
    h.faults.lock().unwrap().hold_invocations = true;
    let job = runner.start(req).await.unwrap();
    runner.cancel(&job).await.unwrap();
    runner.cancel(&job).await.unwrap();
    let rec = h.svc.jobs.get(&job).await.unwrap().unwrap();
    h.faults.lock().unwrap().hold_invocations = false;
    assert_eq!(rec.status, JobStatus::Failed);
    assert_eq!(rec.failure.as_deref(), Some("cancelled"));
}

/// A run of the source of `req` under `tenant`, serverless: begun like the embedded engine
/// begins one (source and job record), then executed by the state machine.
async fn serverless_sync(h: &Harness, req: &CrawlRequest, tenant: &str) -> JobRecord {
    let sources = h.svc.sources.clone().unwrap();
    let jobs: crawl_core::DynJobStore = Arc::clone(&h.svc.jobs) as _;
    let (_, record) = crawl_core::engine::begin_run(
        &sources,
        &jobs,
        tenant,
        JobId::new(),
        req.clone(),
        time::OffsetDateTime::now_utc(),
    )
    .await
    .unwrap();
    let (status, rec) = execute(h, req, record.id.clone()).await;
    assert_eq!(status, "SUCCEEDED", "{rec:?}");
    assert_eq!(rec.status, JobStatus::Completed, "{rec:?}");
    rec
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_serverless_sync_gives_the_embedded_diff_and_documents() {
    if !services_available() {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/site");
    support::copy_dir(&fixture, root.path());
    let fx = Fixture::serve(root.path().to_owned()).await;
    let h = Harness::start().await;
    let req = request(&fx, 3, 100);
    let sink: DynSink = Arc::new(MemorySink::new());
    let crawler = Crawler::builder().sink(Arc::clone(&sink)).build().unwrap();
    let embedded_sync = |tenant: &'static str| {
        let (crawler, req) = (crawler.clone(), req.clone());
        async move {
            let (_, handle) = crawler.start_sync(tenant, req).await.unwrap();
            handle.wait().await.unwrap()
        }
    };

    let first = serverless_sync(&h, &req, "ast-1").await;
    let emb_first = embedded_sync("ast-1").await;
    assert_eq!(
        first.progress.changes, emb_first.progress.changes,
        "{first:?}"
    );
    assert!(first.progress.changes.added > 5, "{first:?}");

    // The site changes: one page edited, one deleted.
    let page2 = root.path().join("b/page2.html");
    let html = std::fs::read_to_string(&page2).unwrap();
    let edited = html.replacen(
        "</h1>",
        "</h1><p>A new paragraph about registration deadlines for the spring term.</p>",
        1,
    );
    std::fs::write(&page2, edited).unwrap();
    std::fs::remove_file(root.path().join("b/page3.html")).unwrap();

    let second = serverless_sync(&h, &req, "ast-1").await;
    let emb_second = embedded_sync("ast-1").await;
    let c = second.progress.changes;
    assert_eq!(c, emb_second.progress.changes, "{second:?}\n{emb_second:?}");
    assert_eq!((c.added, c.changed, c.removed), (0, 1, 1), "{c:?}");
    let documents_job = second.request.sync.as_ref().unwrap().documents.clone();
    assert_eq!(
        documents_job, first.id,
        "a run writes into the first run's documents"
    );
    let emb_documents = emb_second.request.sync.as_ref().unwrap().documents.clone();
    let docs = documents(&*h.svc.sink, &documents_job).await;
    assert_eq!(docs, documents(&*sink, &emb_documents).await);
    assert!(
        !docs.keys().any(|u| u.ends_with("/b/page3.html")),
        "{docs:?}"
    );
    // The webhook's manifest of the second run lists the diff only.
    let received = h.webhook.lock().unwrap().received.clone();
    let manifest: crawl_api::ingest::Manifest =
        serde_json::from_slice(&received.last().unwrap().2).unwrap();
    assert_eq!(manifest.documents.len(), 1, "{manifest:?}");
    assert!(
        manifest.documents[0].url.ends_with("/b/page2.html"),
        "{manifest:?}"
    );
    assert_eq!(manifest.removed.len(), 1, "{manifest:?}");
    assert!(
        manifest.removed[0].url.ends_with("/b/page3.html"),
        "{manifest:?}"
    );
    assert!(manifest.source_id.is_some());
}

/// A generated site on 127.0.0.1 whose answers come after a random delay of up to 40 ms
/// (pages end in a different order every run): `/` links `/n0`..`/n9`; `/nI` links
/// `/nI-0`..`/nI-9` and, out of order, one child of each of two siblings (reachable at two
/// depths through two parents). `/sitemap.xml` answers `sitemap` with `ORIGIN` replaced by
/// the site's origin, when given (else 404).
async fn delayed_tree(sitemap: Option<&'static str>) -> DelayedTree {
    use axum::http::{header, HeaderMap, StatusCode};
    use axum::response::IntoResponse;
    use std::hash::BuildHasher;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let salt = std::collections::hash_map::RandomState::new();
    let hits = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = Arc::clone(&hits);
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri, headers: HeaderMap| {
        let delay = salt.hash_one((uri.path(), std::time::Instant::now())) % 40;
        log.lock().unwrap().push(uri.path().to_owned());
        async move {
            tokio::time::sleep(Duration::from_millis(delay)).await;
            let path = uri.path();
            if path == "/sitemap.xml" {
                let host = headers
                    .get(header::HOST)
                    .and_then(|h| h.to_str().ok())
                    .unwrap_or_default();
                return match sitemap {
                    Some(xml) => (
                        [(header::CONTENT_TYPE, "application/xml")],
                        xml.replace("ORIGIN", &format!("http://{host}")),
                    )
                        .into_response(),
                    None => StatusCode::NOT_FOUND.into_response(),
                };
            }
            if path == "/robots.txt" {
                return StatusCode::NOT_FOUND.into_response();
            }
            let links: Vec<String> = if path == "/" {
                (0..10).map(|i| format!("/n{i}")).collect()
            } else if let Some(i) = path.strip_prefix("/n").filter(|r| !r.contains('-')) {
                let i: u32 = i.parse().unwrap_or(0);
                let mut l: Vec<String> = (0..10).map(|j| format!("/n{i}-{j}")).collect();
                l.push(format!("/n{}-{}", (i + 7) % 10, (i * 3) % 10));
                l.insert(0, format!("/n{}-9", (i + 1) % 10));
                l
            } else {
                Vec::new()
            };
            let list: String = links
                .iter()
                .map(|l| format!("<li><a href=\"{l}\">page {l}</a></li>"))
                .collect();
            let body = format!(
                "<!doctype html><html><head><title>Page {path}</title></head><body><main>\
                 <h1>Page {path}</h1><p>This is the page at {path}, with words enough to \
                 keep.</p><ul>{list}</ul></main></body></html>"
            );
            ([(header::CONTENT_TYPE, "text/html")], body).into_response()
        }
    });
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    DelayedTree {
        addr,
        hits,
        _task: AbortOnDrop(task),
    }
}

/// The site of [`delayed_tree`]: its address and the paths requested, in order.
struct DelayedTree {
    addr: std::net::SocketAddr,
    hits: Arc<std::sync::Mutex<Vec<String>>>,
    _task: AbortOnDrop,
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The URL paths of a crawl's documents (keys of [`documents`]).
fn paths(docs: &BTreeMap<String, String>) -> std::collections::BTreeSet<String> {
    docs.keys()
        .map(|u| url::Url::parse(u).unwrap().path().to_owned())
        .collect()
}

/// Runs `req` serverless on a state machine whose scrape map runs `concurrency` pages at
/// once.
async fn execute_at(h: &Harness, req: &CrawlRequest, concurrency: u32) -> JobRecord {
    let opts = SfnOptions::default().with_max_concurrency(concurrency);
    let sm = create_state_machine_with(h, opts).await;
    let (status, rec) = execute_on(h, &sm, req, JobId::new()).await;
    assert_eq!(status, "SUCCEEDED", "{rec:?}");
    rec
}

fn tree_request(
    addr: std::net::SocketAddr,
    pages: u32,
    sitemap: crawl_core::SitemapMode,
) -> CrawlRequest {
    CrawlRequest::builder(format!("http://{addr}/"))
        .max_depth(3)
        .max_pages(pages)
        .concurrency(4)
        .rate(None)
        .sitemap(sitemap)
        .detect_soft_404(false)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_capped_serverless_crawl_admits_the_embedded_pages_at_any_map_concurrency() {
    if !services_available() {
        return;
    }
    let site = delayed_tree(None).await;
    let req = tree_request(site.addr, 37, crawl_core::SitemapMode::Off);
    let (emb, emb_docs) = embedded(&req).await;
    let expected = paths(&emb_docs);
    assert_eq!(expected.len(), 37, "{emb:?}");
    let h = Harness::start().await;
    for concurrency in [1, 4, 16] {
        let rec = execute_at(&h, &req, concurrency).await;
        assert_eq!(rec.status, JobStatus::Completed, "{rec:?}");
        assert_eq!(rec.progress.pages_total, 37, "{rec:?}");
        let docs = documents(&*h.svc.sink, &rec.id).await;
        assert_eq!(paths(&docs), expected, "map concurrency {concurrency}");
    }
}

/// A sitemap listing pages no link reaches (`/s0`..`/s9`: leaves), one that links reach
/// only at depth 2 (`/n3-3`), the root (already admitted), an off-site URL and a `<loc>`
/// that is not a URL.
const TREE_SITEMAP: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
<url><loc>ORIGIN/</loc></url>\
<url><loc>ORIGIN/s0</loc><lastmod>2026-01-02</lastmod></url>\
<url><loc>ORIGIN/s1</loc></url><url><loc>ORIGIN/s2</loc></url>\
<url><loc>ORIGIN/n3-3</loc></url>\
<url><loc>https://elsewhere.example/page</loc></url>\
<url><loc>ORIGIN/s3</loc></url><url><loc>not a url</loc></url>\
<url><loc>ORIGIN/s4</loc></url><url><loc>ORIGIN/s5</loc></url><url><loc>ORIGIN/s6</loc></url>\
<url><loc>ORIGIN/s7</loc></url><url><loc>ORIGIN/s8</loc></url><url><loc>ORIGIN/s9</loc></url>\
</urlset>";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn serverless_sitemaps_add_the_embedded_pages_under_a_cap() {
    if !services_available() {
        return;
    }
    let site = delayed_tree(Some(TREE_SITEMAP)).await;
    let h = Harness::start().await;
    // A cap the sitemap alone spends (9 pages: the root and 8 of its URLs), and one that
    // leaves room for links.
    for pages in [9, 30] {
        let req = tree_request(site.addr, pages, crawl_core::SitemapMode::Auto);
        let (emb, emb_docs) = embedded(&req).await;
        let expected = paths(&emb_docs);
        assert!(expected.contains("/s0"), "{expected:?}");
        assert!(expected.contains("/n3-3"), "{expected:?}");
        assert_eq!(expected.len() as u32, pages, "{expected:?}");
        let rec = execute_at(&h, &req, 8).await;
        assert_eq!(rec.status, JobStatus::Completed, "{rec:?}");
        let docs = documents(&*h.svc.sink, &rec.id).await;
        assert_eq!(paths(&docs), expected, "cap {pages}");
        assert_eq!(docs, emb_docs, "cap {pages}");
        // The sitemap's counts are the embedded ones. `max_pages` is left out: links past
        // the budget are counted once per page that has them embedded, once per level
        // serverless (the plan step dedups a level's links before the budget).
        let without_cap = |m: &BTreeMap<String, u64>| {
            let mut m = m.clone();
            m.remove("max_pages");
            m
        };
        assert_eq!(
            without_cap(&rec.progress.excluded),
            without_cap(&emb.progress.excluded),
            "cap {pages}"
        );
        assert_eq!(
            rec.progress.excluded.get("sitemap_off_site"),
            Some(&1),
            "{:?}",
            rec.progress.excluded
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_serverless_sync_skips_pages_whose_sitemap_lastmod_is_not_newer() {
    if !services_available() {
        return;
    }
    let site = delayed_tree(Some(TREE_SITEMAP)).await;
    let h = Harness::start().await;
    let req = tree_request(site.addr, 9, crawl_core::SitemapMode::Auto);
    let first = serverless_sync(&h, &req, "ast-lastmod").await;
    assert_eq!(first.progress.changes.added, 9, "{first:?}");
    site.hits.lock().unwrap().clear();
    let second = serverless_sync(&h, &req, "ast-lastmod").await;
    // `/s0`'s lastmod (2026-01-02) is older than its last check: no request at all. The
    // sitemap's other URLs have no lastmod and are asked conditionally.
    let hits = site.hits.lock().unwrap().clone();
    assert!(!hits.contains(&"/s0".to_owned()), "{hits:?}");
    assert!(hits.contains(&"/s1".to_owned()), "{hits:?}");
    assert_eq!(second.progress.changes.unchanged, 9, "{second:?}");
    assert_eq!(second.progress.changes.removed, 0, "{second:?}");
}

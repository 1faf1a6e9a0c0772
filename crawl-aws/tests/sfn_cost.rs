//! What the serverless crawl costs, counted: every AWS call of a crawl of the fixture site
//! and of generated 50-, 200- and 500-page sites (a first crawl and an unchanged re-sync),
//! by service and operation, with DynamoDB capacity units, Lambda run times and Step
//! Functions transitions. Prints calls per stored page; with `KB_CRAWL_BLESS=1` writes
//! them to `crawl-aws/docs/calls.json`, which `cargo run -p crawl-aws --example cost` prices.
//! Needs moto like tests/sfn_e2e.rs.

mod common;
#[path = "sfn/harness.rs"]
mod harness;
#[path = "../../tests/support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crawl_aws::lambda::InitEvent;
use crawl_aws::sfn::{state_machine, SfnOptions};
use crawl_core::{CrawlRequest, Guardrails, JobId, JobRecord, JobStatus, JobStore};
use harness::{Calls, Harness};
use serde_json::{json, Value};
use support::Fixture;

fn request(fx: &Fixture, depth: u32, pages: u32) -> CrawlRequest {
    CrawlRequest::builder(fx.url("/"))
        .max_depth(depth)
        .max_pages(pages)
        .concurrency(1)
        // The host limiter takes a slot per fetch, as deployed (2 requests/s there; 20 here
        // so that 500 pages take 25 s).
        .rate(Some(20.0))
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .build()
        .unwrap()
}

/// The map concurrency of the counted runs: the priced deployment's (`cargo run --example
/// cost` bills each page's wait for the host at this many workers per host); it also sets
/// the batch size (`batch_size_for`: 20 pages).
const COUNTED_CONCURRENCY: u32 = 2;

/// Creates the generated state machine; returns its ARN.
async fn create_state_machine(h: &Harness) -> String {
    let opts = SfnOptions::default()
        .with_max_concurrency(COUNTED_CONCURRENCY)
        .with_function_prefix("arn:aws:lambda:us-east-1:123456789012:function:kb-crawl-");
    let sm = h
        .sfn(
            "CreateStateMachine",
            json!({
                "name": format!("kb-crawl-{}", &JobId::new().as_str()[4..]),
                "definition": h.definition_for_moto(state_machine(&opts)),
                "roleArn": "arn:aws:iam::123456789012:role/kb-crawl-sfn",
                "type": "STANDARD"
            }),
        )
        .await;
    sm["stateMachineArn"].as_str().unwrap().to_owned()
}

/// Runs job `job` as one execution to its end; returns the record and the parent
/// execution's state transitions (states entered, from its history).
async fn execute(h: &Harness, sm: &str, req: &CrawlRequest, job: JobId) -> (JobRecord, u64) {
    let input = serde_json::to_string(&InitEvent::new(job.clone(), req)).unwrap();
    let ex = h
        .sfn(
            "StartExecution",
            json!({ "stateMachineArn": sm, "name": job.as_str(), "input": input }),
        )
        .await;
    let arn = ex["executionArn"].clone();
    for _ in 0..6000 {
        let d = h
            .sfn("DescribeExecution", json!({ "executionArn": arn }))
            .await;
        if d["status"] != "RUNNING" {
            assert_eq!(d["status"], "SUCCEEDED", "{d}");
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let mut entered = 0;
    let mut token: Option<Value> = None;
    loop {
        let mut q = json!({ "executionArn": arn, "maxResults": 1000 });
        if let Some(t) = &token {
            q["nextToken"] = t.clone();
        }
        let page = h.sfn("GetExecutionHistory", q).await;
        entered += page["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| {
                e["type"]
                    .as_str()
                    .unwrap_or_default()
                    .ends_with("StateEntered")
            })
            .count() as u64;
        match page.get("nextToken").filter(|t| !t.is_null()) {
            Some(t) => token = Some(t.clone()),
            None => break,
        }
    }
    let rec = h.svc.jobs.get(&job).await.unwrap().expect("job record");
    assert_eq!(rec.status, JobStatus::Completed, "{rec:?}");
    (rec, entered)
}

/// A run of the source of `req` under `tenant` (the first one crawls, later ones re-sync).
async fn sync_run(h: &Harness, sm: &str, req: &CrawlRequest, tenant: &str) -> (JobRecord, u64) {
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
    execute(h, sm, req, record.id).await
}

/// A generated site of 1 + 8 + 64 + 512 pages, three levels below its home: every page
/// links to the home page, the 8 sections, its own section's 8 topics, its parent, its
/// siblings and its children (20 to 35 links, most of them seen before).
fn generated_site(dir: &Path) {
    let page = |path: &str, title: &str, links: Vec<String>| {
        let nav: String = links
            .iter()
            .map(|l| format!("<li><a href=\"{l}\">{l}</a></li>"))
            .collect();
        let body = format!(
            "<!doctype html><html lang=\"en\"><head><title>{title}</title></head><body>\
             <nav><ul>{nav}</ul></nav><main><h1>{title}</h1><p>{title} explains one part of \
             the institution's work: who to ask, which forms to file, the deadlines of the \
             term and where the office is. It has enough words to count as content.</p>\
             <p>Page {path} of the generated site.</p></main></body></html>"
        );
        let file = dir.join(path.trim_start_matches('/'));
        let file = if path.ends_with('/') {
            file.join("index.html")
        } else {
            file
        };
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, body).unwrap();
    };
    let sections: Vec<String> = (0..8).map(|a| format!("/s{a}/")).collect();
    let topics = |a: usize| -> Vec<String> { (0..8).map(|b| format!("/s{a}/t{b}/")).collect() };
    let leaves = |a: usize, b: usize| -> Vec<String> {
        (0..8).map(|c| format!("/s{a}/t{b}/p{c}.html")).collect()
    };
    let nav = |a: usize| -> Vec<String> {
        let mut l = vec!["/".to_owned()];
        l.extend(sections.clone());
        l.extend(topics(a));
        l
    };
    page("/", "Home", sections.clone());
    for (a, section) in sections.iter().enumerate() {
        page(section, &format!("Section {a}"), nav(a));
        for b in 0..8 {
            let mut l = nav(a);
            l.extend(leaves(a, b));
            page(&format!("/s{a}/t{b}/"), &format!("Topic {a}.{b}"), l);
            for c in 0..8 {
                let mut l = nav(a);
                l.extend(leaves(a, b));
                page(
                    &format!("/s{a}/t{b}/p{c}.html"),
                    &format!("Leaf {a}.{b}.{c}"),
                    l,
                );
            }
        }
    }
}

/// One priced run: the calls, with what the job did.
fn entry(site: &str, kind: &str, rec: &JobRecord, transitions: u64, calls: &Calls) -> Value {
    let scrapes = calls.lambda.get("scrape").map(|l| l.0).unwrap_or_default();
    json!({
        "site": site,
        "kind": kind,
        "max_pages": rec.request.max_pages,
        "pages_total": rec.progress.pages_total,
        "stored": rec.progress.stored,
        "unchanged": rec.progress.changes.unchanged,
        // Parent states entered (history) + one per child execution the Distributed Map
        // starts (AWS bills that transition whatever the child's type).
        "sfn_transitions": transitions + scrapes,
        // Each batch is one Express child execution whose one Task is one scrape
        // invocation: its requests are the scrape invocations, its duration theirs.
        "express_requests": scrapes,
        "express_ms": calls.lambda.get("scrape").map(|l| l.1.as_millis() as u64).unwrap_or_default(),
        "max_concurrency": COUNTED_CONCURRENCY,
        "max_items_per_batch": crawl_aws::sfn::batch_size_for(COUNTED_CONCURRENCY),
        "calls": calls.to_json(),
    })
}

fn print(label: &str, rec: &JobRecord, calls: &Calls, entered: u64) {
    let transitions = entered + calls.lambda.get("scrape").map(|l| l.0).unwrap_or_default();
    let per = rec.progress.pages_total.max(1) as f64;
    println!(
        "COUNTED: {label}: {} pages ({} stored, {} unchanged); per page: \
         {:.2} DynamoDB write units, {:.2} read units, {:.2} S3 PUT-tier, {:.2} GET-tier, \
         {:.2} Step Functions transitions",
        rec.progress.pages_total,
        rec.progress.stored,
        rec.progress.changes.unchanged,
        calls.write_units / per,
        calls.read_units / per,
        calls.s3_put_tier() as f64 / per,
        calls.s3_get_tier() as f64 / per,
        transitions as f64 / per,
    );
    for (name, (n, took)) in &calls.lambda {
        println!(
            "COUNTED: {label}:   lambda {name}: {n} runs, {} ms",
            took.as_millis()
        );
    }
    for (op, n) in &calls.ops {
        println!(
            "COUNTED: {label}:   {op}: {n} ({:.2} per page)",
            *n as f64 / per
        );
    }
    for (what, units) in &calls.write_units_by {
        println!(
            "COUNTED: {label}:   write units {what}: {units} ({:.2} per page)",
            units / per
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn counted_calls_of_the_fixture_site_and_generated_sites() {
    if common::endpoint().is_none() {
        return;
    }
    let h = Harness::start_counting().await;
    let sm = create_state_machine(&h).await;
    let mut runs = Vec::new();
    // Written after each run, so that a run cut short still leaves what it counted.
    let bless = |runs: &Vec<Value>| {
        if std::env::var("KB_CRAWL_BLESS").as_deref() == Ok("1") {
            let out = json!({
                "measured_by": "crawl-aws/tests/sfn_cost.rs (debug build, moto on 127.0.0.1)",
                "runs": runs,
            });
            let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/calls.json");
            std::fs::write(&path, serde_json::to_string_pretty(&out).unwrap() + "\n").unwrap();
        }
    };

    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/site");
    let fx = Fixture::serve(fixture).await;
    h.take_calls();
    let (rec, entered) = execute(&h, &sm, &request(&fx, 3, 100), JobId::new()).await;
    let calls = h.take_calls();
    assert!(rec.progress.stored > 5, "{rec:?}");
    print("fixture", &rec, &calls, entered);
    runs.push(entry("fixture", "first", &rec, entered, &calls));
    bless(&runs);

    let dir = tempfile::tempdir().unwrap();
    generated_site(dir.path());
    let gen = Fixture::serve(dir.path().to_owned()).await;
    let blessing = std::env::var("KB_CRAWL_BLESS").as_deref() == Ok("1");
    let sizes: Vec<u32> = std::env::var("KB_CRAWL_COST_SIZES")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        // Blessing records 50, 200 and 500 pages, a first crawl and a re-sync each, for the
        // cost table; the test command checks 50 pages both ways (moto answers a few dozen
        // requests a second: the 500-page runs take minutes there).
        // `KB_CRAWL_COST_SIZES=500` checks the 500-page first crawl.
        .unwrap_or_else(|| match blessing {
            true => vec![50, 200, 500],
            false => vec![50],
        });
    for pages in sizes {
        let req = request(&gen, 3, pages);
        let tenant = format!("cost-{pages}");
        let kinds: &[&str] = match blessing || pages < 500 {
            true => &["first", "resync"],
            false => &["first"],
        };
        for &kind in kinds {
            h.take_calls();
            let (rec, entered) = sync_run(&h, &sm, &req, &tenant).await;
            let calls = h.take_calls();
            assert_eq!(rec.progress.pages_total, u64::from(pages), "{rec:?}");
            if kind == "resync" {
                assert_eq!(rec.progress.changes.added, 0, "{rec:?}");
                assert_eq!(rec.progress.changes.changed, 0, "{rec:?}");
            } else {
                assert_eq!(rec.progress.stored, u64::from(pages), "{rec:?}");
            }
            print(&format!("generated {pages} {kind}"), &rec, &calls, entered);
            runs.push(entry("generated", kind, &rec, entered, &calls));
            bless(&runs);
            if kind == "first" {
                // Issue 15 item 2: a bounded number of write units per stored page, whatever
                // its number of links: at most 6, the host slot's included (the issue's
                // goal). Before item 2: 19 to 22; with a reservation flag per page (2 units,
                // in a transaction): 6.6 to 8.1. Now a page costs its dedup claim (1), its
                // source page state (2 on a first crawl: at scrape and at finalise) and the
                // host slot's updates (1.4 to 2: they depend on timing, an idle origin costs
                // a second update); a level costs its reservation and its counts.
                let stored = rec.progress.stored as f64;
                let per_page = calls.write_units / stored;
                println!(
                    "COUNTED: generated {pages} first: {per_page:.2} write units per page, \
                     of it the host slot's {:.2}",
                    calls.slot_write_units / stored
                );
                assert!(
                    per_page <= 6.0,
                    "{per_page:.2} write units per stored page (host slot {:.2})",
                    calls.slot_write_units / stored
                );
                // Issue 15 item 3: S3 PUTs per stored page, at most 2. Before batches: 3.03
                // (the document, its entry, a report per page); then 2.09 (the document, its
                // entry, a report per batch); now the document (its own entry) and per batch
                // of pages one report, plus a dozen objects per job: level and seen lists,
                // robots, sitemaps, template, manifest.
                let puts = calls.ops.get("s3 PutObject").copied().unwrap_or_default() as f64;
                let batches = calls.lambda.get("scrape").map(|l| l.0).unwrap_or_default();
                println!(
                    "COUNTED: generated {pages} first: {:.3} S3 PUTs per stored page \
                     ({batches} batches)",
                    puts / stored
                );
                assert!(
                    puts <= 2.0 * stored && puts <= stored + batches as f64 + 16.0,
                    "{:.3} S3 PUTs per stored page ({batches} batches)",
                    puts / stored
                );
            }
        }
    }
}

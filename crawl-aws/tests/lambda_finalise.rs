//! The ingestion hand-off when a finalise run dies holding it: a retry before the lease ends
//! reports `KbCrawl.IngestBusy` (which Finalise retries past the lease) and hands nothing
//! over; once the lease has ended, the retry hands the job over, once. Real `init`, `scrape`
//! and `finalise` handlers against S3 and DynamoDB on moto and a page on 127.0.0.1. Needs
//! `KB_CRAWL_AWS_ENDPOINT`; skipped without it unless `KB_CRAWL_REQUIRE_SERVICES=1`.

use crate::common;

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::response::Html;
use axum::routing::get;
use axum::Router;
use crawl_aws::lambda::{
    finalise, init, plan, scrape, InitEvent, LevelState, PageBatch, PageItem, ScrapeEvent, Services,
};
use crawl_aws::sfn::{ERR_INGEST_BUSY, INGEST_LEASE_SECS};
use crawl_aws::DynamoJobStore;
use crawl_core::clock::{DynClock, ManualClock};
use crawl_core::{CrawlRequest, Guardrails, Ingestor, JobId, JobRecord, StoredDoc};
use serde_json::json;

/// Counts hand-offs; `hang` makes every call wait forever (a Lambda that dies mid-call);
/// the first `refuse` calls fail as a knowledge base answering 400 would.
#[derive(Debug, Default)]
struct Counting {
    calls: AtomicUsize,
    hang: bool,
    refuse: AtomicUsize,
    delivered: AtomicUsize,
}

impl fmt::Display for Counting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("counting ingestor")
    }
}

#[async_trait]
impl Ingestor for Counting {
    async fn on_completed(
        &self,
        _job: &JobRecord,
        diff: &crawl_core::RunDiff<'_>,
    ) -> crawl_core::Result<()> {
        let all = diff.collect().await?;
        let docs: &[StoredDoc] = &all.upserts;
        assert_eq!(docs.len(), 1, "{docs:?}");
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.hang {
            std::future::pending::<()>().await;
        }
        if self
            .refuse
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            return Err(crawl_core::Error::new(
                crawl_core::ErrorKind::HttpStatus,
                "webhook refused crawl.completed: 400 Bad Request",
            ));
        }
        self.delivered.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
    async fn on_deleted(&self, _job: &JobRecord) -> crawl_core::Result<()> {
        Ok(())
    }
}

async fn serve() -> String {
    let page = "<!doctype html><html><head><title>Hand-off</title></head><body><main>\
                <h1>Hand-off</h1><p>One page whose job is handed to the knowledge base \
                exactly once, however often finalise runs.</p></main></body></html>";
    let app = Router::new().route("/", get(move || async move { Html(page) }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/")
}

/// Services over S3 and DynamoDB on moto (the job store on `clock`), and one stored page
/// of a job at `url`, ready to finalise.
async fn one_page_job(endpoint: &str, clock: Arc<ManualClock>) -> (Services, LevelState, JobId) {
    let jobs = DynamoJobStore::builder()
        .table(common::unique("jobs"))
        .endpoint_url(endpoint)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .clock(clock as DynClock)
        .build()
        .await
        .unwrap();
    jobs.create_table_if_missing().await.unwrap();
    let base = Services::new(
        common::sink(endpoint, "kb").await,
        common::dedup(endpoint, None).await,
        jobs,
    )
    .with_guardrails(Guardrails::lifted())
    .with_policy(
        crawl_core::CrawlPolicy::default()
            .with_allow_private_network(true)
            .with_rate(None),
    );
    let url = serve().await;
    let req = CrawlRequest::builder(&url)
        .max_depth(0)
        .rate(None)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .build()
        .unwrap();
    let job = JobId::new();
    let level: LevelState = init(&base, InitEvent::new(job.clone(), &req))
        .await
        .unwrap();
    let item: PageItem =
        serde_json::from_value(json!({ "job_id": job, "url": url, "depth": 0 })).unwrap();
    assert_eq!(
        scrape(&base, ScrapeEvent::Page(item)).await.unwrap().stored,
        1
    );
    (base, level, job)
}

/// A knowledge base refusing the hand-off (400): finalise records it on the job (COMPLETED,
/// `ingestion` failed with the reason and one attempt) instead of a COMPLETED job that says
/// nothing; the retry (the job API's, here its crate-level function) delivers the stored
/// documents without crawling; a re-delivered finalise and a second retry hand nothing over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_hand_off_is_recorded_as_failed_and_retried_once() {
    use crawl_core::IngestionState;
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let clock = Arc::new(ManualClock::new(time::OffsetDateTime::now_utc()));
    let (base, level, job) = one_page_job(&endpoint, clock).await;
    let kb = Arc::new(Counting {
        refuse: AtomicUsize::new(1),
        ..Counting::default()
    });
    let svc = base.with_ingestor(Arc::clone(&kb) as _);
    let rec = finalise(&svc, level.clone()).await.unwrap();
    assert_eq!(rec.status, crawl_core::JobStatus::Completed, "{rec:?}");
    assert_eq!(
        (
            rec.ingestion.state,
            rec.ingestion.attempts,
            rec.ingestion.reason.as_deref().unwrap_or("")
        ),
        (
            IngestionState::Failed,
            1,
            "http_status: webhook refused crawl.completed: 400 Bad Request"
        ),
        "{rec:?}"
    );
    let stored = crawl_core::JobStore::get(&*svc.jobs, &job)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.ingestion, rec.ingestion);

    let sink: &dyn crawl_core::Sink = &*svc.sink;
    let again = crawl_core::engine::retry_ingestion(&*svc.jobs, sink, &*kb, &job)
        .await
        .unwrap();
    assert_eq!(
        (
            again.ingestion.state,
            again.ingestion.attempts,
            again.ingestion.reason
        ),
        (IngestionState::Delivered, 2, None)
    );
    assert_eq!(kb.delivered.load(Ordering::SeqCst), 1);
    let e = crawl_core::engine::retry_ingestion(&*svc.jobs, sink, &*kb, &job)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), crawl_core::ErrorKind::Conflict, "{e}");
    finalise(&svc, level).await.unwrap();
    assert_eq!(kb.calls.load(Ordering::SeqCst), 2, "handed over again");
    assert_eq!(kb.delivered.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finalise_that_died_holding_the_hand_off_is_retried_after_the_lease() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let clock = Arc::new(ManualClock::new(time::OffsetDateTime::now_utc()));
    let jobs = DynamoJobStore::builder()
        .table(common::unique("jobs"))
        .endpoint_url(&endpoint)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .clock(Arc::clone(&clock) as DynClock)
        .build()
        .await
        .unwrap();
    jobs.create_table_if_missing().await.unwrap();
    let base = Services::new(
        common::sink(&endpoint, "kb").await,
        common::dedup(&endpoint, None).await,
        jobs,
    )
    .with_guardrails(Guardrails::lifted())
    .with_policy(
        crawl_core::CrawlPolicy::default()
            .with_allow_private_network(true)
            .with_rate(None),
    );
    let with = |ingestor: &Arc<Counting>| base.clone().with_ingestor(Arc::clone(ingestor) as _);

    let url = serve().await;
    let req = CrawlRequest::builder(&url)
        .max_depth(0)
        .rate(None)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .build()
        .unwrap();
    let job = JobId::new();
    let level: LevelState = init(&base, InitEvent::new(job.clone(), &req))
        .await
        .unwrap();
    let item: PageItem =
        serde_json::from_value(json!({ "job_id": job, "url": url, "depth": 0 })).unwrap();
    assert_eq!(
        scrape(&base, ScrapeEvent::Page(item)).await.unwrap().stored,
        1
    );

    // The first finalise takes the hand-off and dies in the middle of it.
    let dying = Arc::new(Counting {
        hang: true,
        ..Counting::default()
    });
    let run = tokio::spawn({
        let svc = with(&dying);
        let level = level.clone();
        async move { finalise(&svc, level).await }
    });
    while dying.calls.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    run.abort();
    let _ = run.await;

    // A retry while the dead run's lease lasts hands nothing over and says why.
    let retry = Arc::new(Counting::default());
    let err = finalise(&with(&retry), level.clone()).await.unwrap_err();
    assert_eq!(err.error_type, ERR_INGEST_BUSY, "{err:?}");
    assert_eq!(retry.calls.load(Ordering::SeqCst), 0);

    // Once the lease has ended, the next retry hands the job over; later ones do not.
    clock.advance(Duration::from_secs(INGEST_LEASE_SECS + 1));
    finalise(&with(&retry), level.clone()).await.unwrap();
    assert_eq!(retry.calls.load(Ordering::SeqCst), 1);
    finalise(&with(&retry), level).await.unwrap();
    assert_eq!(retry.calls.load(Ordering::SeqCst), 1);
}

/// A re-delivery of a batch that has run past its time budget keeps what an earlier
/// attempt finished (its report): the page stored stays counted as stored, not skipped as
/// `time_budget` while its document is in the sink (issue 15: the budget now runs from the
/// child's start, so a retry is often past it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_past_its_time_budget_keeps_what_an_earlier_attempt_stored() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let clock = Arc::new(ManualClock::new(time::OffsetDateTime::now_utc()));
    let (base, level, job) = one_page_job(&endpoint, clock).await;
    let url = crawl_core::Sink::list(&*base.sink, &job).await.unwrap()[0]
        .url
        .clone();
    let late = base.clone().with_batch_time_budget(Duration::ZERO);
    let item: PageItem =
        serde_json::from_value(json!({ "job_id": job, "url": url, "depth": 0 })).unwrap();
    let summary = scrape(&late, ScrapeEvent::Batch(PageBatch::new(vec![item])))
        .await
        .unwrap();
    assert_eq!(summary.pages, 1);
    assert_eq!(summary.stored, 1, "{summary:?}");
    plan(&late, level).await.unwrap();
    let rec = crawl_core::JobStore::get(&*late.jobs, &job)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rec.progress.pages_processed, 1);
    assert_eq!(rec.progress.stored, 1, "{rec:?}");
}

/// The time budget runs from the start of the batch's Express child execution (the
/// event's `ExecutionStartTime`, `$$.Execution.StartTime`), not from the invocation: a
/// retry of a batch whose child started 200 s ago starts no page, though the invocation has
/// just begun, and skips each as `time_budget` in the batch's report (so the child ends
/// inside Express's 5 minutes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_whose_child_started_past_the_budget_starts_no_page() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let clock = Arc::new(ManualClock::new(time::OffsetDateTime::now_utc()));
    let (base, _level, job) = one_page_job(&endpoint, clock).await;
    let url = crawl_core::Sink::list(&*base.sink, &job).await.unwrap()[0]
        .url
        .clone();
    let other = url.join("/not-started").unwrap();
    let child_started = time::OffsetDateTime::now_utc() - Duration::from_secs(200);
    let ev: ScrapeEvent = serde_json::from_value(json!({
        "Items": [
            { "job_id": job, "url": other, "depth": 0 },
            { "job_id": job, "url": url, "depth": 0 },
        ],
        "ExecutionStartTime": child_started
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap(),
    }))
    .unwrap();
    let summary = scrape(&base, ev).await.unwrap();
    assert_eq!(summary.pages, 2);
    assert_eq!(summary.stored, 0, "{summary:?}");
    assert_eq!(summary.skipped.get("time_budget"), Some(&2), "{summary:?}");
}

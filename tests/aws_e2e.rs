//! The embedded crawler with S3Sink + DynamoDedup + DynamoJobStore (on moto) stores exactly
//! the documents the filesystem sink stores: same keys, same bytes but for `fetched_at`.
//! Needs `KB_CRAWL_AWS_ENDPOINT` (scripts/moto.sh); skipped without it unless
//! `KB_CRAWL_REQUIRE_SERVICES=1`.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;

use kb_crawl::aws::{DynamoDedup, DynamoJobStore, S3Sink};
use kb_crawl::store::FsSink;
use kb_crawl::{CrawlRequest, Crawler, DynSink, Guardrails, JobId, JobStatus, Sink};
use support::Fixture;

fn endpoint() -> Option<String> {
    match std::env::var("KB_CRAWL_AWS_ENDPOINT") {
        Ok(e) if !e.trim().is_empty() => Some(e),
        _ => {
            assert!(
                std::env::var("KB_CRAWL_REQUIRE_SERVICES").as_deref() != Ok("1"),
                "KB_CRAWL_AWS_ENDPOINT not set but KB_CRAWL_REQUIRE_SERVICES=1"
            );
            println!("SKIPPED: KB_CRAWL_AWS_ENDPOINT not set (start moto with scripts/moto.sh)");
            None
        }
    }
}

fn unique(kind: &str) -> String {
    format!("kbc-e2e-{kind}-{}", &JobId::new().as_str()[4..])
}

/// key (without the job id) → file bytes without the `fetched_at` line.
async fn documents(sink: &dyn Sink, job: &JobId) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for d in sink.list(job).await.unwrap() {
        let bytes = sink.get(&d.key).await.unwrap().unwrap();
        let text: String = String::from_utf8(bytes)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("fetched_at: "))
            .map(|l| format!("{l}\n"))
            .collect();
        out.insert(d.key.trim_start_matches(job.as_str()).to_owned(), text);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn aws_backends_store_the_same_documents_as_the_filesystem() {
    let Some(ep) = endpoint() else { return };
    let fx = Fixture::site().await;
    let req = CrawlRequest::builder(fx.url("/"))
        .max_depth(3)
        .max_pages(100)
        .concurrency(8)
        .rate(None)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .build()
        .unwrap();

    let s3 = S3Sink::builder()
        .bucket(unique("b"))
        .prefix("kb")
        .endpoint_url(&ep)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .build()
        .await
        .unwrap();
    s3.create_bucket_if_missing().await.unwrap();
    let dedup = DynamoDedup::builder()
        .table(unique("dedup"))
        .endpoint_url(&ep)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .build()
        .await
        .unwrap();
    dedup.create_table_if_missing().await.unwrap();
    let jobs = DynamoJobStore::builder()
        .table(unique("jobs"))
        .endpoint_url(&ep)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .build()
        .await
        .unwrap();
    jobs.create_table_if_missing().await.unwrap();
    let s3: DynSink = Arc::new(s3);
    let aws = Crawler::builder()
        .sink(Arc::clone(&s3) as _)
        .dedup(Arc::new(dedup))
        .jobs(Arc::new(jobs))
        .build()
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let fs: DynSink = Arc::new(FsSink::new(dir.path()).unwrap());
    let local = Crawler::builder()
        .sink(Arc::clone(&fs) as _)
        .build()
        .unwrap();

    // Concurrency 1 for both, so colliding titles get the same keys in both runs.
    let job = JobId::new();
    let mut req1 = req.clone();
    req1.concurrency = 1;
    let a = aws
        .start_with_id(job.clone(), req1.clone())
        .await
        .unwrap()
        .wait()
        .await
        .unwrap();
    let b = local
        .start_with_id(job.clone(), req1)
        .await
        .unwrap()
        .wait()
        .await
        .unwrap();
    assert_eq!(a.status, JobStatus::Completed, "{:?}", a.failure);
    assert_eq!(b.status, JobStatus::Completed);
    assert_eq!(a.progress, b.progress, "counters differ");
    assert_eq!(a.progress.pages_processed, a.progress.pages_total);
    let (da, db) = (documents(&*s3, &job).await, documents(&*fs, &job).await);
    assert!(da.len() >= 10, "{da:?}");
    assert_eq!(da, db);
    assert!(
        s3.get(&format!("{job}/manifest.json"))
            .await
            .unwrap()
            .is_some(),
        "S3 manifest"
    );
}

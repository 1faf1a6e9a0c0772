//! The embedded crawler with S3Sink + DynamoDedup + DynamoJobStore (on moto) stores exactly
//! the documents the filesystem sink stores: same keys, same bytes but for `fetched_at`.
//! Needs `KB_CRAWL_AWS_ENDPOINT` (scripts/moto.sh); skipped without it unless
//! `KB_CRAWL_REQUIRE_SERVICES=1`.

use crate::common;
use crate::support;

use std::collections::BTreeMap;
use std::sync::Arc;

use kb_crawl::store::FsSink;
use kb_crawl::{CrawlRequest, Crawler, DynSink, Guardrails, JobId, JobStatus, Sink};
use support::Fixture;

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
    let Some(ep) = common::endpoint() else { return };
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

    let s3 = common::sink(&ep, "kb").await;
    let dedup = common::dedup(&ep, None).await;
    let jobs = common::jobs(&ep).await;
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

//! A job left RUNNING by a process that stopped is resumed by the next process's runner and
//! ends with every page stored exactly once.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use crawl_api::InProcessRunner;
use crawl_core::{CrawlRequest, Crawler, Guardrails, JobStatus, Sink};
use crawl_store::{FsSink, RedbStore};
use support::CannedSite;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runner_resumes_jobs_interrupted_by_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state.redb");
    let req = CrawlRequest::builder(support::ROOT)
        .max_depth(2)
        .rate(None)
        .concurrency(1)
        .guardrails(Guardrails::lifted())
        .build()
        .unwrap();

    // First process: a slow site; the process stops after the first page.
    let job = {
        let state = Arc::new(RedbStore::open(&db).unwrap());
        let sink = Arc::new(FsSink::new(dir.path().join("kb")).unwrap());
        let crawler = Crawler::builder()
            .fetcher(Arc::new(CannedSite::new(Duration::from_millis(300))))
            .sink(Arc::clone(&sink) as _)
            .state(state)
            .build()
            .unwrap();
        let handle = crawler.start(req).await.unwrap();
        let id = handle.id().clone();
        for _ in 0..500 {
            if !sink.list(&id).await.unwrap().is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        handle.abort().await;
        id
    };

    // Second process: same state file and folder. (In one test process the first crawler's
    // aborted tasks may hold the file a moment longer than a dead process would.)
    let mut opened = RedbStore::open(&db);
    for _ in 0..500 {
        if opened.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        opened = RedbStore::open(&db);
    }
    let state = Arc::new(opened.unwrap());
    let sink = Arc::new(FsSink::new(dir.path().join("kb")).unwrap());
    let crawler = Crawler::builder()
        .fetcher(Arc::new(CannedSite::new(Duration::ZERO)))
        .sink(Arc::clone(&sink) as _)
        .state(state)
        .build()
        .unwrap();
    let before = crawler.jobs().get(&job).await.unwrap().unwrap();
    assert_eq!(before.status, JobStatus::Running);
    let runner = InProcessRunner::new(crawler.clone());
    assert_eq!(
        runner.resume_interrupted().await.unwrap(),
        vec![job.clone()]
    );
    let mut rec = before;
    for _ in 0..1000 {
        rec = crawler.jobs().get(&job).await.unwrap().unwrap();
        if rec.status.is_final() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(rec.status, JobStatus::Completed, "{:?}", rec.failure);
    assert_eq!(rec.progress.pages_processed, rec.progress.pages_total);
    let docs = sink.list(&job).await.unwrap();
    assert_eq!(docs.len() as u64, rec.progress.stored);
    assert_eq!(docs.len(), 5, "{docs:?}");
    // Nothing is left to resume.
    assert!(runner.resume_interrupted().await.unwrap().is_empty());
}

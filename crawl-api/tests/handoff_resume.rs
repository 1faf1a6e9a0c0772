//! A hand-off to the knowledge base interrupted by a restart (the job record left
//! `ingestion: pending` after an attempt began) is made again, exactly once, by the next
//! process's runner.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::Router;
use crawl_api::ingest::{Manifest, WebhookIngestor};
use crawl_api::InProcessRunner;
use crawl_core::conformance::sample_doc;
use crawl_core::{
    ChangeLine, CrawlRequest, Crawler, IngestionClaim, IngestionState, JobId, JobRecord, JobStatus,
    JobStore, PageChange, PageState, Sink, SourceRecord, SyncTarget,
};
use crawl_store::{FsSink, RedbStore};

/// Every manifest the receiver accepted.
type Received = Arc<Mutex<Vec<Manifest>>>;

async fn receive(State(r): State<Received>, body: Bytes) -> StatusCode {
    match serde_json::from_slice::<Manifest>(&body) {
        Ok(m) => {
            r.lock().unwrap().push(m);
            StatusCode::NO_CONTENT
        }
        Err(_) => StatusCode::BAD_REQUEST,
    }
}

async fn receiver() -> (SocketAddr, Received) {
    let got = Received::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new()
        .route("/hook", post(receive))
        .with_state(Arc::clone(&got));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (addr, got)
}

/// Opens the state file, waiting while a previous store of this test process still holds it.
async fn open(db: &Path) -> Arc<RedbStore> {
    for _ in 0..500 {
        if let Ok(s) = RedbStore::open(db) {
            return Arc::new(s);
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("state file stays locked");
}

/// A process: the runner over the data folder, handing off to the webhook at `addr`.
async fn process(dir: &Path, addr: SocketAddr) -> InProcessRunner {
    let state = open(&dir.join("state.redb")).await;
    let hook = WebhookIngestor::new(format!("http://{addr}/hook"), b"s3cret".to_vec())
        .unwrap()
        .backoff(Duration::from_millis(20));
    let crawler = Crawler::builder()
        .sink(Arc::new(FsSink::new(dir.join("kb")).unwrap()))
        .state(Arc::clone(&state))
        .sources(state)
        .ingestor(Arc::new(hook))
        .build()
        .unwrap();
    InProcessRunner::new(crawler)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_hand_off_is_made_again_once_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (addr, got) = receiver().await;

    // The process that stopped: a run of a source completed, wrote its changes.jsonl, and
    // began its hand-off (pending, attempt 1) but never ended it.
    let run = JobId::new();
    let page = "https://site.example/a";
    {
        let state = open(&dir.path().join("state.redb")).await;
        let sink = FsSink::new(dir.path().join("kb")).unwrap();
        let now = time::OffsetDateTime::now_utc();
        let source = SourceRecord::new(
            "ast-1",
            url::Url::parse("https://site.example/").unwrap(),
            now,
        );
        let mut req = CrawlRequest::builder("https://site.example/")
            .build()
            .unwrap();
        req.sync = Some(SyncTarget::new(source.id.clone(), run.clone()));
        let jobs: &dyn JobStore = &*state;
        jobs.create(&JobRecord::new(run.clone(), req, now))
            .await
            .unwrap();
        let stored = sink
            .put(&sample_doc(&run, page, Some("A"), "a\n"))
            .await
            .unwrap();
        let p = PageState::new(stored.url, stored.key, "h-a", now, run.clone()).with_change(
            PageChange::Added,
            None,
            None,
        );
        let line = serde_json::to_string(&ChangeLine::of(&p)).unwrap() + "\n";
        sink.put_aux(&run, ChangeLine::FILE, line.into_bytes())
            .await
            .unwrap();
        jobs.finish(&run, JobStatus::Completed, None).await.unwrap();
        let claim = jobs
            .begin_ingestion(&run, crawl_core::engine::INGEST_LEASE)
            .await
            .unwrap();
        assert_eq!(claim, IngestionClaim::Mine { attempt: 1 });
    }

    // The next process hands it over, once.
    {
        let runner = process(dir.path(), addr).await;
        assert_eq!(runner.resume_hand_offs().await.unwrap(), vec![run.clone()]);
        let jobs = Arc::clone(runner.crawler().jobs());
        let mut delivered = None;
        for _ in 0..3000 {
            let r = jobs.get(&run).await.unwrap().unwrap();
            // The interrupted attempt is recorded as failed first, then the new one begins
            // (the state stays failed while its lease is held) and ends.
            if r.ingestion.attempts >= 2 && r.ingestion.lease_until.is_none() {
                delivered = Some(r);
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let r = delivered.expect("hang guard: the hand-off was not made again within 60 s");
        assert_eq!(r.ingestion.state, IngestionState::Delivered, "{r:?}");
        assert_eq!(r.ingestion.attempts, 2, "the resumed attempt is counted");
        let got = got.lock().unwrap();
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].crawl_job_id, run.to_string());
        let urls: Vec<&str> = got[0].documents.iter().map(|d| d.url.as_str()).collect();
        assert_eq!(
            urls,
            vec![page],
            "the run's diff, read back from changes.jsonl"
        );
    }

    // A second restart hands nothing over again.
    let runner = process(dir.path(), addr).await;
    assert!(runner.resume_hand_offs().await.unwrap().is_empty());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(got.lock().unwrap().len(), 1, "delivered twice");
}

//! The webhook ingestor against a local receiver on 127.0.0.1: signed, retried after a 500,
//! each completed job delivered exactly once, and deletes announced.

use crate::support;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use crawl_api::ingest::{
    verify, Manifest, WebhookIngestor, DELIVERY_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER,
};
use crawl_api::router;
use crawl_core::{CrawlRequest, Ingestor, JobId, JobRecord};
use support::{eventually, state_with, CannedSite, WatchedSink, ROOT};
use tower::ServiceExt;

const SECRET: &[u8] = b"s3cret";

#[derive(Default)]
struct Receiver {
    /// Answer 500 to this many requests first.
    fail_first: AtomicUsize,
    /// Then answer 400 to this many.
    refuse_first: AtomicUsize,
    requests: AtomicUsize,
    bad_signatures: AtomicUsize,
    /// Accepted deliveries by delivery id: how many times each was accepted.
    accepted: Mutex<HashMap<String, usize>>,
    manifests: Mutex<Vec<Manifest>>,
}

async fn receive(State(r): State<Arc<Receiver>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    r.requests.fetch_add(1, Ordering::SeqCst);
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_owned()
    };
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    if !verify(
        SECRET,
        &body,
        &header(SIGNATURE_HEADER),
        &header(TIMESTAMP_HEADER),
        &header(DELIVERY_HEADER),
        now,
    ) {
        r.bad_signatures.fetch_add(1, Ordering::SeqCst);
        return StatusCode::UNAUTHORIZED;
    }
    if r.fail_first
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
    {
        return StatusCode::INTERNAL_SERVER_ERROR;
    }
    if r.refuse_first
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
    {
        return StatusCode::BAD_REQUEST;
    }
    let delivery = headers[DELIVERY_HEADER].to_str().unwrap().to_owned();
    let manifest: Manifest = serde_json::from_slice(&body).unwrap();
    let mut accepted = r.accepted.lock().unwrap();
    let n = accepted.entry(delivery).or_default();
    *n += 1;
    if *n == 1 {
        r.manifests.lock().unwrap().push(manifest);
    }
    StatusCode::NO_CONTENT
}

async fn serve(r: Arc<Receiver>) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new().route("/hook", post(receive)).with_state(r);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    addr
}

fn webhook(addr: SocketAddr, secret: &[u8]) -> WebhookIngestor {
    WebhookIngestor::new(format!("http://{addr}/hook"), secret)
        .unwrap()
        .backoff(Duration::from_millis(20))
}

async fn call(app: &Router, method: &str, uri: &str, body: Option<String>) -> serde_json::Value {
    let req = axum::http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        .body(body.map_or_else(axum::body::Body::empty, axum::body::Body::from))
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    assert!(
        resp.status().is_success(),
        "{method} {uri}: {}",
        resp.status()
    );
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null)
}

#[tokio::test]
async fn each_completed_job_is_delivered_once_signed_even_after_a_500() {
    let receiver = Arc::new(Receiver {
        fail_first: AtomicUsize::new(1),
        ..Receiver::default()
    });
    let addr = serve(Arc::clone(&receiver)).await;
    let sink = Arc::new(WatchedSink::default());
    let state = state_with(
        sink,
        Arc::new(webhook(addr, SECRET)),
        Arc::new(CannedSite::new(Duration::ZERO)),
    );
    let app = router(state);
    let mut ids = Vec::new();
    // Two sites (two crawls of one URL would be two runs of its source, one at a time).
    for url in [ROOT.to_owned(), format!("{ROOT}a")] {
        let body = serde_json::json!({"url": url, "maxDepth": 2}).to_string();
        let v = call(&app, "POST", "/assistants/hooked/crawl", Some(body)).await;
        ids.push(v["crawlJobId"].as_str().unwrap().to_owned());
    }
    eventually("both deliveries", || async {
        (receiver.manifests.lock().unwrap().len() == 2).then_some(())
    })
    .await;
    // Give a duplicate a chance to show up before counting.
    for id in &ids {
        let v = call(&app, "GET", &format!("/assistants/hooked/crawl/{id}"), None).await;
        assert_eq!(v["status"], "COMPLETED");
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(receiver.bad_signatures.load(Ordering::SeqCst), 0);
    assert_eq!(
        receiver.requests.load(Ordering::SeqCst),
        3,
        "one 500, retried once"
    );
    let accepted = receiver.accepted.lock().unwrap().clone();
    for id in &ids {
        assert_eq!(
            accepted.get(&format!("crawl.completed:{id}")),
            Some(&1),
            "{accepted:?}"
        );
    }
    for m in receiver.manifests.lock().unwrap().iter() {
        assert_eq!(m.event, "crawl.completed");
        assert_eq!(m.assistant_id.as_deref(), Some("hooked"));
        assert!(ids.contains(&m.crawl_job_id));
        for d in &m.documents {
            assert!(
                d.key.starts_with(&m.crawl_job_id) && d.content_hash.len() == 64,
                "{d:?}"
            );
        }
    }

    call(
        &app,
        "DELETE",
        &format!("/assistants/hooked/crawl/{}", ids[0]),
        None,
    )
    .await;
    let deleted = receiver.manifests.lock().unwrap().last().cloned().unwrap();
    assert_eq!(deleted.event, "crawl.deleted");
    assert_eq!(deleted.crawl_job_id, ids[0]);
    assert!(deleted.documents.is_empty());
}

/// The hand-off of a crawl reads its documents a page at a time: nothing lists every
/// document of the job at once (the engine used to hand the webhook `Sink::list`'s whole
/// `Vec`), and the streamed, signed manifest still names each stored document once.
#[tokio::test]
async fn a_crawl_is_handed_to_the_webhook_without_listing_the_whole_job() {
    let receiver = Arc::new(Receiver::default());
    let addr = serve(Arc::clone(&receiver)).await;
    let sink = Arc::new(WatchedSink::default());
    // A plain crawl (the job API's crawls are runs of a source, whose diff is their
    // changes.jsonl).
    let crawler = crawl_core::Crawler::builder()
        .fetcher(Arc::new(CannedSite::new(Duration::ZERO)))
        .sink(Arc::clone(&sink) as crawl_core::DynSink)
        .ingestor(Arc::new(webhook(addr, SECRET)))
        .build()
        .unwrap();
    let req = CrawlRequest::builder(ROOT).max_depth(2).build().unwrap();
    let rec = crawler.start(req).await.unwrap().wait().await.unwrap();
    assert_eq!(rec.status, crawl_core::JobStatus::Completed, "{rec:?}");
    let id = rec.id.to_string();
    eventually("the delivery", || async {
        (receiver.manifests.lock().unwrap().len() == 1).then_some(())
    })
    .await;
    assert_eq!(receiver.bad_signatures.load(Ordering::SeqCst), 0);
    assert_eq!(
        sink.whole_lists.load(Ordering::SeqCst),
        0,
        "the hand-off listed every document of the job at once"
    );
    let m = receiver.manifests.lock().unwrap()[0].clone();
    let job: JobId = id.parse().unwrap();
    let mut stored: Vec<(String, String, String)> = crawl_core::Sink::list(&sink.inner, &job)
        .await
        .unwrap()
        .into_iter()
        .map(|d| (d.url.to_string(), d.key, d.content_hash))
        .collect();
    let mut sent: Vec<_> = m
        .documents
        .into_iter()
        .map(|d| (d.url, d.key, d.content_hash))
        .collect();
    stored.sort();
    sent.sort();
    assert!(stored.len() > 1, "{stored:?}");
    assert_eq!(sent, stored);
    assert!(m.removed.is_empty());
}

async fn call_status(app: &Router, method: &str, uri: &str) -> (StatusCode, serde_json::Value) {
    let req = axum::http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        .body(axum::body::Body::empty())
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    )
}

/// A webhook answering 400: the job is COMPLETED with `ingestion` failed, the reason and one
/// attempt (not a silent log line); `POST .../ingest` hands the same documents over again
/// without crawling (202, delivered); a second retry is refused (409); the receiver accepted
/// the job's diff exactly once.
#[tokio::test]
async fn a_refused_hand_off_is_visible_and_retried_once_through_the_api() {
    let receiver = Arc::new(Receiver {
        refuse_first: AtomicUsize::new(1),
        ..Receiver::default()
    });
    let addr = serve(Arc::clone(&receiver)).await;
    let site = Arc::new(CannedSite::new(Duration::ZERO));
    let state = state_with(
        Arc::new(WatchedSink::default()),
        Arc::new(webhook(addr, SECRET)),
        Arc::clone(&site),
    );
    let app = router(state);
    let body = serde_json::json!({"url": ROOT, "maxDepth": 2}).to_string();
    let v = call(&app, "POST", "/assistants/hooked/crawl", Some(body)).await;
    let id = v["crawlJobId"].as_str().unwrap().to_owned();
    assert_eq!(v["status"], "RUNNING");
    let one = format!("/assistants/hooked/crawl/{id}");
    let v = eventually("the hand-off's outcome", || async {
        let v = call(&app, "GET", &one, None).await;
        (v["ingestion"] != "pending").then_some(v)
    })
    .await;
    assert_eq!(v["status"], "COMPLETED", "{v}");
    assert_eq!(v["ingestion"], "failed", "{v}");
    assert_eq!(v["ingestionAttempts"], 1, "{v}");
    let reason = v["ingestionReason"].as_str().unwrap_or_default();
    assert!(reason.contains("400"), "{v}");
    assert!(receiver.manifests.lock().unwrap().is_empty());

    let fetches = site.fetches.load(Ordering::SeqCst);
    let (status, v) = call_status(&app, "POST", &format!("{one}/ingest")).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{v}");
    assert_eq!(
        (
            &v["ingestion"],
            &v["ingestionAttempts"],
            &v["ingestionReason"]
        ),
        (
            &serde_json::json!("delivered"),
            &serde_json::json!(2),
            &serde_json::Value::Null
        ),
        "{v}"
    );
    assert_eq!(site.fetches.load(Ordering::SeqCst), fetches, "re-crawled");
    let (status, v) = call_status(&app, "POST", &format!("{one}/ingest")).await;
    assert_eq!(status, StatusCode::CONFLICT, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("already delivered"),
        "{v}"
    );
    let v = call(&app, "GET", &one, None).await;
    assert_eq!(
        (&v["ingestion"], &v["ingestionAttempts"]),
        (&serde_json::json!("delivered"), &serde_json::json!(2))
    );

    assert_eq!(
        receiver.requests.load(Ordering::SeqCst),
        2,
        "one 400, one 204"
    );
    let accepted = receiver.accepted.lock().unwrap().clone();
    assert_eq!(
        accepted.get(&format!("crawl.completed:{id}")),
        Some(&1),
        "{accepted:?}"
    );
    let manifests = receiver.manifests.lock().unwrap().clone();
    assert_eq!(manifests.len(), 1);
    assert_eq!(manifests[0].crawl_job_id, id);
    assert!(!manifests[0].documents.is_empty(), "{manifests:?}");
    // Another assistant's job id is not found.
    let (status, _) = call_status(
        &app,
        "POST",
        &format!("/assistants/other/crawl/{id}/ingest"),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

fn record() -> JobRecord {
    let req = CrawlRequest::builder(ROOT)
        .assistant_id(Some("a".into()))
        .build()
        .unwrap();
    JobRecord::new(JobId::new(), req, time::OffsetDateTime::UNIX_EPOCH)
}

#[tokio::test]
async fn the_manifest_has_the_documented_fields_and_a_valid_signature() {
    let receiver = Arc::new(Receiver::default());
    let addr = serve(Arc::clone(&receiver)).await;
    let doc = crawl_core::StoredDoc::new(
        "http://site.test/a".parse().unwrap(),
        "job-1/site.test/a.md".into(),
        "ab".repeat(32),
    );
    let rec = record();
    webhook(addr, SECRET)
        .on_completed(&rec, &crawl_core::RunDiff::all_added(vec![doc]))
        .await
        .unwrap();
    let m = serde_json::to_value(&receiver.manifests.lock().unwrap()[0]).unwrap();
    assert_eq!(
        m,
        serde_json::json!({
            "event": "crawl.completed",
            "crawlJobId": rec.id.to_string(),
            "assistantId": "a",
            "documents": [{"url": "http://site.test/a", "key": "job-1/site.test/a.md", "contentHash": "ab".repeat(32)}],
            "removed": []
        })
    );
}

#[tokio::test]
async fn a_wrong_secret_fails_without_retry_and_a_dead_receiver_after_the_attempts() {
    let receiver = Arc::new(Receiver::default());
    let addr = serve(Arc::clone(&receiver)).await;
    let e = webhook(addr, b"wrong")
        .on_completed(&record(), &crawl_core::RunDiff::default())
        .await
        .unwrap_err();
    assert_eq!(
        receiver.requests.load(Ordering::SeqCst),
        1,
        "a 4xx is not retried"
    );
    assert!(e.to_string().contains("401"), "{e}");

    let always = Arc::new(Receiver {
        fail_first: AtomicUsize::new(usize::MAX),
        ..Receiver::default()
    });
    let addr = serve(Arc::clone(&always)).await;
    let e = webhook(addr, SECRET)
        .attempts(3)
        .on_deleted(&record())
        .await
        .unwrap_err();
    assert_eq!(always.requests.load(Ordering::SeqCst), 3);
    assert!(
        e.is_temporary() && e.to_string().contains("3 attempts"),
        "{e}"
    );
}

//! The init handler takes only the API body from its event (issue 18, item 2): the documented
//! body `{url, maxDepth, maxPages}` starts a crawl with the worker's defaults, and an event
//! that tries to set the crawl policy (`allowPrivateNetwork`...) is refused before anything is
//! fetched. Real handlers against S3 and DynamoDB on moto and a site on 127.0.0.1. Needs
//! `KB_CRAWL_AWS_ENDPOINT`; skipped without it unless `KB_CRAWL_REQUIRE_SERVICES=1`.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::response::Html;
use axum::routing::get;
use axum::Router;
use crawl_aws::lambda::{dispatch, Services};
use crawl_aws::sfn::ERR_INVALID;
use crawl_core::{CrawlPolicy, CrawlRequest, Guardrails, JobId, JobStore};
use serde_json::json;

/// A one-page site on loopback counting every request it gets.
async fn serve() -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    let app = Router::new().fallback(get(move || {
        counter.fetch_add(1, Ordering::SeqCst);
        async {
            Html(
                "<!doctype html><html><head><title>Intranet</title></head><body><main>\
                 <h1>Intranet</h1><p>Only reachable from inside; the crawler may come here \
                 only when its deployment says so.</p></main></body></html>",
            )
        }
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/"), hits)
}

async fn services(endpoint: &str, policy: CrawlPolicy) -> Services {
    Services::new(
        common::sink(endpoint, "kb").await,
        common::dedup(endpoint, None).await,
        common::jobs(endpoint).await,
    )
    .with_guardrails(Guardrails::default())
    .with_policy(policy)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_init_event_setting_allow_private_network_is_refused() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    // The deployment's policy: public network only (the default).
    let svc = services(&endpoint, CrawlPolicy::default()).await;
    let (url, hits) = serve().await;
    // What a caller could send through the template before: a whole crawl request with the
    // SSRF guard and robots.txt switched off.
    let hostile = CrawlRequest::builder(&url)
        .max_depth(0)
        .allow_private_network(true)
        .respect_robots(false)
        .build()
        .unwrap();
    let job = JobId::new();
    let event = json!({ "job_id": job, "assistant_id": "a", "request": hostile });
    let err = dispatch(&svc, "init", event).await.unwrap_err();
    assert_eq!(err.error_type, ERR_INVALID, "{err:?}");
    assert!(err.error_message.contains("unknown field"), "{err:?}");
    // Just the switch, with the documented fields.
    let event = json!({ "job_id": job, "request": {"url": url, "allowPrivateNetwork": true} });
    let err = dispatch(&svc, "init", event).await.unwrap_err();
    assert_eq!(err.error_type, ERR_INVALID, "{err:?}");
    assert!(err.error_message.contains("allowPrivateNetwork"), "{err:?}");
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "the private site was reached"
    );
    assert!(JobStore::get(&*svc.jobs, &job).await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_documented_body_starts_a_crawl_with_the_workers_policy() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    // A deployment crawling an intranet says so in its own configuration.
    let policy = CrawlPolicy::default()
        .with_allow_private_network(true)
        .with_rate(None);
    let svc = services(&endpoint, policy)
        .await
        .with_guardrails(Guardrails::lifted());
    let (url, hits) = serve().await;
    let job = JobId::new();
    let event = json!({
        "job_id": job,
        "assistant_id": "asst-1",
        "request": {"url": url, "maxDepth": 3, "maxPages": 100}
    });
    let level = dispatch(&svc, "init", event).await.unwrap();
    assert_eq!(level["has_next"], true, "{level}");
    assert!(hits.load(Ordering::SeqCst) >= 1);
    let rec = JobStore::get(&*svc.jobs, &job).await.unwrap().unwrap();
    assert_eq!(rec.assistant_id.as_deref(), Some("asst-1"));
    assert_eq!((rec.request.max_depth, rec.request.max_pages), (3, 100));
    assert!(rec.request.allow_private_network && rec.request.respect_robots);
    assert_eq!(rec.request.concurrency, CrawlPolicy::default().concurrency);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_assistant_id_that_is_not_a_plain_id_is_refused() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let svc = services(&endpoint, CrawlPolicy::default()).await;
    let job = JobId::new();
    for id in ["a\", \"x\": \"y", "invalid id", "a/b"] {
        let event =
            json!({ "job_id": job, "assistant_id": id, "request": {"url": "https://a.test/"} });
        let err = dispatch(&svc, "init", event).await.unwrap_err();
        assert_eq!(err.error_type, ERR_INVALID, "{id}: {err:?}");
        assert!(err.error_message.starts_with("assistant_id"), "{err:?}");
    }
    assert!(JobStore::get(&*svc.jobs, &job).await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_webhook_key_is_read_from_secrets_manager() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    // Create the secret on the stand-in (Secrets Manager's JSON protocol).
    let name = common::unique("hook");
    let created = reqwest::Client::new()
        .post(&endpoint)
        .header("x-amz-target", "secretsmanager.CreateSecret")
        .header("content-type", "application/x-amz-json-1.1")
        .header(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/secretsmanager/aws4_request, \
             SignedHeaders=host, Signature=0",
        )
        .body(json!({"Name": name, "SecretString": "hmac-key-1"}).to_string())
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let created: serde_json::Value = serde_json::from_slice(&created).unwrap();
    let arn = created["ARN"].as_str().unwrap();
    let key = crawl_aws::lambda::read_secret(arn, Some(endpoint.clone()))
        .await
        .unwrap();
    assert_eq!(key, "hmac-key-1");
    let missing = format!("{arn}-missing");
    let e = crawl_aws::lambda::read_secret(&missing, Some(endpoint))
        .await
        .unwrap_err();
    assert!(
        e.message().starts_with("KB_CRAWL_WEBHOOK_SECRET_ARN"),
        "{e}"
    );
}

//! The init handler takes only the API body from its event (issue 18, item 2): the documented
//! body `{url, maxDepth, maxPages}` starts a crawl with the worker's defaults, and an event
//! that tries to set the crawl policy (`allowPrivateNetwork`...) is refused before anything is
//! fetched. Real handlers against S3 and DynamoDB on moto and a site on 127.0.0.1. Needs
//! `KB_CRAWL_AWS_ENDPOINT`; skipped without it unless `KB_CRAWL_REQUIRE_SERVICES=1`.

use crate::common;

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

/// A source's schedule fires: Init begins a run of the source from its stored settings, under
/// a job id derived from the firing, so a second delivery of the same firing goes on with the
/// same run; another firing while that run goes starts nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_sync_starts_one_run_of_the_source_even_when_delivered_twice() {
    use crawl_core::{SourceRecord, SourceStore};
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let sources = Arc::new(common::sources(&endpoint).await);
    let svc = services(
        &endpoint,
        CrawlPolicy::default().with_allow_private_network(true),
    )
    .await
    .with_sources(Arc::clone(&sources) as _);
    let (url, _hits) = serve().await;
    let assistant = common::unique("ast");
    let root = crawl_core::url::normalize(&url.parse().unwrap()).unwrap();
    let mut source = SourceRecord::new(assistant.clone(), root, time::OffsetDateTime::now_utc());
    source.settings = json!({"url": url, "maxDepth": 0, "maxPages": 7});
    sources.put_source(&source).await.unwrap();
    let firing = |at: &str| {
        json!({"scheduledSync": {"sourceId": source.id, "assistantId": assistant,
                                 "scheduledTime": at}})
    };
    let first = dispatch(&svc, "init", firing("2026-12-02T03:00:00Z"))
        .await
        .unwrap();
    let again = dispatch(&svc, "init", firing("2026-12-02T03:00:00Z"))
        .await
        .unwrap();
    assert_eq!(
        first["job_id"], again["job_id"],
        "the same firing, the same run"
    );
    let job: JobId = first["job_id"].as_str().unwrap().parse().unwrap();
    let record = svc.jobs.get(&job).await.unwrap().unwrap();
    assert_eq!(record.request.max_pages, 7, "the source's stored settings");
    assert_eq!(
        record.request.assistant_id.as_deref(),
        Some(assistant.as_str())
    );
    assert_eq!(
        record.request.sync.as_ref().map(|s| s.source.clone()),
        Some(source.id.clone())
    );
    let stored = sources.get_source(&source.id).await.unwrap().unwrap();
    assert_eq!(stored.last_run, Some(job.clone()));

    // The next firing while that run goes: refused, and no job is made for it.
    let err = dispatch(&svc, "init", firing("2026-12-03T03:00:00Z"))
        .await
        .unwrap_err();
    assert!(err.error_message.contains("still going"), "{err:?}");
    let stored = sources.get_source(&source.id).await.unwrap().unwrap();
    assert_eq!(
        stored.last_run,
        Some(job),
        "the running run stays the latest"
    );
    // Another assistant's firing for the source is refused.
    let foreign = json!({"scheduledSync": {"sourceId": source.id, "assistantId": "other",
                                           "scheduledTime": "2026-12-04T03:00:00Z"}});
    let err = dispatch(&svc, "init", foreign).await.unwrap_err();
    assert_eq!(err.error_type, ERR_INVALID, "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_init_event_asking_for_linked_documents_is_refused_by_name() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let svc = services(
        &endpoint,
        CrawlPolicy::default().with_allow_private_network(true),
    )
    .await;
    let (url, hits) = serve().await;
    let job = JobId::new();
    let event = json!({ "job_id": job, "request": {"url": url, "linkedDocuments": true} });
    let err = dispatch(&svc, "init", event).await.unwrap_err();
    assert_eq!(err.error_type, ERR_INVALID, "{err:?}");
    assert!(err.error_message.starts_with("linkedDocuments:"), "{err:?}");
    assert_eq!(hits.load(Ordering::SeqCst), 0, "refused before any fetch");
    assert!(svc.jobs.get(&job).await.unwrap().is_none(), "no job made");
    // A job record written first (the runner's path) is refused too.
    let req = CrawlRequest::builder(&url)
        .allow_private_network(true)
        .linked_documents(true)
        .build()
        .unwrap();
    let record = crawl_core::JobRecord::new(job.clone(), req, time::OffsetDateTime::now_utc());
    svc.jobs.create(&record).await.unwrap();
    let err = dispatch(
        &svc,
        "init",
        json!({ "job_id": job, "request": {"url": url} }),
    )
    .await
    .unwrap_err();
    assert!(err.error_message.starts_with("linkedDocuments:"), "{err:?}");
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

//! The job API over its router: every endpoint, the exact JSON field names, validation,
//! tenancy, delete while running and the per-assistant limit. No network: the crawler's
//! fetcher serves a canned site.

use crate::support;

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use crawl_api::{router, ApiError, Authorizer};
use crawl_core::{DynIngestor, DynSink, Ingestor, JobRecord};
use serde_json::{json, Value};
use support::{eventually, memory_state, state_with, ROOT};
use tower::ServiceExt;

async fn call(app: &Router, method: &str, uri: &str, body: Option<&str>) -> (StatusCode, Value) {
    call_with(app, method, uri, body, &[]).await
}

async fn call_with(
    app: &Router,
    method: &str,
    uri: &str,
    body: Option<&str>,
    headers: &[(&str, &str)],
) -> (StatusCode, Value) {
    let mut req = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let req = match body {
        Some(b) => req
            .header("content-type", "application/json")
            .body(Body::from(b.to_owned())),
        None => req.body(Body::empty()),
    }
    .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    let v = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap()
    };
    (status, v)
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

async fn start(app: &Router, assistant: &str, body: Value) -> String {
    let (status, v) = call(
        app,
        "POST",
        &format!("/assistants/{assistant}/crawl"),
        Some(&body.to_string()),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{v}");
    v["crawlJobId"].as_str().unwrap().to_owned()
}

async fn wait_final(app: &Router, assistant: &str, id: &str) -> Value {
    eventually("job end", || async {
        let (s, v) = call(
            app,
            "GET",
            &format!("/assistants/{assistant}/crawl/{id}"),
            None,
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{v}");
        (v["status"] != "RUNNING").then_some(v)
    })
    .await
}

const JOB_FIELDS: &[&str] = &[
    "crawlJobId",
    "status",
    "pagesProcessed",
    "pagesTotal",
    "startedAt",
    "completedAt",
    "sourceId",
    "pagesAdded",
    "pagesChanged",
    "pagesUnchanged",
    "pagesRemoved",
    "ingestion",
    "ingestionReason",
    "ingestionAttempts",
];

#[tokio::test]
async fn start_get_list_and_delete_with_the_exact_field_names() {
    let (state, sink, site) = memory_state(Duration::ZERO);
    let app = router(state);
    let (status, started) = call(
        &app,
        "POST",
        "/assistants/asst-1/crawl",
        Some(&json!({"url": ROOT, "maxDepth": 3, "maxPages": 100}).to_string()),
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(
        keys(&started),
        set(&["crawlJobId", "status", "startedAt", "sourceId"])
    );
    assert_eq!(started["status"], "RUNNING");
    let id = started["crawlJobId"].as_str().unwrap().to_owned();
    assert!(id.starts_with("job-"));
    time::OffsetDateTime::parse(
        started["startedAt"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();

    let done = wait_final(&app, "asst-1", &id).await;
    assert_eq!(keys(&done), set(JOB_FIELDS));
    assert_eq!(done["status"], "COMPLETED", "{done}");
    assert!(done["pagesTotal"].as_u64().unwrap() >= 1, "{done}");
    assert_eq!(done["pagesProcessed"], done["pagesTotal"]);
    assert_eq!(
        (&done["ingestion"], &done["ingestionAttempts"]),
        (&json!("delivered"), &json!(1)),
        "{done}"
    );
    assert_eq!(done["startedAt"], started["startedAt"]);
    time::OffsetDateTime::parse(
        done["completedAt"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();

    let second = start(&app, "asst-1", json!({"url": ROOT, "maxDepth": 0})).await;
    let second_done = wait_final(&app, "asst-1", &second).await;
    assert_eq!(second_done["pagesTotal"], 1, "maxDepth 0 is the root only");
    // Every page fetched once, plus one soft-404 probe per job (two jobs), plus the first
    // job's sitemap lookup (robots.txt and /sitemap.xml; at maxDepth 0 none is read).
    assert_eq!(
        site.fetches.load(Ordering::SeqCst) as u64,
        done["pagesTotal"].as_u64().unwrap() + 1 + 2 + 2
    );
    let (status, list) = call(&app, "GET", "/assistants/asst-1/crawls", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(keys(&list), set(&["crawls", "nextToken"]));
    assert_eq!(list["nextToken"], Value::Null);
    let crawls = list["crawls"].as_array().unwrap();
    assert_eq!(crawls.len(), 2);
    assert_eq!(crawls[0]["crawlJobId"], second.as_str(), "newest first");
    assert_eq!(crawls[1], done);
    for c in crawls {
        assert_eq!(keys(c), set(JOB_FIELDS));
    }
    let (_, other) = call(&app, "GET", "/assistants/asst-2/crawls", None).await;
    assert_eq!(other, json!({"crawls": [], "nextToken": null}));

    let (status, body) = call(
        &app,
        "DELETE",
        &format!("/assistants/asst-1/crawl/{id}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    assert!(
        sink.was_deleted(&id) && sink.keys_of(&id).is_empty(),
        "documents removed"
    );
    assert!(!sink.was_deleted(&second), "the other job is kept");
    let (status, _) = call(&app, "GET", &format!("/assistants/asst-1/crawl/{id}"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = call(
        &app,
        "DELETE",
        &format!("/assistants/asst-1/crawl/{id}"),
        None,
    )
    .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "a second DELETE finds nothing"
    );
}

#[tokio::test]
async fn validation_errors_name_the_field_and_the_limit() {
    let (state, _, _) = memory_state(Duration::ZERO);
    let app = router(state);
    let cases = [
        (
            json!({"url": ROOT, "maxDepth": 6}),
            "maxDepth",
            "limit of 5",
        ),
        (
            json!({"url": ROOT, "maxPages": 501}),
            "maxPages",
            "limit of 500",
        ),
        (
            json!({"url": ROOT, "maxPages": 0}),
            "maxPages",
            "at least 1",
        ),
        (json!({"url": "ftp://site.test/"}), "url", "http"),
        (json!({"url": "javascript:alert(1)"}), "url", "url"),
        (json!({"maxDepth": 2}), "url", "required"),
        (json!({"url": 42}), "url", "string"),
        (
            json!({"url": ROOT, "maxDepth": -1}),
            "maxDepth",
            "whole number",
        ),
        (
            json!({"url": ROOT, "maxDepth": "3"}),
            "maxDepth",
            "whole number",
        ),
        (
            json!({"url": ROOT, "maxPages": 1e12}),
            "maxPages",
            "whole number",
        ),
        (
            json!({"url": ROOT, "maxPages": 99_999_999_999u64}),
            "maxPages",
            "limit of 500",
        ),
    ];
    for (body, field, needle) in cases {
        let (status, v) = call(&app, "POST", "/assistants/a/crawl", Some(&body.to_string())).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {v}");
        assert_eq!(keys(&v), set(&["error"]), "{v}");
        assert_eq!(keys(&v["error"]), set(&["field", "message"]), "{v}");
        assert_eq!(v["error"]["field"], field, "{body}: {v}");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(
            msg.starts_with(field) && msg.contains(needle),
            "{body}: {msg}"
        );
    }
    for bad in ["{\"url\": ", "not json", "[1,2]", ""] {
        let (status, v) = call(&app, "POST", "/assistants/a/crawl", Some(bad)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {v}");
        assert_eq!(v["error"]["field"], Value::Null, "{v}");
        assert!(
            v["error"]["message"].as_str().unwrap().starts_with("body"),
            "{v}"
        );
    }
    let (status, v) = call(&app, "POST", "/assistants/a%20b/crawl", Some("{}")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(v["error"]["field"], "assistantId");
    let (_, list) = call(&app, "GET", "/assistants/a/crawls", None).await;
    assert_eq!(
        list,
        json!({"crawls": [], "nextToken": null}),
        "no refused request started a job"
    );
}

#[tokio::test]
async fn another_assistants_job_is_not_found_and_untouched() {
    let (state, sink, _) = memory_state(Duration::ZERO);
    let app = router(state);
    let id = start(&app, "owner", json!({"url": ROOT})).await;
    wait_final(&app, "owner", &id).await;
    for method in ["GET", "DELETE"] {
        let (status, v) = call(
            &app,
            method,
            &format!("/assistants/intruder/crawl/{id}"),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method}");
        assert_eq!(keys(&v), set(&["error"]));
        assert!(v.get("status").is_none() && v.get("pagesTotal").is_none());
    }
    let (_, list) = call(&app, "GET", "/assistants/intruder/crawls", None).await;
    assert_eq!(list, json!({"crawls": [], "nextToken": null}));
    let (status, _) = call(&app, "GET", &format!("/assistants/owner/crawl/{id}"), None).await;
    assert_eq!(status, StatusCode::OK, "the owner still sees it");
    assert!(
        !sink.was_deleted(&id),
        "the intruder's DELETE deleted nothing"
    );
    for unknown in ["job-0123456789abcdef", "not-a-job", "..%2F..%2Fetc"] {
        let (status, _) = call(
            &app,
            "GET",
            &format!("/assistants/owner/crawl/{unknown}"),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{unknown}");
    }
}

#[derive(Debug, Default)]
struct Recorder {
    completed: Mutex<Vec<String>>,
    deleted: Mutex<Vec<String>>,
}

impl std::fmt::Display for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Recorder")
    }
}

#[async_trait]
impl Ingestor for Recorder {
    async fn on_completed(
        &self,
        job: &JobRecord,
        _diff: &crawl_core::RunDiff<'_>,
    ) -> crawl_core::Result<()> {
        self.completed.lock().unwrap().push(job.id.to_string());
        Ok(())
    }
    async fn on_deleted(&self, job: &JobRecord) -> crawl_core::Result<()> {
        self.deleted.lock().unwrap().push(job.id.to_string());
        Ok(())
    }
}

#[tokio::test]
async fn delete_while_running_cancels_first_and_leaves_nothing() {
    let sink = Arc::new(support::WatchedSink::default());
    let recorder = Arc::new(Recorder::default());
    // The site answers after an hour: the job is surely running, mid-fetch, at the DELETE.
    let site = Arc::new(support::CannedSite::new(Duration::from_secs(3600)));
    let state = state_with(
        Arc::clone(&sink) as DynSink,
        Arc::clone(&recorder) as DynIngestor,
        Arc::clone(&site),
    );
    let app = router(state);
    let id = start(&app, "a", json!({"url": ROOT, "maxDepth": 3})).await;
    eventually("first fetch", || async {
        (site.fetches.load(Ordering::SeqCst) > 0).then_some(())
    })
    .await;
    let (_, v) = call(&app, "GET", &format!("/assistants/a/crawl/{id}"), None).await;
    assert_eq!(v["status"], "RUNNING", "{v}");

    let (status, body) = call(&app, "DELETE", &format!("/assistants/a/crawl/{id}"), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    assert!(sink.was_deleted(&id));
    assert_eq!(sink.keys_of(&id), Vec::<String>::new());
    let (status, _) = call(&app, "GET", &format!("/assistants/a/crawl/{id}"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, list) = call(&app, "GET", "/assistants/a/crawls", None).await;
    assert_eq!(list, json!({"crawls": [], "nextToken": null}));
    // The job had ended before the sink was cleared: nothing of it may be written afterwards.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        *sink.late_writes.lock().unwrap(),
        Vec::<String>::new(),
        "a late write"
    );
    assert_eq!(sink.keys_of(&id), Vec::<String>::new());
    assert_eq!(*recorder.deleted.lock().unwrap(), vec![id.clone()]);
    assert!(
        recorder.completed.lock().unwrap().is_empty(),
        "a cancelled job is not ingested"
    );
}

#[tokio::test]
async fn delete_of_a_completed_job_reaches_the_ingestor_once() {
    let sink = Arc::new(support::WatchedSink::default());
    let recorder = Arc::new(Recorder::default());
    let site = Arc::new(support::CannedSite::new(Duration::ZERO));
    let app = router(state_with(
        Arc::clone(&sink) as DynSink,
        Arc::clone(&recorder) as DynIngestor,
        site,
    ));
    let id = start(&app, "a", json!({"url": ROOT})).await;
    wait_final(&app, "a", &id).await;
    assert_eq!(*recorder.completed.lock().unwrap(), vec![id.clone()]);
    let (status, _) = call(&app, "DELETE", &format!("/assistants/a/crawl/{id}"), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(*recorder.deleted.lock().unwrap(), vec![id.clone()]);
    assert!(sink.was_deleted(&id));
}

#[tokio::test]
async fn a_fourth_running_job_of_one_assistant_is_refused_with_429() {
    let (state, _, _) = memory_state(Duration::from_secs(3600));
    let app = router(state);
    let mut ids = Vec::new();
    // Three sites (a crawl of one URL is a run of its source, one at a time).
    let site = |p: &str| format!("{ROOT}{p}");
    for p in ["a", "b", "c"] {
        ids.push(start(&app, "busy", json!({"url": site(p)})).await);
    }
    let (status, v) = call(
        &app,
        "POST",
        "/assistants/busy/crawl",
        Some(&json!({"url": site("d")}).to_string()),
    )
    .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains("3 running") && msg.contains("limit"), "{msg}");
    // Another assistant is not affected.
    let other = start(&app, "calm", json!({"url": ROOT})).await;
    // Deleting one running job frees a slot.
    let (status, _) = call(
        &app,
        "DELETE",
        &format!("/assistants/busy/crawl/{}", ids[0]),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    ids[0] = start(&app, "busy", json!({"url": site("a")})).await;
    for id in &ids {
        let (status, _) = call(
            &app,
            "DELETE",
            &format!("/assistants/busy/crawl/{id}"),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::NO_CONTENT);
    }
    let (status, _) = call(
        &app,
        "DELETE",
        &format!("/assistants/calm/crawl/{other}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
}

/// Lets `Bearer <assistant>-token` act for `<assistant>` only.
#[derive(Debug)]
struct TokenPerAssistant;

#[async_trait]
impl Authorizer for TokenPerAssistant {
    async fn authorize(&self, headers: &HeaderMap, assistant_id: &str) -> Result<(), ApiError> {
        let token = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .ok_or_else(|| ApiError::unauthorized("a bearer token is required"))?;
        if token == format!("{assistant_id}-token") {
            Ok(())
        } else {
            Err(ApiError::forbidden("this token may not use this assistant"))
        }
    }
}

#[tokio::test]
async fn the_authorizer_runs_before_anything_else() {
    let (state, _, _) = memory_state(Duration::ZERO);
    let app = router(state.authorizer(Arc::new(TokenPerAssistant)));
    let body = json!({"url": ROOT}).to_string();
    let (status, v) = call(&app, "POST", "/assistants/a/crawl", Some(&body)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{v}");
    let (status, _) = call_with(
        &app,
        "GET",
        "/assistants/a/crawls",
        None,
        &[("authorization", "Bearer b-token")],
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = call_with(
        &app,
        "POST",
        "/assistants/a/crawl",
        Some(&body),
        &[("authorization", "Bearer a-token")],
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
}

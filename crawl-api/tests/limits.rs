//! The job API's limits (issue 18, item 6): a runner-wide cap on running jobs, pages of the
//! crawl list, and retention of finished job records. No network: a canned site.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use crawl_api::{router, Retention};
use crawl_core::clock::{DynClock, ManualClock};
use serde_json::{json, Value};
use support::{eventually, memory_state, ROOT};
use tower::ServiceExt;

async fn call(app: &Router, method: &str, uri: &str) -> (StatusCode, Value) {
    let mut req = Request::builder().method(method).uri(uri);
    let body = if method == "POST" {
        req = req.header("content-type", "application/json");
        Body::from(json!({"url": ROOT, "maxDepth": 0}).to_string())
    } else {
        Body::empty()
    };
    let resp = app.clone().oneshot(req.body(body).unwrap()).await.unwrap();
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// Starts a job for `assistant` and waits for its end; returns its id.
async fn finished_job(app: &Router, assistant: &str) -> String {
    let (s, v) = call(app, "POST", &format!("/assistants/{assistant}/crawl")).await;
    assert_eq!(s, StatusCode::ACCEPTED, "{v}");
    let id = v["crawlJobId"].as_str().unwrap().to_owned();
    let one = format!("/assistants/{assistant}/crawl/{id}");
    eventually("job end", || async {
        let (_, v) = call(app, "GET", &one).await;
        (v["status"] != "RUNNING").then_some(())
    })
    .await;
    id
}

fn ids(v: &Value) -> Vec<String> {
    v["crawls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["crawlJobId"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn new_assistant_ids_cannot_get_around_the_runner_wide_cap() {
    // Pages answer slowly, so the jobs keep running.
    let (state, _, _) = memory_state(Duration::from_secs(30));
    let app = router(state.max_running_total(2));
    assert_eq!(
        call(&app, "POST", "/assistants/one/crawl").await.0,
        StatusCode::ACCEPTED
    );
    assert_eq!(
        call(&app, "POST", "/assistants/two/crawl").await.0,
        StatusCode::ACCEPTED
    );
    let (s, v) = call(&app, "POST", "/assistants/three/crawl").await;
    assert_eq!(s, StatusCode::TOO_MANY_REQUESTS, "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("across all assistants") && msg.contains("limit is 2"),
        "{msg}"
    );
    assert_eq!(
        ids(&call(&app, "GET", "/assistants/three/crawls").await.1).len(),
        0
    );
}

#[tokio::test]
async fn the_crawl_list_comes_in_pages_with_an_opaque_token() {
    let (state, _, _) = memory_state(Duration::ZERO);
    let app = router(state);
    let mut started = Vec::new();
    for _ in 0..5 {
        started.push(finished_job(&app, "pages").await);
    }
    let mut seen = Vec::new();
    let mut uri = "/assistants/pages/crawls?limit=2".to_owned();
    let mut pages = 0;
    loop {
        let (s, v) = call(&app, "GET", &uri).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        pages += 1;
        let page = ids(&v);
        assert!(page.len() <= 2, "{v}");
        seen.extend(page);
        match v["nextToken"].as_str() {
            Some(t) => uri = format!("/assistants/pages/crawls?limit=2&nextToken={t}"),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    started.reverse(); // newest first
    assert_eq!(seen, started);
    // Without a limit: one page of up to 100, no token.
    let (_, v) = call(&app, "GET", "/assistants/pages/crawls").await;
    assert_eq!(ids(&v).len(), 5);
    assert_eq!(v["nextToken"], Value::Null);
    for (bad, field) in [
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("limit=x", "limit"),
        ("nextToken=zz", "nextToken"),
        ("nextToken=6a6f62", "nextToken"),
    ] {
        let (s, v) = call(&app, "GET", &format!("/assistants/pages/crawls?{bad}")).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{bad}: {v}");
        assert_eq!(v["error"]["field"], field, "{v}");
    }
}

#[tokio::test]
async fn finished_jobs_beyond_the_retention_count_are_dropped() {
    let (state, _, _) = memory_state(Duration::ZERO);
    let retention = Retention::keep_all().with_max_per_assistant(Some(2));
    let app = router(state.retention(retention));
    let mut started = Vec::new();
    for _ in 0..4 {
        started.push(finished_job(&app, "kept").await);
    }
    let (_, v) = call(&app, "GET", "/assistants/kept/crawls").await;
    assert_eq!(ids(&v), vec![started[3].clone(), started[2].clone()]);
    // Dropped from the store, not just hidden.
    let (s, _) = call(
        &app,
        "GET",
        &format!("/assistants/kept/crawl/{}", started[0]),
    )
    .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn finished_jobs_older_than_the_retention_age_are_swept_on_a_later_start() {
    let (state, _, _) = memory_state(Duration::ZERO);
    let clock = Arc::new(ManualClock::new(time::OffsetDateTime::now_utc()));
    let mut retention = Retention::keep_all().with_max_age(Some(Duration::from_secs(86_400)));
    retention.sweep_every = Duration::ZERO;
    let app = router(
        state
            .retention(retention)
            .clock(Arc::clone(&clock) as DynClock),
    );
    let old = finished_job(&app, "old").await;
    let one = format!("/assistants/old/crawl/{old}");
    assert_eq!(call(&app, "GET", &one).await.0, StatusCode::OK);
    // Two days later another assistant starts a crawl: the sweep drops the old record.
    clock.advance(Duration::from_secs(2 * 86_400));
    finished_job(&app, "new").await;
    eventually("sweep", || async {
        (call(&app, "GET", &one).await.0 == StatusCode::NOT_FOUND).then_some(())
    })
    .await;
}

//! Hostile callers of the job API (issue 18): a body cannot switch the crawl policy, and the
//! documented minimal body starts a crawl. No network: the crawler's fetcher serves a canned
//! site.

mod support;

use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use crawl_api::router;
use serde_json::{json, Value};
use support::{memory_state, ROOT};
use tower::ServiceExt;

async fn send(app: &Router, req: Request<Body>) -> (StatusCode, Value) {
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    let v = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    (status, v)
}

fn post_json(uri: &str, body: &Value) -> Request<Body> {
    Request::post(uri)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

#[tokio::test]
async fn a_body_cannot_switch_the_crawl_policy() {
    let (state, _, site) = memory_state(Duration::ZERO);
    let app = router(state);
    for (field, value) in [
        ("allowPrivateNetwork", json!(true)),
        ("respectRobots", json!(false)),
        ("maxCrawlDelay", json!(86_400)),
        ("concurrency", json!(50)),
        ("rate", json!(null)),
        ("userAgent", json!("Googlebot")),
    ] {
        let body = json!({"url": ROOT, "maxDepth": 1, field: value});
        let (status, v) = send(&app, post_json("/assistants/a/crawl", &body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {v}");
        assert_eq!(v["error"]["field"], field, "{v}");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.starts_with(field) && msg.contains("unknown field"), "{msg}");
    }
    let (_, list) = send(
        &app,
        Request::get("/assistants/a/crawls")
            .body(Body::empty())
            .unwrap(),
    )
    .await;
    assert_eq!(list["crawls"], json!([]), "no refused body started a job");
    assert_eq!(site.fetches.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_documented_minimal_body_starts_a_crawl() {
    let (state, _, _) = memory_state(Duration::ZERO);
    let app = router(state);
    for body in [
        json!({"url": ROOT, "maxDepth": 3, "maxPages": 100}),
        json!({"url": ROOT}),
        json!({"url": ROOT, "maxDepth": 1, "render": "never"}),
    ] {
        let (status, v) = send(&app, post_json("/assistants/min/crawl", &body)).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}: {v}");
    }
}

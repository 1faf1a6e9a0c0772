//! Serverless schedules: the source routes create, change and delete one EventBridge
//! Scheduler schedule per source (moto's Scheduler with the real SDK), targeting the state
//! machine with the scheduled-sync input. Needs `KB_CRAWL_AWS_ENDPOINT`; skipped without it
//! unless `KB_CRAWL_REQUIRE_SERVICES=1`.

use crate::common;

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use crawl_api::{router, ApiState, InProcessRunner};
use crawl_aws::scheduler::EventBridgeSchedules;
use crawl_core::{Crawler, NoopIngestor};
use serde_json::{json, Value};
use tower::ServiceExt;

const MACHINE: &str = "arn:aws:states:us-east-1:123456789012:stateMachine:kb-crawl";
const ROLE: &str = "arn:aws:iam::123456789012:role/kb-crawl-scheduler";

async fn call(app: &axum::Router, method: &str, uri: &str, body: Value) -> (StatusCode, Value) {
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
        .await
        .unwrap();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// (expression, time zone, target ARN, role ARN, input) of the source's schedule, if any.
async fn schedule_of(
    s: &EventBridgeSchedules,
    source: &str,
) -> Option<(String, String, String, String, Value)> {
    let got = s
        .client()
        .get_schedule()
        .name(source)
        .group_name(s.group())
        .send()
        .await;
    match got {
        Ok(o) => {
            let t = o.target().unwrap();
            Some((
                o.schedule_expression().unwrap_or_default().to_owned(),
                o.schedule_expression_timezone()
                    .unwrap_or_default()
                    .to_owned(),
                t.arn().to_owned(),
                t.role_arn().to_owned(),
                serde_json::from_str(t.input().unwrap_or("null")).unwrap(),
            ))
        }
        Err(e) => {
            assert!(
                e.as_service_error()
                    .is_some_and(|s| s.is_resource_not_found_exception()),
                "{}",
                aws_sdk_scheduler::error::DisplayErrorContext(&e)
            );
            None
        }
    }
}

#[tokio::test]
async fn a_sources_schedule_is_created_changed_and_deleted_with_it() {
    let Some(endpoint) = common::endpoint() else {
        return;
    };
    let schedules = EventBridgeSchedules::new("default", MACHINE, ROLE, Some(endpoint))
        .await
        .unwrap();
    let crawler = Crawler::builder().build().unwrap();
    let state = ApiState::in_process(InProcessRunner::new(crawler), Arc::new(NoopIngestor))
        .allow_private_network(true)
        .schedules(Arc::new(schedules.clone()));
    let app = router(state);
    // A site nobody serves: the first run fails at once; the schedule is what is checked.
    let assistant = common::unique("ast");
    let url = "http://127.0.0.1:9/";
    let (s, created) = call(
        &app,
        "POST",
        &format!("/assistants/{assistant}/sources"),
        json!({"url": url, "schedule": {"every": "weekly", "timeZone": "America/Boise"}}),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{created}");
    let id = created["sourceId"].as_str().unwrap().to_owned();
    let (expr, tz, target, role, input) = schedule_of(&schedules, &id).await.expect("created");
    assert_eq!(expr, "cron(0 3 ? * 1 *)");
    assert_eq!(tz, "America/Boise");
    assert_eq!((target.as_str(), role.as_str()), (MACHINE, ROLE));
    assert_eq!(
        input,
        json!({"scheduledSync": {"sourceId": id, "assistantId": assistant,
                                 "scheduledTime": "<aws.scheduler.scheduled-time>"}})
    );

    let uri = format!("/assistants/{assistant}/sources/{id}");
    let (s, v) = call(
        &app,
        "PATCH",
        &uri,
        json!({"schedule": {"cron": "30 6 * * 1-5", "timeZone": "Europe/Paris"}}),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let (expr, tz, ..) = schedule_of(&schedules, &id).await.expect("replaced");
    assert_eq!(
        (expr.as_str(), tz.as_str()),
        ("cron(30 6 ? * 2-6 *)", "Europe/Paris")
    );

    // A cron EventBridge cannot express is refused, and the schedule stays as it was.
    let (s, v) = call(
        &app,
        "PATCH",
        &uri,
        json!({"schedule": {"cron": "0 3 1 * 1"}}),
    )
    .await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(v["error"]["field"], "schedule.cron");
    let (expr, ..) = schedule_of(&schedules, &id).await.expect("kept");
    assert_eq!(expr, "cron(30 6 ? * 2-6 *)");

    let (s, _) = call(&app, "PATCH", &uri, json!({"schedule": "none"})).await;
    assert_eq!(s, StatusCode::OK);
    assert!(
        schedule_of(&schedules, &id).await.is_none(),
        "none removes it"
    );
    let (s, _) = call(&app, "PATCH", &uri, json!({"schedule": "daily"})).await;
    assert_eq!(s, StatusCode::OK);
    let (expr, tz, ..) = schedule_of(&schedules, &id).await.expect("created again");
    assert_eq!((expr.as_str(), tz.as_str()), ("cron(0 3 * * ? *)", "UTC"));

    let (s, _) = call(&app, "DELETE", &uri, Value::Null).await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    assert!(
        schedule_of(&schedules, &id).await.is_none(),
        "deleted with the source"
    );
}

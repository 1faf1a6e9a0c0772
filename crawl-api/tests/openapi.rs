//! `openapi.json` stays in sync with the code: every route of the router is declared (and
//! nothing else), and every field the code serializes is declared in its schema, required
//! and typed.

use crate::support;

use std::collections::BTreeSet;
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use crawl_api::{
    router, ChangeList, CrawlJob, CrawlList, CrawlStarted, ErrorBody, ErrorDetail, PageChangeView,
    SourceList, SourceView, ROUTES,
};
use crawl_core::{JobStatus, RenderMode, Schedule, SitemapMode};
use serde_json::Value;
use tower::ServiceExt;

fn spec() -> Value {
    let text = include_str!("../openapi.json");
    serde_json::from_str(text).unwrap()
}

fn schema<'a>(spec: &'a Value, name: &str) -> &'a Value {
    let s = &spec["components"]["schemas"][name];
    assert!(s.is_object(), "schema {name} missing");
    s
}

fn names(v: &Value) -> BTreeSet<String> {
    match v {
        Value::Object(m) => m.keys().cloned().collect(),
        Value::Array(a) => a.iter().map(|x| x.as_str().unwrap().to_owned()).collect(),
        _ => BTreeSet::new(),
    }
}

/// The sample's fields are exactly the schema's properties, all required, and each value has
/// a type the schema allows.
fn check(spec: &Value, name: &str, sample: &Value) {
    let s = schema(spec, name);
    assert_eq!(names(sample), names(&s["properties"]), "{name}: properties");
    assert_eq!(names(sample), names(&s["required"]), "{name}: required");
    for (field, value) in sample.as_object().unwrap() {
        let mut prop = &s["properties"][field];
        if let Some(r) = prop["$ref"].as_str() {
            prop = schema(spec, r.trim_start_matches("#/components/schemas/"));
        }
        let types: BTreeSet<String> = match &prop["type"] {
            Value::String(t) => [t.clone()].into(),
            other => names(other),
        };
        let actual = match value {
            Value::Null => "null",
            Value::String(_) => "string",
            Value::Number(_) => "integer",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
            Value::Bool(_) => "boolean",
        };
        assert!(
            types.contains(actual),
            "{name}.{field}: {actual} not in {types:?}"
        );
        if let Some(allowed) = prop["enum"].as_array() {
            assert!(
                allowed.contains(value),
                "{name}.{field}: {value} not in the enum"
            );
        }
    }
}

#[test]
fn every_serialized_field_is_declared() {
    let spec = spec();
    assert_eq!(spec["openapi"], "3.1.0");
    let t = time::OffsetDateTime::UNIX_EPOCH;
    for status in [JobStatus::Running, JobStatus::Completed, JobStatus::Failed] {
        let job = CrawlJob {
            crawl_job_id: "job-0123456789abcdef".into(),
            status,
            pages_processed: 1,
            pages_total: 2,
            started_at: t,
            completed_at: status.is_final().then_some(t),
            source_id: status.is_final().then(|| "src-0123456789abcdef".to_owned()),
            pages_added: 1,
            pages_changed: 2,
            pages_unchanged: 3,
            pages_removed: 4,
            ingestion: crawl_core::IngestionState::Failed,
            ingestion_reason: status.is_final().then(|| "http_status: 400".to_owned()),
            ingestion_attempts: 1,
        };
        let job_json = serde_json::to_value(&job).unwrap();
        check(&spec, "CrawlJob", &job_json);
        let started = CrawlStarted {
            crawl_job_id: job.crawl_job_id.clone(),
            status,
            started_at: t,
            source_id: job.source_id.clone(),
        };
        check(
            &spec,
            "CrawlStarted",
            &serde_json::to_value(&started).unwrap(),
        );
        for next_token in [Some("6a6f62".to_owned()), None] {
            let list = CrawlList {
                crawls: vec![job.clone()],
                next_token,
            };
            check(&spec, "CrawlList", &serde_json::to_value(&list).unwrap());
        }
        for (schedule, next) in [
            (Schedule::None, None),
            (
                Schedule::Cron {
                    expr: "0 6 * * 1-5".into(),
                    time_zone: "America/Boise".into(),
                },
                Some(t),
            ),
        ] {
            let source = SourceView {
                source_id: "src-0123456789abcdef".into(),
                url: "https://a.test/".into(),
                max_depth: 2,
                max_pages: 100,
                include: vec!["/**".into()],
                exclude: Vec::new(),
                render: RenderMode::Auto,
                sitemap: SitemapMode::Auto,
                schedule,
                created_at: t,
                next_sync_at: next,
                last_sync: next.map(|_| job.clone()),
            };
            let v = serde_json::to_value(&source).unwrap();
            check(&spec, "Source", &v);
            check(
                &spec,
                "SourceList",
                &serde_json::to_value(SourceList {
                    sources: vec![source],
                })
                .unwrap(),
            );
        }
        for reason in [Some("http_404".to_owned()), None] {
            let c = PageChangeView {
                url: "https://a.test/x".into(),
                change: "removed".into(),
                reason,
            };
            check(&spec, "PageChange", &serde_json::to_value(&c).unwrap());
            check(
                &spec,
                "ChangeList",
                &serde_json::to_value(ChangeList {
                    changes: vec![c],
                    next_token: None,
                })
                .unwrap(),
            );
        }
    }
    for field in [Some("maxDepth".to_owned()), None] {
        let e = serde_json::to_value(ErrorBody {
            error: ErrorDetail {
                field,
                message: "m".into(),
            },
        })
        .unwrap();
        check(&spec, "Error", &e);
        let inner = &schema(&spec, "Error")["properties"]["error"];
        assert_eq!(names(&e["error"]), names(&inner["properties"]));
        assert_eq!(names(&e["error"]), names(&inner["required"]));
    }
    // The request body the start handler reads: every field of `StartCrawl`, nothing else.
    let req = crawl_core::CrawlRequest::builder("https://a.test/")
        .include(["/**"])
        .exclude(["**/print/**"])
        .build()
        .unwrap();
    let body = serde_json::to_value(crawl_core::StartCrawl::from(&req)).unwrap();
    let start = schema(&spec, "StartCrawl");
    assert_eq!(names(&start["properties"]), names(&body));
    assert_eq!(start["additionalProperties"], Value::Bool(false));
}

#[tokio::test]
async fn every_route_is_in_the_spec_and_served() {
    let spec = spec();
    let mut declared = BTreeSet::new();
    for (path, item) in spec["paths"].as_object().unwrap() {
        for method in ["get", "post", "put", "patch", "delete"] {
            if item.get(method).is_some() {
                declared.insert((method.to_owned(), path.clone()));
            }
        }
    }
    let routes: BTreeSet<(String, String)> = ROUTES
        .iter()
        .map(|(m, p)| ((*m).to_owned(), (*p).to_owned()))
        .collect();
    assert_eq!(routes, declared, "ROUTES and openapi.json paths differ");

    // Each route is really mounted: the router answers with the API's JSON, never its own
    // empty 404/405.
    let (state, _, _) = support::memory_state(Duration::ZERO);
    let app = router(state);
    for (method, path) in ROUTES {
        let uri = path
            .replace("{assistant_id}", "a")
            .replace("{crawl_job_id}", "job-0123456789abcdef")
            .replace("{source_id}", "src-0123456789abcdef");
        let body = if *method == "post" { "{}" } else { "" };
        let req = Request::builder()
            .method(method.to_uppercase().as_str())
            .uri(&uri)
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap();
        let resp = app.clone().oneshot(req).await.unwrap();
        let status = resp.status();
        assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {uri}");
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 20)
            .await
            .unwrap();
        let v: Value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| panic!("{method} {uri}: {status} without a JSON body"));
        let declared = &spec["paths"][*path][*method]["responses"][status.as_str()];
        assert!(
            declared.is_object(),
            "{method} {path}: status {status} not declared ({v})"
        );
    }
}

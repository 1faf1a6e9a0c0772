//! The source routes over the router: create, list, read, edit, sync, delete; their JSON
//! fields and validation errors; tenancy; roles; one run at a time; a crawl of a known URL
//! syncing it; the embedded scheduler with a manual clock (due runs start once, survive a
//! restart, a missed window runs once). No network: the crawler's fetcher is a site in
//! memory the tests change between runs.

use crate::support;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use axum::Router;
use crawl_api::{router, ApiError, ApiState, Authorizer, InProcessRunner, Role, Scheduler};
use crawl_core::clock::ManualClock;
use crawl_core::{
    Crawler, DynIngestor, DynSink, FetchRequest, FetchResponse, Fetcher, NoopIngestor, Result, Sink,
};
use serde_json::{json, Value};
use support::{eventually, WatchedSink};
use time::OffsetDateTime;
use tower::ServiceExt;

const ROOT: &str = "http://site.test/";

/// A site whose pages the test edits between runs.
#[derive(Debug, Default)]
struct Site {
    pages: Mutex<HashMap<String, String>>,
    delay: Mutex<Duration>,
}

impl std::fmt::Display for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Site")
    }
}

fn page(title: &str, links: &[&str], body: &str) -> String {
    let links: String = links
        .iter()
        .map(|l| format!("<a href=\"{l}\">{l}</a> "))
        .collect();
    format!(
        "<!doctype html><html lang=\"en\"><head><title>{title}</title></head><body>\
         <nav>{links}</nav><main><h1>{title}</h1><p>{body}</p><h2>Details</h2><p>More about \
         {title}: opening hours, contacts and forms for students.</p></main></body></html>"
    )
}

impl Site {
    fn new() -> Arc<Self> {
        let s = Site::default();
        s.set(
            "/",
            &page(
                "Registrar",
                &["/a", "/b", "/c"],
                "Welcome to the registrar's office.",
            ),
        );
        s.set(
            "/a",
            &page("Enrollment", &["/"], "How to enroll in classes each term."),
        );
        s.set(
            "/b",
            &page("Transcripts", &["/"], "Order official transcripts online."),
        );
        s.set(
            "/c",
            &page("Calendar", &["/"], "Academic calendar with every deadline."),
        );
        Arc::new(s)
    }
    fn set(&self, path: &str, html: &str) {
        self.pages.lock().unwrap().insert(path.into(), html.into());
    }
    fn remove(&self, path: &str) {
        self.pages.lock().unwrap().remove(path);
    }
    fn slow(&self, d: Duration) {
        *self.delay.lock().unwrap() = d;
    }
    /// The change every sync test makes: `/a` edited, `/b` gone, `/d` added.
    fn change(&self) {
        self.set(
            "/",
            &page(
                "Registrar",
                &["/a", "/b", "/c", "/d"],
                "Welcome to the registrar's office.",
            ),
        );
        self.set(
            "/a",
            &page(
                "Enrollment",
                &["/"],
                "Enrollment for the spring term opens on 1 March.",
            ),
        );
        self.remove("/b");
        self.set(
            "/d",
            &page(
                "Deadlines",
                &["/"],
                "Add and drop deadlines for full term classes.",
            ),
        );
    }
}

#[async_trait]
impl Fetcher for Site {
    async fn fetch(&self, req: &FetchRequest) -> Result<FetchResponse> {
        let delay = *self.delay.lock().unwrap();
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        let html = self.pages.lock().unwrap().get(req.url.path()).cloned();
        Ok(match html {
            Some(h) => FetchResponse::new(req.url.clone(), 200, h.into_bytes())
                .with_header("content-type", "text/html; charset=utf-8"),
            None => FetchResponse::new(req.url.clone(), 404, Vec::new())
                .with_header("content-type", "text/plain"),
        })
    }
}

/// Viewers for `x-role: viewer`, owners otherwise.
#[derive(Debug)]
struct RoleHeader;

#[async_trait]
impl Authorizer for RoleHeader {
    async fn authorize(&self, _: &HeaderMap, _: &str) -> std::result::Result<(), ApiError> {
        Ok(())
    }
    async fn role(&self, h: &HeaderMap, _: &str) -> std::result::Result<Role, ApiError> {
        Ok(match h.get("x-role").and_then(|v| v.to_str().ok()) {
            Some("viewer") => Role::Viewer,
            _ => Role::Owner,
        })
    }
}

struct Env {
    app: Router,
    state: ApiState,
    site: Arc<Site>,
    sink: Arc<WatchedSink>,
    clock: Arc<ManualClock>,
    sources: crawl_core::DynSourceStore,
}

fn env_with(
    sources: Option<crawl_core::DynSourceStore>,
    jobs: Option<crawl_core::DynJobStore>,
) -> Env {
    let site = Site::new();
    let sink = Arc::new(WatchedSink::default());
    let clock = Arc::new(ManualClock::new(at("2026-12-01T12:00:00Z")));
    let ingestor: DynIngestor = Arc::new(NoopIngestor);
    let sources = sources.unwrap_or_else(|| Arc::new(crawl_core::memory::MemorySourceStore::new()));
    let mut b = Crawler::builder()
        .fetcher(Arc::clone(&site) as _)
        .sink(Arc::clone(&sink) as DynSink)
        .sources(Arc::clone(&sources))
        .clock(Arc::clone(&clock) as _)
        .ingestor(Arc::clone(&ingestor));
    if let Some(j) = jobs {
        b = b.jobs(j);
    }
    let crawler = b.build().unwrap();
    let state = ApiState::in_process(InProcessRunner::new(crawler), ingestor)
        .authorizer(Arc::new(RoleHeader))
        .clock(Arc::clone(&clock) as _);
    Env {
        app: router(state.clone()),
        state,
        site,
        sink,
        clock,
        sources,
    }
}

fn env() -> Env {
    env_with(None, None)
}

fn at(s: &str) -> OffsetDateTime {
    OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).unwrap()
}

async fn call(app: &Router, method: &str, uri: &str, body: Option<Value>) -> (StatusCode, Value) {
    call_as(app, method, uri, body, None).await
}

async fn call_as(
    app: &Router,
    method: &str,
    uri: &str,
    body: Option<Value>,
    role: Option<&str>,
) -> (StatusCode, Value) {
    let mut req = Request::builder().method(method).uri(uri);
    if let Some(r) = role {
        req = req.header("x-role", r);
    }
    // The site guard wants every POST to be JSON ("Sync now" sends `{}`).
    let body = body.or_else(|| (method == "POST").then(|| json!({})));
    let req = match body {
        Some(b) => req
            .header("content-type", "application/json")
            .body(Body::from(b.to_string())),
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

const SOURCE_FIELDS: &[&str] = &[
    "sourceId",
    "url",
    "maxDepth",
    "maxPages",
    "include",
    "exclude",
    "render",
    "sitemap",
    "schedule",
    "createdAt",
    "nextSyncAt",
    "lastSync",
];

async fn wait_run(app: &Router, assistant: &str, job: &str) -> Value {
    eventually("run end", || async {
        let (s, v) = call(
            app,
            "GET",
            &format!("/assistants/{assistant}/crawl/{job}"),
            None,
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{v}");
        (v["status"] != "RUNNING").then_some(v)
    })
    .await
}

async fn create(app: &Router, assistant: &str, body: Value) -> Value {
    let (s, v) = call(
        app,
        "POST",
        &format!("/assistants/{assistant}/sources"),
        Some(body),
    )
    .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    v
}

fn diff(run: &Value) -> (u64, u64, u64, u64) {
    let n = |k: &str| run[k].as_u64().unwrap();
    (
        n("pagesAdded"),
        n("pagesChanged"),
        n("pagesUnchanged"),
        n("pagesRemoved"),
    )
}

#[tokio::test]
async fn a_source_is_created_listed_read_edited_synced_and_deleted() {
    let e = env();
    let created = create(
        &e.app,
        "ast-1",
        json!({"url": ROOT, "maxDepth": 2, "schedule": "daily", "exclude": ["/private/**"]}),
    )
    .await;
    assert_eq!(keys(&created), set(SOURCE_FIELDS));
    let id = created["sourceId"].as_str().unwrap().to_owned();
    assert!(id.starts_with("src-"), "{id}");
    assert_eq!(created["url"], ROOT);
    assert_eq!(created["maxDepth"], 2);
    assert_eq!(created["maxPages"], 100, "the deployment's default");
    assert_eq!(created["exclude"], json!(["/private/**"]));
    assert_eq!(created["schedule"], "daily");
    // Daily is 03:00 UTC: the next after 12:00 on 1 December is 03:00 on the 2nd.
    assert_eq!(created["nextSyncAt"], "2026-12-02T03:00:00Z");
    let first = created["lastSync"]["crawlJobId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(created["lastSync"]["sourceId"], id.as_str());
    let done = wait_run(&e.app, "ast-1", &first).await;
    assert_eq!(done["status"], "COMPLETED", "{done}");
    assert_eq!(diff(&done), (4, 0, 0, 0));

    let (s, list) = call(&e.app, "GET", "/assistants/ast-1/sources", None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(keys(&list), set(&["sources"]));
    assert_eq!(list["sources"].as_array().unwrap().len(), 1);
    assert_eq!(list["sources"][0]["lastSync"], done);
    let (s, one) = call(
        &e.app,
        "GET",
        &format!("/assistants/ast-1/sources/{id}"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(one, list["sources"][0]);

    let (s, edited) = call(
        &e.app,
        "PATCH",
        &format!("/assistants/ast-1/sources/{id}"),
        Some(json!({"maxPages": 3, "exclude": null,
                    "schedule": {"cron": "30 6 * * 1-5", "timeZone": "America/Boise"}})),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{edited}");
    assert_eq!(edited["maxPages"], 3);
    assert_eq!(edited["maxDepth"], 2, "untouched settings stay");
    assert_eq!(edited["exclude"], json!([]), "null clears a setting");
    assert_eq!(
        edited["schedule"],
        json!({"cron": "30 6 * * 1-5", "timeZone": "America/Boise"})
    );
    // Tuesday 1 December 12:00 UTC is 05:00 in Boise: 06:30 MST the same day.
    assert_eq!(edited["nextSyncAt"], "2026-12-01T13:30:00Z");

    e.site.change();
    e.clock.advance(Duration::from_secs(60));
    let (s, started) = call(
        &e.app,
        "POST",
        &format!("/assistants/ast-1/sources/{id}/sync"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::ACCEPTED, "{started}");
    assert_eq!(
        keys(&started),
        set(&["crawlJobId", "status", "startedAt", "sourceId"])
    );
    assert_eq!(started["sourceId"], id.as_str());
    let run = started["crawlJobId"].as_str().unwrap().to_owned();
    let done = wait_run(&e.app, "ast-1", &run).await;
    assert_eq!(done["pagesTotal"], 3, "the edited maxPages is used");

    let (s, runs) = call(
        &e.app,
        "GET",
        &format!("/assistants/ast-1/crawls?sourceId={id}"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let ids: Vec<&str> = runs["crawls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["crawlJobId"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec![run.as_str(), first.as_str()],
        "the source's runs, newest first"
    );

    assert!(!e.sink.keys_of(&first).is_empty(), "the source's documents");
    let (s, _) = call(
        &e.app,
        "DELETE",
        &format!("/assistants/ast-1/sources/{id}"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    assert!(
        e.sink.keys_of(&first).is_empty(),
        "every document of the source is gone"
    );
    assert!(e.sink.keys_of(&run).is_empty(), "and every run's files");
    let (s, _) = call(
        &e.app,
        "GET",
        &format!("/assistants/ast-1/sources/{id}"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (_, runs) = call(&e.app, "GET", "/assistants/ast-1/crawls", None).await;
    assert_eq!(runs["crawls"], json!([]), "its runs' records are gone");
    let (s, _) = call(
        &e.app,
        "DELETE",
        &format!("/assistants/ast-1/sources/{id}"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::NOT_FOUND, "a second DELETE finds nothing");
}

#[tokio::test]
async fn a_crawl_of_a_known_url_syncs_it_and_its_changes_are_listed() {
    let e = env();
    let (s, first) = call(
        &e.app,
        "POST",
        "/assistants/ast-1/crawl",
        Some(json!({"url": ROOT})),
    )
    .await;
    assert_eq!(s, StatusCode::ACCEPTED, "{first}");
    let source = first["sourceId"].as_str().unwrap().to_owned();
    let first_id = first["crawlJobId"].as_str().unwrap();
    wait_run(&e.app, "ast-1", first_id).await;
    let (_, list) = call(&e.app, "GET", "/assistants/ast-1/sources", None).await;
    assert_eq!(
        list["sources"][0]["sourceId"],
        source.as_str(),
        "the crawl made a source"
    );
    assert_eq!(list["sources"][0]["schedule"], "none");
    assert_eq!(list["sources"][0]["nextSyncAt"], Value::Null);

    e.site.change();
    let (s, second) = call(
        &e.app,
        "POST",
        "/assistants/ast-1/crawl",
        Some(json!({"url": ROOT})),
    )
    .await;
    assert_eq!(s, StatusCode::ACCEPTED, "{second}");
    assert_eq!(
        second["sourceId"],
        source.as_str(),
        "the same source, synced"
    );
    let run = second["crawlJobId"].as_str().unwrap().to_owned();
    let done = wait_run(&e.app, "ast-1", &run).await;
    assert_eq!(diff(&done), (1, 1, 2, 1), "+/d ~/a =/ and /c −/b: {done}");

    let (s, changes) = call(
        &e.app,
        "GET",
        &format!("/assistants/ast-1/crawl/{run}/changes"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{changes}");
    let mut got: Vec<(String, String, Value)> = changes["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(keys(c), set(&["url", "change", "reason"]));
            (
                c["url"].as_str().unwrap().to_owned(),
                c["change"].as_str().unwrap().to_owned(),
                c["reason"].clone(),
            )
        })
        .collect();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        got,
        vec![
            (format!("{ROOT}a"), "changed".into(), Value::Null),
            (format!("{ROOT}b"), "removed".into(), json!("http_404")),
            (format!("{ROOT}d"), "added".into(), Value::Null),
        ]
    );
    assert_eq!(changes["nextToken"], Value::Null, "one page: {changes}");
    // A page at a time, following nextToken: the same changes, each once, in file order.
    let mut paged = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let path = match &token {
            None => format!("/assistants/ast-1/crawl/{run}/changes?limit=1"),
            Some(t) => format!("/assistants/ast-1/crawl/{run}/changes?limit=1&nextToken={t}"),
        };
        let (s, page) = call(&e.app, "GET", &path, None).await;
        assert_eq!(s, StatusCode::OK, "{page}");
        assert!(page["changes"].as_array().unwrap().len() <= 1, "{page}");
        paged.extend(page["changes"].as_array().unwrap().iter().cloned());
        match page["nextToken"].as_str() {
            Some(t) => token = Some(t.to_owned()),
            None => break,
        }
        assert!(paged.len() < 10, "the pages never end: {paged:?}");
    }
    assert_eq!(&Value::Array(paged), &changes["changes"]);
    for bad in [
        "limit=0",
        "limit=1001",
        "limit=x",
        "nextToken=1",
        "nextToken=abc",
    ] {
        let (s, err) = call(
            &e.app,
            "GET",
            &format!("/assistants/ast-1/crawl/{run}/changes?{bad}"),
            None,
        )
        .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{bad}: {err}");
        let field = bad.split('=').next().unwrap();
        assert!(err.to_string().contains(field), "{bad}: {err}");
    }
    // Another assistant's crawl of the same URL is a source of its own.
    let (_, other) = call(
        &e.app,
        "POST",
        "/assistants/ast-2/crawl",
        Some(json!({"url": ROOT})),
    )
    .await;
    assert_ne!(other["sourceId"], source.as_str());
    wait_run(&e.app, "ast-2", other["crawlJobId"].as_str().unwrap()).await;
}

#[tokio::test]
async fn deleting_one_run_takes_the_sources_documents_and_the_next_run_adds_them_again() {
    let e = env();
    let created = create(&e.app, "ast-1", json!({"url": ROOT})).await;
    let id = created["sourceId"].as_str().unwrap().to_owned();
    let first = created["lastSync"]["crawlJobId"]
        .as_str()
        .unwrap()
        .to_owned();
    wait_run(&e.app, "ast-1", &first).await;
    let (_, second) = call(
        &e.app,
        "POST",
        &format!("/assistants/ast-1/sources/{id}/sync"),
        None,
    )
    .await;
    let second = second["crawlJobId"].as_str().unwrap().to_owned();
    let done = wait_run(&e.app, "ast-1", &second).await;
    assert_eq!(diff(&done), (0, 0, 4, 0));
    let (s, _) = call(
        &e.app,
        "DELETE",
        &format!("/assistants/ast-1/crawl/{second}"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::NO_CONTENT);
    assert!(
        e.sink.keys_of(&first).is_empty(),
        "the source's documents left with the run"
    );
    let (s, kept) = call(
        &e.app,
        "GET",
        &format!("/assistants/ast-1/sources/{id}"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK, "the source stays");
    assert_eq!(
        kept["lastSync"],
        Value::Null,
        "its latest run's record is gone"
    );
    let (_, third) = call(
        &e.app,
        "POST",
        &format!("/assistants/ast-1/sources/{id}/sync"),
        None,
    )
    .await;
    let third = third["crawlJobId"].as_str().unwrap().to_owned();
    let done = wait_run(&e.app, "ast-1", &third).await;
    assert_eq!(diff(&done), (4, 0, 0, 0), "every page added again: {done}");
    let docs = e.sink.inner.list(&third.parse().unwrap()).await.unwrap();
    assert_eq!(docs.len(), 4, "under the new run's folder: {docs:?}");
}

#[tokio::test]
async fn one_run_per_source_at_a_time_and_viewers_cannot_sync() {
    let e = env();
    e.site.slow(Duration::from_millis(300));
    let created = create(&e.app, "ast-1", json!({"url": ROOT})).await;
    let id = created["sourceId"].as_str().unwrap().to_owned();
    let running = created["lastSync"]["crawlJobId"]
        .as_str()
        .unwrap()
        .to_owned();
    let sync = format!("/assistants/ast-1/sources/{id}/sync");
    let (s, v) = call(&e.app, "POST", &sync, None).await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains(&running),
        "{v}"
    );
    let (s, v) = call(
        &e.app,
        "POST",
        "/assistants/ast-1/crawl",
        Some(json!({"url": ROOT})),
    )
    .await;
    assert_eq!(
        s,
        StatusCode::CONFLICT,
        "a crawl of the URL is a run of the source too: {v}"
    );

    let (s, v) = call_as(&e.app, "POST", &sync, None, Some("viewer")).await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{v}");
    for (method, uri, body) in [
        (
            "POST",
            "/assistants/ast-1/sources".to_owned(),
            Some(json!({"url": "http://other.test/"})),
        ),
        (
            "PATCH",
            format!("/assistants/ast-1/sources/{id}"),
            Some(json!({"maxPages": 5})),
        ),
        ("DELETE", format!("/assistants/ast-1/sources/{id}"), None),
    ] {
        let (s, v) = call_as(&e.app, method, &uri, body, Some("viewer")).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{method} {uri}: {v}");
    }
    let (s, _) = call_as(
        &e.app,
        "GET",
        &format!("/assistants/ast-1/sources/{id}"),
        None,
        Some("viewer"),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "viewers read");
    let (s, _) = call_as(
        &e.app,
        "GET",
        "/assistants/ast-1/sources",
        None,
        Some("viewer"),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    e.site.slow(Duration::ZERO);
    wait_run(&e.app, "ast-1", &running).await;
    let (s, v) = call(&e.app, "POST", &sync, None).await;
    assert_eq!(s, StatusCode::ACCEPTED, "once the run ended: {v}");
    wait_run(&e.app, "ast-1", v["crawlJobId"].as_str().unwrap()).await;
}

#[tokio::test]
async fn another_assistants_source_is_not_found_and_untouched() {
    let e = env();
    let created = create(&e.app, "ast-1", json!({"url": ROOT})).await;
    let id = created["sourceId"].as_str().unwrap().to_owned();
    wait_run(
        &e.app,
        "ast-1",
        created["lastSync"]["crawlJobId"].as_str().unwrap(),
    )
    .await;
    for (method, uri, body) in [
        ("GET", format!("/assistants/ast-2/sources/{id}"), None),
        (
            "PATCH",
            format!("/assistants/ast-2/sources/{id}"),
            Some(json!({"maxPages": 5})),
        ),
        ("DELETE", format!("/assistants/ast-2/sources/{id}"), None),
        ("POST", format!("/assistants/ast-2/sources/{id}/sync"), None),
        (
            "GET",
            "/assistants/ast-1/sources/src-0123456789abcdef".to_owned(),
            None,
        ),
        (
            "GET",
            "/assistants/ast-1/sources/not-an-id".to_owned(),
            None,
        ),
    ] {
        let (s, v) = call(&e.app, method, &uri, body).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{method} {uri}: {v}");
    }
    let (_, list) = call(&e.app, "GET", "/assistants/ast-2/sources", None).await;
    assert_eq!(list, json!({"sources": []}));
    let (s, one) = call(
        &e.app,
        "GET",
        &format!("/assistants/ast-1/sources/{id}"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(one["maxPages"], 100, "untouched");
}

#[tokio::test]
async fn bad_settings_are_refused_naming_the_field_and_change_nothing() {
    let e = env();
    for (body, field) in [
        (
            json!({"url": ROOT, "schedule": {"cron": "61 * * * *"}}),
            "schedule.cron",
        ),
        (
            json!({"url": ROOT, "schedule": {"cron": "0 3 * * *", "timeZone": "Mars/Base"}}),
            "schedule.timeZone",
        ),
        (json!({"url": ROOT, "schedule": "hourly"}), "schedule"),
        (json!({"url": ROOT, "maxDepth": 9}), "maxDepth"),
        (json!({"url": ROOT, "include": ["/a/[z-a]"]}), "include"),
        (json!({"url": ROOT, "color": "red"}), "color"),
        (json!({"maxDepth": 1}), "url"),
    ] {
        let (s, v) = call(
            &e.app,
            "POST",
            "/assistants/ast-1/sources",
            Some(body.clone()),
        )
        .await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {v}");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(msg.contains(field), "{body}: {v}");
    }
    let (_, list) = call(&e.app, "GET", "/assistants/ast-1/sources", None).await;
    assert_eq!(list["sources"], json!([]), "no half-made source");

    let created = create(&e.app, "ast-1", json!({"url": ROOT, "maxPages": 10})).await;
    let id = created["sourceId"].as_str().unwrap().to_owned();
    wait_run(
        &e.app,
        "ast-1",
        created["lastSync"]["crawlJobId"].as_str().unwrap(),
    )
    .await;
    let (s, v) = call(
        &e.app,
        "POST",
        "/assistants/ast-1/sources",
        Some(json!({"url": ROOT})),
    )
    .await;
    assert_eq!(s, StatusCode::CONFLICT, "{v}");
    assert_eq!(v["error"]["field"], "url");
    assert!(v["error"]["message"].as_str().unwrap().contains(&id));
    let uri = format!("/assistants/ast-1/sources/{id}");
    for (body, field) in [
        (json!({"url": "http://other.test/"}), "url"),
        (json!({"maxPages": 100000}), "maxPages"),
        (json!({"schedule": {"cron": "* * *"}}), "schedule.cron"),
        (json!({"colour": 1}), "colour"),
    ] {
        let (s, v) = call(&e.app, "PATCH", &uri, Some(body.clone())).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {v}");
        assert_eq!(v["error"]["field"], field, "{body}: {v}");
    }
    let (_, one) = call(&e.app, "GET", &uri, None).await;
    assert_eq!(
        (one["maxPages"].clone(), one["schedule"].clone()),
        (json!(10), json!("none")),
        "nothing changed"
    );
}

/// A source due at `due`, created through the API with a schedule.
async fn scheduled(e: &Env, schedule: Value) -> String {
    let created = create(&e.app, "ast-1", json!({"url": ROOT, "schedule": schedule})).await;
    wait_run(
        &e.app,
        "ast-1",
        created["lastSync"]["crawlJobId"].as_str().unwrap(),
    )
    .await;
    created["sourceId"].as_str().unwrap().to_owned()
}

async fn runs(e: &Env) -> usize {
    let (_, v) = call(&e.app, "GET", "/assistants/ast-1/crawls", None).await;
    v["crawls"].as_array().unwrap().len()
}

async fn wait_all_final(e: &Env) {
    eventually("runs end", || async {
        let (_, v) = call(&e.app, "GET", "/assistants/ast-1/crawls", None).await;
        v["crawls"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["status"] != "RUNNING")
            .then_some(())
    })
    .await;
}

#[tokio::test]
async fn the_scheduler_starts_a_due_run_once_and_a_missed_window_once() {
    let e = env();
    let id = scheduled(&e, json!("daily")).await;
    let scheduler = Scheduler::new(e.state.clone());
    assert!(
        scheduler.tick().await.unwrap().is_empty(),
        "not due before 03:00"
    );
    assert_eq!(runs(&e).await, 1);

    e.clock.advance(Duration::from_secs(15 * 3600 + 60)); // 2 December 03:01
    let started = scheduler.tick().await.unwrap();
    assert_eq!(started.len(), 1);
    assert_eq!(
        started[0].next_sync_at,
        Some(at("2026-12-03T03:00:00Z")),
        "the next window"
    );
    assert!(scheduler.tick().await.unwrap().is_empty(), "started once");
    wait_all_final(&e).await;
    assert_eq!(runs(&e).await, 2);

    // Down for three days: the missed windows run once, and the next is tomorrow's.
    e.clock.advance(Duration::from_secs(3 * 86_400));
    assert_eq!(scheduler.tick().await.unwrap().len(), 1);
    assert!(scheduler.tick().await.unwrap().is_empty());
    wait_all_final(&e).await;
    assert_eq!(runs(&e).await, 3);
    let (_, s) = call(
        &e.app,
        "GET",
        &format!("/assistants/ast-1/sources/{id}"),
        None,
    )
    .await;
    assert_eq!(s["nextSyncAt"], "2026-12-06T03:00:00Z");

    // A run going when the window comes: none is stacked on it.
    e.site.slow(Duration::from_millis(200));
    let (st, v) = call(
        &e.app,
        "POST",
        &format!("/assistants/ast-1/sources/{id}/sync"),
        None,
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{v}");
    e.clock.advance(Duration::from_secs(86_400));
    assert!(
        scheduler.tick().await.unwrap().is_empty(),
        "one run per source at a time"
    );
    e.site.slow(Duration::ZERO);
    wait_all_final(&e).await;
    assert_eq!(
        scheduler.tick().await.unwrap().len(),
        1,
        "served once the run ended"
    );
    wait_all_final(&e).await;
    assert_eq!(runs(&e).await, 5);
}

#[tokio::test]
async fn a_restart_neither_loses_nor_repeats_a_scheduled_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(crawl_store::RedbStore::open(dir.path().join("state.redb")).unwrap());
    let e = env_with(Some(Arc::clone(&db) as _), Some(Arc::clone(&db) as _));
    let id = scheduled(&e, json!({"every": "daily", "timeZone": "UTC"})).await;
    e.clock.advance(Duration::from_secs(16 * 3600)); // 2 December 04:00, due since 03:00
                                                     // The run of this window started, and the process died before it moved the due time:
                                                     // the record still says 03:00 on the 2nd.
    let store = Arc::clone(&e.sources);
    let mut rec = store
        .get_source(&id.parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    let (s, v) = call(
        &e.app,
        "POST",
        &format!("/assistants/ast-1/sources/{id}/sync"),
        None,
    )
    .await;
    assert_eq!(s, StatusCode::ACCEPTED, "{v}");
    wait_all_final(&e).await;
    let latest = store.get_source(&rec.id).await.unwrap().unwrap();
    rec.last_run = latest.last_run.clone();
    rec.documents = latest.documents.clone();
    store.put_source(&rec).await.unwrap();
    assert_eq!(rec.next_sync_at, Some(at("2026-12-02T03:00:00Z")));
    drop(e);

    // A new process over the same state file.
    let e = env_with(Some(Arc::clone(&db) as _), Some(Arc::clone(&db) as _));
    e.clock.advance(Duration::from_secs(16 * 3600));
    let scheduler = Scheduler::new(e.state.clone());
    assert!(
        scheduler.tick().await.unwrap().is_empty(),
        "this window's run already started"
    );
    assert_eq!(runs(&e).await, 2);
    let (_, s) = call(
        &e.app,
        "GET",
        &format!("/assistants/ast-1/sources/{id}"),
        None,
    )
    .await;
    assert_eq!(
        s["nextSyncAt"], "2026-12-03T03:00:00Z",
        "moved on, not lost"
    );
    // Down until the 3rd, 05:00: its window runs at start-up, once.
    e.clock.advance(Duration::from_secs(25 * 3600));
    let again = Scheduler::new(e.state.clone());
    assert_eq!(again.tick().await.unwrap().len(), 1);
    assert!(again.tick().await.unwrap().is_empty());
    wait_all_final(&e).await;
    assert_eq!(runs(&e).await, 3);
}

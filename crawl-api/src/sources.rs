//! The source routes: a website an assistant keeps in its knowledge base, its settings and
//! schedule, and "Sync now".

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::Json;
use crawl_core::{
    CrawlRequest, DynSourceStore, ErrorKind, JobRecord, Schedule, SourceId, SourceRecord,
    StartCrawl,
};
use serde_json::{Map, Value};

use crate::auth::Action;
use crate::error::ApiError;
use crate::model::{CrawlJob, CrawlStarted, SourceList, SourceView};
use crate::routes::{authorize, check_running_limits, parse_body};
use crate::state::ApiState;

type ApiResult<T> = Result<T, ApiError>;

/// Paths of the source routes.
pub(crate) const SOURCES: &str = "/assistants/{assistant_id}/sources";
pub(crate) const SOURCE: &str = "/assistants/{assistant_id}/sources/{source_id}";
pub(crate) const SYNC: &str = "/assistants/{assistant_id}/sources/{source_id}/sync";

/// The fields a source's settings take (`url` only when it is created).
const SETTINGS: &[&str] = &[
    "maxDepth", "maxPages", "render", "include", "exclude", "sitemap",
];

fn store(state: &ApiState) -> ApiResult<DynSourceStore> {
    state.runner.sources().ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_IMPLEMENTED,
            None,
            format!(
                "{} keeps no sources: this deployment runs every crawl as a snapshot",
                state.runner
            ),
        )
    })
}

/// The crawl request a run of `source` uses: its stored settings under the deployment's
/// policy and guardrails, for its tenant.
pub(crate) fn request_of(
    state: &ApiState,
    source: &SourceRecord,
) -> crawl_core::Result<CrawlRequest> {
    source.request(&state.policy, &state.guardrails)
}

/// The source as the API shows it, with its latest run.
async fn view(state: &ApiState, source: &SourceRecord) -> ApiResult<SourceView> {
    let last = match &source.last_run {
        Some(id) => state.jobs.get(id).await?,
        None => None,
    };
    let settings = match &source.settings {
        Value::Object(m) => StartCrawl::from_object(m.clone()).unwrap_or_default(),
        _ => StartCrawl::default(),
    };
    // What a run would use (the deployment's defaults fill what the settings leave out).
    let effective = request_of(state, source).ok();
    Ok(SourceView {
        source_id: source.id.to_string(),
        url: source.root.to_string(),
        max_depth: effective
            .as_ref()
            .map_or(settings.max_depth.unwrap_or(0), |r| u64::from(r.max_depth)),
        max_pages: effective
            .as_ref()
            .map_or(settings.max_pages.unwrap_or(0), |r| u64::from(r.max_pages)),
        include: settings.include.clone().unwrap_or_default(),
        exclude: settings.exclude.clone().unwrap_or_default(),
        render: effective
            .as_ref()
            .map_or(settings.render.unwrap_or_default(), |r| r.render),
        sitemap: effective
            .as_ref()
            .map_or(settings.sitemap.unwrap_or_default(), |r| r.sitemap),
        schedule: source.schedule.clone(),
        created_at: source.created_at,
        next_sync_at: source.next_sync_at,
        last_sync: last.as_ref().map(CrawlJob::from),
    })
}

/// The source, only if it belongs to `assistant`: another assistant's is "not found".
async fn owned_source(
    store: &DynSourceStore,
    assistant: &str,
    source: &str,
) -> ApiResult<SourceRecord> {
    let missing = || ApiError::not_found(format!("no source {source} for assistant {assistant}"));
    let id: SourceId = source.parse().map_err(|_| missing())?;
    match store.get_source(&id).await? {
        Some(s) if s.tenant == assistant => Ok(s),
        _ => Err(missing()),
    }
}

/// Splits `schedule` off a body and checks it.
fn take_schedule(body: &mut Map<String, Value>) -> ApiResult<Option<Schedule>> {
    let Some(v) = body.remove("schedule") else {
        return Ok(None);
    };
    let s = Schedule::from_json(&v)?;
    crate::schedule::check(&s)?;
    Ok(Some(s))
}

pub(crate) async fn list(
    State(state): State<ApiState>,
    Path(assistant): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Json<SourceList>> {
    authorize(&state, &headers, &assistant, Action::Read).await?;
    let store = store(&state)?;
    let mut sources = Vec::new();
    for s in store.list_sources(&assistant).await? {
        sources.push(view(&state, &s).await?);
    }
    Ok(Json(SourceList { sources }))
}

pub(crate) async fn get_one(
    State(state): State<ApiState>,
    Path((assistant, source)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Json<SourceView>> {
    authorize(&state, &headers, &assistant, Action::Read).await?;
    let store = store(&state)?;
    let source = owned_source(&store, &assistant, &source).await?;
    Ok(Json(view(&state, &source).await?))
}

/// Adds a website as a source of the assistant and starts its first run.
pub(crate) async fn create(
    State(state): State<ApiState>,
    Path(assistant): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<SourceView>)> {
    authorize(&state, &headers, &assistant, Action::Write).await?;
    let store = store(&state)?;
    let mut body = parse_body(&body)?;
    let schedule = take_schedule(&mut body)?.unwrap_or_default();
    let start = StartCrawl::from_object(body)?;
    let settings = serde_json::to_value(&start).unwrap_or_default();
    let mut request = start.into_request(&state.policy, &state.guardrails)?;
    request.assistant_id = Some(assistant.clone());
    let root = crawl_core::url::normalize(&request.url)
        .ok_or_else(|| ApiError::invalid("url", "url: the root URL is not http(s)"))?;
    let now = state.clock.now();
    let mut record = SourceRecord::new(assistant.clone(), root, now);
    if let Some(existing) = store.get_source(&record.id).await? {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            Some("url"),
            format!(
                "url: {} is already source {} of assistant {assistant}; sync or edit it",
                existing.root, existing.id
            ),
        ));
    }
    record.settings = settings;
    record.next_sync_at = crate::schedule::next_after(&schedule, now)?;
    record.schedule = schedule;

    let mut running = state.start_lock.lock().await;
    check_running_limits(&state, &mut running, &assistant).await?;
    // The record first, so the first run finds its schedule and settings.
    store.put_source(&record).await?;
    let started = match state.schedules.put(&record).await {
        Ok(()) => state.runner.start_sync(&assistant, request).await,
        Err(e) => Err(e),
    };
    let (record, job) = match started {
        Ok(x) => x,
        Err(e) => {
            // Nothing half-made stays behind: the source had no run yet.
            if let Err(undo) = state.schedules.delete(&record.id).await {
                tracing::warn!(source = %record.id, error = %undo, "could not remove the schedule of a source whose first run did not start");
            }
            if let Err(undo) = store.delete_source(&record.id).await {
                tracing::warn!(source = %record.id, error = %undo, "could not remove a source whose first run did not start");
            }
            return Err(e.into());
        }
    };
    running.insert(job, assistant.clone());
    drop(running);
    Ok((StatusCode::CREATED, Json(view(&state, &record).await?)))
}

/// Changes a source's settings or schedule; the next run uses them.
pub(crate) async fn patch(
    State(state): State<ApiState>,
    Path((assistant, source)): Path<(String, String)>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Json<SourceView>> {
    authorize(&state, &headers, &assistant, Action::Write).await?;
    let store = store(&state)?;
    let mut record = owned_source(&store, &assistant, &source).await?;
    let mut body = parse_body(&body)?;
    if body.contains_key("url") {
        return Err(ApiError::invalid(
            "url",
            "url: a source's URL cannot change; add the new URL as a source of its own",
        ));
    }
    let schedule = take_schedule(&mut body)?;
    let mut settings = match &record.settings {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    for (k, v) in body {
        if !SETTINGS.contains(&k.as_str()) {
            return Err(ApiError::invalid(
                &k,
                format!(
                    "{}: unknown field (a source takes {}, schedule)",
                    k.chars().take(40).collect::<String>(),
                    SETTINGS.join(", ")
                ),
            ));
        }
        if v.is_null() {
            settings.remove(&k);
        } else {
            settings.insert(k, v);
        }
    }
    // The merged settings must make a valid request (the error names the field).
    let merged = StartCrawl::from_object(settings.clone())?;
    let mut check = merged.clone();
    check.url = Some(record.root.to_string());
    check.into_request(&state.policy, &state.guardrails)?;
    record.settings = serde_json::to_value(&merged).unwrap_or_default();
    if let Some(s) = schedule {
        record.next_sync_at = crate::schedule::next_after(&s, state.clock.now())?;
        record.schedule = s;
    }
    state.schedules.put(&record).await?;
    store.put_source(&record).await?;
    Ok(Json(view(&state, &record).await?))
}

/// "Sync now": starts a run of the source (409 while one goes).
pub(crate) async fn sync(
    State(state): State<ApiState>,
    Path((assistant, source)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<(StatusCode, Json<CrawlStarted>)> {
    authorize(&state, &headers, &assistant, Action::Write).await?;
    let store = store(&state)?;
    let record = owned_source(&store, &assistant, &source).await?;
    let request = request_of(&state, &record)?;
    let started = start_run(&state, &assistant, request).await?;
    Ok((StatusCode::ACCEPTED, Json(started)))
}

/// Starts a run of the source of `request` under `assistant`, within the running-job limits;
/// a run already going answers 409 naming it.
pub(crate) async fn start_run(
    state: &ApiState,
    assistant: &str,
    request: CrawlRequest,
) -> ApiResult<CrawlStarted> {
    let mut running = state.start_lock.lock().await;
    check_running_limits(state, &mut running, assistant).await?;
    let (_, job) = state
        .runner
        .start_sync(assistant, request)
        .await
        .map_err(|e| {
            if e.kind() == ErrorKind::Conflict {
                ApiError::new(
                    StatusCode::CONFLICT,
                    None,
                    format!("{}; wait for it to end, or delete it", e.message()),
                )
            } else {
                e.into()
            }
        })?;
    running.insert(job.clone(), assistant.to_owned());
    drop(running);
    let record =
        state.jobs.get(&job).await?.ok_or_else(|| {
            ApiError::not_found(format!("crawl job {job} vanished after its start"))
        })?;
    Ok(CrawlStarted::from(&record))
}

/// Every run of the source (job records), any order.
async fn runs_of(state: &ApiState, source: &SourceRecord) -> ApiResult<Vec<JobRecord>> {
    Ok(state
        .jobs
        .list(Some(&source.tenant))
        .await?
        .into_iter()
        .filter(|r| {
            r.request
                .sync
                .as_ref()
                .is_some_and(|s| s.source == source.id)
        })
        .collect())
}

/// Removes the source: stops a run that goes, removes every document of it from the
/// knowledge base and the sink, then its runs' records, then the source and its pages'
/// state. A failure leaves what is left so the DELETE can be retried.
pub(crate) async fn delete(
    State(state): State<ApiState>,
    Path((assistant, source)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<StatusCode> {
    authorize(&state, &headers, &assistant, Action::Write).await?;
    let store = store(&state)?;
    let record = owned_source(&store, &assistant, &source).await?;
    // The schedule first: no run may start while the rest goes.
    state.schedules.delete(&record.id).await?;
    let runs = runs_of(&state, &record).await?;
    for r in runs.iter().filter(|r| !r.status.is_final()) {
        state.runner.cancel(&r.id).await?;
    }
    forget_documents(&state, &store, &record, &runs).await?;
    for r in &runs {
        state.sink.delete_job(&r.id).await?;
        match state.jobs.delete(&r.id).await {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
    }
    store.delete_source(&record.id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Takes every document of the source out of the knowledge base (`on_deleted` of one of its
/// runs: for a run of a source that removes all of the source's documents, which its runs
/// share) and the sink, and forgets the pages' state, keeping the record (its settings and
/// schedule): its next run adds every page again.
pub(crate) async fn forget_documents(
    state: &ApiState,
    store: &DynSourceStore,
    source: &SourceRecord,
    runs: &[JobRecord],
) -> ApiResult<()> {
    if let Some(latest) = runs.iter().max_by_key(|r| r.started_at) {
        remove_from_kb(state, latest, "the source").await?;
    }
    if let Some(docs) = &source.documents {
        state.sink.delete_job(docs).await?;
    }
    let mut reset = source.clone();
    reset.documents = None;
    reset.template = String::new();
    store.delete_source(&source.id).await?;
    store.put_source(&reset).await?;
    Ok(())
}

/// The runs of the source a crawl job belongs to, for the job DELETE.
pub(crate) async fn source_of_run(
    state: &ApiState,
    run: &JobRecord,
) -> ApiResult<Option<(DynSourceStore, SourceRecord, Vec<JobRecord>)>> {
    let (Some(target), Some(store)) = (&run.request.sync, state.runner.sources()) else {
        return Ok(None);
    };
    let Some(source) = store.get_source(&target.source).await? else {
        return Ok(None);
    };
    let runs = runs_of(state, &source).await?;
    Ok(Some((Arc::clone(&store), source, runs)))
}

/// Tells the knowledge base `job` is deleted; a refusal answers 502 saying `kept` stays (the
/// detail goes to the log), so the DELETE can be retried.
pub(crate) async fn remove_from_kb(state: &ApiState, job: &JobRecord, kept: &str) -> ApiResult<()> {
    state.ingestor.on_deleted(job).await.map_err(|e| {
        tracing::error!(job = %job.id, ingestor = %state.ingestor, error = %e, "knowledge base removal failed");
        ApiError::new(
            StatusCode::BAD_GATEWAY,
            None,
            format!(
                "the knowledge base did not confirm the removal (the detail is in the server \
                 log); {kept} is kept, retry the DELETE"
            ),
        )
    })
}

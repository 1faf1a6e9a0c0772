//! The routes of the job API: the feature request's four crawl routes, a run's changes, and
//! the source routes (`sources.rs`).

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use crawl_core::{ChangeLine, JobId, JobRecord, RangeLines, StartCrawl};
use serde_json::{Map, Value};

use crate::auth::{Action, AuthorizerExt};
use crate::error::ApiError;
use crate::limits::RunningIndex;
use crate::limits::{self, MAX_PAGE};
use crate::model::{ChangeList, CrawlJob, CrawlList, CrawlStarted, PageChangeView};
use crate::sources::{self, SOURCE, SOURCES, SYNC};
use crate::state::ApiState;

const START: &str = "/assistants/{assistant_id}/crawl";
const ONE: &str = "/assistants/{assistant_id}/crawl/{crawl_job_id}";
const LIST: &str = "/assistants/{assistant_id}/crawls";
const CHANGES: &str = "/assistants/{assistant_id}/crawl/{crawl_job_id}/changes";
const INGEST: &str = "/assistants/{assistant_id}/crawl/{crawl_job_id}/ingest";

/// Every route of [`router`] as `(method, path)`; axum and OpenAPI share the path syntax.
/// The OpenAPI test checks the spec declares exactly these and the router serves each.
pub const ROUTES: &[(&str, &str)] = &[
    ("post", START),
    ("get", ONE),
    ("delete", ONE),
    ("get", LIST),
    ("get", CHANGES),
    ("get", SOURCES),
    ("post", SOURCES),
    ("get", SOURCE),
    ("patch", SOURCE),
    ("delete", SOURCE),
    ("post", SYNC),
    ("post", INGEST),
];

/// The job API: mount it in a host's axum app. Every route first passes the state's
/// [`SiteGuard`](crate::SiteGuard) (Host, Origin, Content-Type), then the authorizer.
pub fn router(state: ApiState) -> Router {
    let site = Arc::clone(&state.site);
    Router::new()
        .route(START, post(start))
        .route(ONE, get(get_one).delete(delete))
        .route(LIST, get(list))
        .route(CHANGES, get(changes))
        .route(SOURCES, get(sources::list).post(sources::create))
        .route(
            SOURCE,
            get(sources::get_one)
                .patch(sources::patch)
                .delete(sources::delete),
        )
        .route(SYNC, post(sources::sync))
        .route(INGEST, post(ingest))
        .layer(axum::middleware::from_fn_with_state(
            site,
            crate::guard::guard,
        ))
        .with_state(state)
}

type ApiResult<T> = Result<T, ApiError>;

/// Checks the assistant id's shape, then asks the authorizer whether the caller's role
/// permits `action`.
pub(crate) async fn authorize(
    state: &ApiState,
    headers: &HeaderMap,
    assistant: &str,
    action: Action,
) -> ApiResult<()> {
    let ok = !assistant.is_empty()
        && assistant.len() <= 128
        && assistant
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !ok {
        return Err(ApiError::invalid(
            "assistantId",
            "assistantId: must be 1 to 128 characters of letters, digits, '-', '_' or '.'",
        ));
    }
    state
        .authorizer
        .require(headers, assistant, action)
        .await
        .map(drop)
}

/// The job, only if it belongs to `assistant`: another assistant's job is "not found".
async fn owned_job(state: &ApiState, assistant: &str, job: &str) -> ApiResult<JobRecord> {
    let missing = || ApiError::not_found(format!("no crawl job {job} for assistant {assistant}"));
    let id: JobId = job.parse().map_err(|_| missing())?;
    match state.jobs.get(&id).await? {
        Some(r) if r.assistant_id.as_deref() == Some(assistant) => Ok(r),
        _ => Err(missing()),
    }
}

/// Starts a crawl. With a runner that keeps sources, the crawl is a run of the assistant's
/// source of that URL (created on its first run): a URL crawled again syncs.
async fn start(
    State(state): State<ApiState>,
    Path(assistant): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<CrawlStarted>)> {
    authorize(&state, &headers, &assistant, Action::Write).await?;
    let body = StartCrawl::from_object(parse_body(&body)?)?;
    let mut request = body.into_request(&state.policy, &state.guardrails)?;
    request.assistant_id = Some(assistant.clone());
    if state.runner.sources().is_some() {
        let started = sources::start_run(&state, &assistant, request).await?;
        sweep_if_due(&state);
        return Ok((StatusCode::ACCEPTED, Json(started)));
    }
    let mut running = state.start_lock.lock().await;
    check_running_limits(&state, &mut running, &assistant).await?;
    let id = state.runner.start(request).await?;
    running.insert(id.clone(), assistant.clone());
    drop(running);
    sweep_if_due(&state);
    let record =
        state.jobs.get(&id).await?.ok_or_else(|| {
            ApiError::not_found(format!("crawl job {id} vanished after its start"))
        })?;
    Ok((StatusCode::ACCEPTED, Json(CrawlStarted::from(&record))))
}

/// 429 when the assistant, or the server, already runs as many jobs as it may.
pub(crate) async fn check_running_limits(
    state: &ApiState,
    running: &mut RunningIndex,
    assistant: &str,
) -> ApiResult<()> {
    running.refresh(&*state.jobs).await?;
    let (mine, total) = running.counts(assistant);
    if mine >= state.max_running_per_assistant {
        return Err(ApiError::too_many(format!(
            "assistant {assistant} already has {mine} running crawl jobs (the limit is {}); \
             wait for one to finish or delete one",
            state.max_running_per_assistant
        )));
    }
    if total >= state.max_running_total {
        return Err(ApiError::too_many(format!(
            "the server already runs {total} crawl jobs across all assistants (the limit is \
             {}); try again when one has finished",
            state.max_running_total
        )));
    }
    Ok(())
}

pub(crate) fn parse_body(body: &[u8]) -> ApiResult<Map<String, Value>> {
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(ApiError::malformed(
            "body: must be a JSON object {\"url\", \"maxDepth\", \"maxPages\", \"render\"}",
        )),
        Err(e) => Err(ApiError::malformed(format!("body: malformed JSON ({e})"))),
    }
}

async fn get_one(
    State(state): State<ApiState>,
    Path((assistant, job)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Json<CrawlJob>> {
    authorize(&state, &headers, &assistant, Action::Read).await?;
    let record = owned_job(&state, &assistant, &job).await?;
    Ok(Json(CrawlJob::from(&record)))
}

/// Applies retention to every assistant's records, in the background, at most once per
/// [`Retention::sweep_every`](crate::Retention).
fn sweep_if_due(state: &ApiState) {
    let now = state.clock.now();
    {
        let Ok(mut last) = state.last_sweep.lock() else {
            return;
        };
        let every =
            time::Duration::try_from(state.retention.sweep_every).unwrap_or(time::Duration::MAX);
        if last.is_some_and(|t| now - t < every) {
            return;
        }
        *last = Some(now);
    }
    let state = state.clone();
    tokio::spawn(async move {
        if let Err(e) = sweep(&state, now).await {
            tracing::warn!(error = %e, "job retention sweep failed");
        }
    });
}

async fn sweep(state: &ApiState, now: time::OffsetDateTime) -> crawl_core::Result<()> {
    let mut by_assistant: HashMap<String, Vec<JobRecord>> = HashMap::new();
    for r in state.jobs.list(None).await? {
        by_assistant
            .entry(r.assistant_id.clone().unwrap_or_default())
            .or_default()
            .push(r);
    }
    for (_, mut records) in by_assistant {
        limits::sort_newest_first(&mut records);
        let (_, dropped) = state.retention.split(records, now);
        limits::drop_records(&*state.jobs, &dropped).await?;
    }
    Ok(())
}

async fn list(
    State(state): State<ApiState>,
    Path(assistant): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> ApiResult<Json<CrawlList>> {
    authorize(&state, &headers, &assistant, Action::Read).await?;
    let limit = page_limit(&query, MAX_PAGE)?;
    let cursor = match query.get("nextToken") {
        None => None,
        Some(t) => Some(limits::decode_cursor(t).ok_or_else(|| {
            ApiError::invalid("nextToken", "nextToken: not a token this API returned")
        })?),
    };
    let source = query.get("sourceId");
    let mut records = state.jobs.list(Some(&assistant)).await?;
    limits::sort_newest_first(&mut records);
    let (kept, dropped) = state.retention.split(records, state.clock.now());
    limits::drop_records(&*state.jobs, &dropped).await?;
    let mut page: Vec<&JobRecord> = kept
        .iter()
        .filter(|r| {
            source.is_none_or(|s| {
                r.request
                    .sync
                    .as_ref()
                    .is_some_and(|t| t.source.as_str() == s.as_str())
            })
        })
        .filter(|r| cursor.as_ref().is_none_or(|c| limits::after(r, c)))
        .take(limit + 1)
        .collect();
    let next_token = if page.len() > limit {
        page.truncate(limit);
        page.last().map(|r| limits::encode_cursor(r))
    } else {
        None
    };
    let crawls = page.into_iter().map(CrawlJob::from).collect();
    Ok(Json(CrawlList { crawls, next_token }))
}

/// Hands a COMPLETED job whose knowledge-base hand-off failed to the ingestor again, without
/// crawling (the diff is read back from the sink): 202 with the job after the attempt
/// (`ingestion` delivered, or failed with the reason); 409 when it is already delivered, a
/// hand-off is in progress, or the job is not COMPLETED.
async fn ingest(
    State(state): State<ApiState>,
    Path((assistant, job)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<(StatusCode, Json<CrawlJob>)> {
    authorize(&state, &headers, &assistant, Action::Write).await?;
    let record = owned_job(&state, &assistant, &job).await?;
    let record = crawl_core::engine::retry_ingestion(
        &*state.jobs,
        &*state.sink,
        &*state.ingestor,
        &record.id,
    )
    .await?;
    Ok((StatusCode::ACCEPTED, Json(CrawlJob::from(&record))))
}

/// Stops the job if it runs (and waits for its end), removes it from the knowledge base, then
/// its documents, then its record. A failure leaves the record so the DELETE can be retried.
///
/// A run of a source shares the source's documents with its other runs: deleting it takes
/// all of them out of the knowledge base and the sink and forgets the source's page state,
/// so the source's next run adds every page again (the source, its settings and schedule,
/// and its other runs' records stay). Refused with 409 while another run of the source goes.
async fn delete(
    State(state): State<ApiState>,
    Path((assistant, job)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<StatusCode> {
    authorize(&state, &headers, &assistant, Action::Write).await?;
    let record = owned_job(&state, &assistant, &job).await?;
    state.runner.cancel(&record.id).await?;
    let record = state.jobs.get(&record.id).await?.unwrap_or(record);
    if let Some((store, source, runs)) = sources::source_of_run(&state, &record).await? {
        if let Some(other) = runs
            .iter()
            .find(|r| r.id != record.id && !r.status.is_final())
        {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                None,
                format!(
                    "run {} of source {} is going, and the source's runs share its documents; \
                     wait for it to end, or delete it first",
                    other.id, source.id
                ),
            ));
        }
        sources::forget_documents(&state, &store, &source, std::slice::from_ref(&record)).await?;
    } else {
        sources::remove_from_kb(&state, &record, "the job").await?;
    }
    state.sink.delete_job(&record.id).await?;
    match state.jobs.delete(&record.id).await {
        Ok(()) => {}
        // A concurrent DELETE got there first.
        Err(e) if e.kind() == crawl_core::ErrorKind::NotFound => {}
        Err(e) => return Err(e.into()),
    }
    Ok(StatusCode::NO_CONTENT)
}

/// The `limit` query parameter of a paged list: 1 to `most`, `most` when not given.
fn page_limit(query: &HashMap<String, String>, most: usize) -> ApiResult<usize> {
    match query.get("limit") {
        None => Ok(most),
        Some(l) => match l.parse::<usize>() {
            Ok(n) if (1..=most).contains(&n) => Ok(n),
            _ => Err(ApiError::invalid(
                "limit",
                format!("limit: must be a whole number from 1 to {most}"),
            )),
        },
    }
}

/// Changes per page of `GET .../changes` (default and most).
const CHANGES_PAGE: usize = 1000;

/// The pages a run of a source added, changed or removed (its `changes.jsonl`), a page of at
/// most `limit` (default and most [`CHANGES_PAGE`]) at a time: the file is read in ranged
/// windows from where the previous page ended (`nextToken`), never whole.
async fn changes(
    State(state): State<ApiState>,
    Path((assistant, job)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> ApiResult<Json<ChangeList>> {
    authorize(&state, &headers, &assistant, Action::Read).await?;
    let limit = page_limit(&query, CHANGES_PAGE)?;
    let record = owned_job(&state, &assistant, &job).await?;
    let key = crawl_core::keys::aux_key(&record.id, ChangeLine::FILE)?;
    let sink = state.sink.as_ref();
    let bad_token = || ApiError::invalid("nextToken", "nextToken: not a token this API returned");
    let start = match query.get("nextToken") {
        None => 0,
        Some(t) => {
            // A token is the offset of a line's start: the byte before it ends a line.
            let offset = t
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(bad_token)?;
            let before = sink.get_range(&key, offset - 1, 1).await?;
            if before.as_deref() != Some(b"\n".as_slice()) {
                return Err(bad_token());
            }
            offset
        }
    };
    let mut lines = RangeLines::at(sink, key.clone(), 64 << 10, start);
    let mut changes = Vec::new();
    let mut at = start;
    let mut next_token = None;
    'read: while let Some(block) = lines.next_block().await? {
        for line in block.split_inclusive(|b| *b == b'\n') {
            let text = line.strip_suffix(b"\n").unwrap_or(line);
            if !text.is_empty() {
                if changes.len() == limit {
                    next_token = Some(at.to_string());
                    break 'read;
                }
                // One line: its one change.
                changes.extend(ChangeLine::parse(&key, text)?.into_iter().map(|l| {
                    PageChangeView {
                        url: l.url.to_string(),
                        change: l.change.to_string(),
                        reason: l.reason,
                    }
                }));
            }
            at += line.len() as u64;
        }
    }
    Ok(Json(ChangeList {
        changes,
        next_token,
    }))
}

//! The hand-off of a completed job's diff to the knowledge base, recorded on the job
//! (`pending`, `delivered`, `failed` with the reason and the attempt count) and retryable
//! without crawling again: the diff is read back from what the job stored. The embedded
//! engine, [`Crawler::retry_ingestion`](super::Crawler::retry_ingestion), the job API's
//! retry route and the serverless finalise step all hand off here.

use std::time::Duration;

use tracing::warn;

use crate::error::{Error, ErrorKind, Result};
use crate::job::{IngestionClaim, JobId, JobRecord};
use crate::source::{ChangeLine, RunDiff};
use crate::traits::{Ingestor, JobStore, Sink};

/// How long one embedded hand-off holds a job (a process that dies holding it lets a retry
/// take over once this has passed).
pub const INGEST_LEASE: Duration = Duration::from_secs(15 * 60);

/// What one [`hand_off`] call did.
#[derive(Debug)]
pub enum HandOff {
    /// This call handed the diff over and the knowledge base accepted it.
    Delivered,
    /// This call handed the diff over and the knowledge base refused it (recorded on the
    /// job as `failed` with the error as the reason).
    Failed(Error),
    /// An earlier call delivered it: nothing was handed over.
    AlreadyDelivered,
    /// Another call holds the hand-off: nothing was handed over.
    Busy,
    /// The job is not COMPLETED: nothing to hand over.
    NotCompleted,
}

/// Hands `job`'s diff to `ingestor` once: takes the job's hand-off
/// ([`JobStore::begin_ingestion`]), hands over the diff read back from `sink` (see
/// [`stored_diff`]) and records the outcome. A job already delivered or
/// held by another call is left alone.
pub async fn hand_off(
    jobs: &dyn JobStore,
    sink: &dyn Sink,
    ingestor: &dyn Ingestor,
    job: &JobId,
    lease: Duration,
) -> Result<HandOff> {
    match jobs.begin_ingestion(job, lease).await? {
        IngestionClaim::Mine { .. } => {}
        IngestionClaim::Delivered => return Ok(HandOff::AlreadyDelivered),
        IngestionClaim::Busy => return Ok(HandOff::Busy),
        IngestionClaim::NotCompleted => return Ok(HandOff::NotCompleted),
    }
    let res = async {
        let record = jobs
            .get(job)
            .await?
            .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("no job {job}")))?;
        let diff = stored_diff(sink, &record).await?;
        ingestor.on_completed(&record, &diff).await
    }
    .await;
    jobs.end_ingestion(job, res.as_ref().err().map(ToString::to_string))
        .await?;
    Ok(match res {
        Ok(()) => HandOff::Delivered,
        Err(e) => {
            warn!(job = %job, ingestor = %ingestor, error = %e, "knowledge-base hand-off failed");
            HandOff::Failed(e)
        }
    })
}

/// Hands a COMPLETED job whose hand-off failed (or never ran) to `ingestor` again, with the
/// diff read back from `sink`, and returns the job's record after the attempt (`delivered`,
/// or `failed` with the reason). Refused with [`ErrorKind::Conflict`] when the job is
/// already delivered, another hand-off of it is in progress, or it is not COMPLETED.
pub async fn retry_ingestion(
    jobs: &dyn JobStore,
    sink: &dyn Sink,
    ingestor: &dyn Ingestor,
    job: &JobId,
) -> Result<JobRecord> {
    let conflict = |why: &str| Error::new(ErrorKind::Conflict, format!("job {job}: {why}"));
    match hand_off(jobs, sink, ingestor, job, INGEST_LEASE).await? {
        HandOff::Delivered | HandOff::Failed(_) => {}
        HandOff::AlreadyDelivered => {
            return Err(conflict("already delivered to the knowledge base"))
        }
        HandOff::Busy => return Err(conflict("a hand-off to the knowledge base is in progress")),
        HandOff::NotCompleted => {
            return Err(conflict(
                "not COMPLETED: only a completed job can be handed to the knowledge base",
            ))
        }
    }
    jobs.get(job)
        .await?
        .ok_or_else(|| Error::new(ErrorKind::NotFound, format!("no job {job}")))
}

/// The diff a completed job handed (or would hand) to the knowledge base, read back from
/// what it stored: for a run of a source, its `{run}/changes.jsonl` (added and changed
/// pages upserted, removed ones deleted) with the job's change counters; for a plain
/// crawl, every document of the job, added, listed from the sink a page at a time.
pub async fn stored_diff<'a>(sink: &'a dyn Sink, record: &JobRecord) -> Result<RunDiff<'a>> {
    if record.request.sync.is_none() {
        return RunDiff::of_job(sink, &record.id).await;
    }
    let key = crate::keys::aux_key(&record.id, ChangeLine::FILE)?;
    // Read a window at a time, never whole (its lines grow with the site's changes).
    if sink.get_range(&key, 0, 1).await?.is_none() {
        return Err(Error::new(
            ErrorKind::NotFound,
            format!("job {}: no {key} to hand over again", record.id),
        ));
    }
    RunDiff::of_changes_in(sink, &key, record.progress.changes).await
}

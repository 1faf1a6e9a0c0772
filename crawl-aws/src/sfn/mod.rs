//! The serverless crawl on AWS Step Functions: the state machine ([`state_machine`]) and
//! the fixed `errorType` strings its Retry and Catch match ([`ERR_TRANSIENT`]...).
//!
//! The definition is also checked in as `crawl-aws/deploy/state-machine.asl.json`; a test
//! keeps it identical to [`state_machine`]`(&SfnOptions::default())` (regenerate with
//! `KB_CRAWL_BLESS=1 cargo test -p crawl-aws --features aws-sfn --test it -- asl::`).

mod asl;
mod errors;
#[cfg(feature = "aws-sfn-runner")]
mod runner;

#[cfg(feature = "aws-sfn-runner")]
pub use runner::StepFunctionsRunner;

/// The execution input for `request` as job `job`:
/// `{"job_id": ..., "assistant_id": ..., "request": {"url", "maxDepth", "maxPages", "render"}}`.
/// Only the caller's part of the request travels: the init worker applies its own policy.
pub fn execution_input(
    job: &crawl_core::JobId,
    request: &crawl_core::CrawlRequest,
) -> serde_json::Value {
    serde_json::json!({
        "job_id": job,
        "assistant_id": request.assistant_id,
        "request": crawl_core::StartCrawl::from(request),
    })
}

pub use asl::{
    batch_size_for, state_machine, states, worst_child_secs, SfnOptions, BATCH_BUDGET_SECS,
    BATCH_PLANNED_SECS, EXPRESS_LIMIT_SECS, LATE_ATTEMPT_SECS, MAX_CONCURRENCY,
    MAX_ITEMS_PER_BATCH, PAGE_MAX_SECS, PAGE_PLANNED_SECS, PLANNED_HOST_RATE,
};
pub use errors::{
    HandlerError, ALL_ERRORS, ERR_INGEST_BUSY, ERR_INTERNAL, ERR_INVALID, ERR_JOB_FAILED,
    ERR_STORAGE, ERR_THROTTLED, ERR_TRANSIENT, FINALISE_RETRY_ERRORS, INGEST_LEASE_SECS,
    LAMBDA_SERVICE_ERRORS, RETRYABLE_ERRORS,
};

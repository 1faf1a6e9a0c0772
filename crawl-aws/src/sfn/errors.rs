//! The fixed `errorType` strings the Lambda handlers report, which the state machine's
//! Retry and Catch match exactly.

use std::fmt;

use crawl_core::{Error, ErrorKind};

/// A temporary failure (network, 5xx of a backend, timeout): retried with backoff.
pub const ERR_TRANSIENT: &str = "KbCrawl.Transient";
/// An AWS backend throttled us (DynamoDB, S3 SlowDown): retried with a longer backoff.
pub const ERR_THROTTLED: &str = "KbCrawl.Throttled";
/// The event or the crawl request is invalid: never retried.
pub const ERR_INVALID: &str = "KbCrawl.Invalid";
/// The crawl cannot go on (robots.txt unreachable, root refused by the network policy):
/// never retried; the job ends FAILED with the reason.
pub const ERR_JOB_FAILED: &str = "KbCrawl.JobFailed";
/// A backend failed for good (a storage error that is not temporary): never retried.
pub const ERR_STORAGE: &str = "KbCrawl.Storage";
/// A bug or an impossible state: never retried.
pub const ERR_INTERNAL: &str = "KbCrawl.Internal";
/// Another finalise run holds the job's ingestion hand-off, or died holding it: Finalise
/// retries it for longer than [`INGEST_LEASE_SECS`], so a lease left by a dead run ends and
/// the retry delivers.
pub const ERR_INGEST_BUSY: &str = "KbCrawl.IngestBusy";

/// How long one finalise run holds a job's ingestion hand-off, in seconds. It bounds the
/// ingestor's call (the webhook ingestor gives up after 5 attempts of at most 30 s), not the
/// whole finalise; a run that dies holding it (Lambda timeout or out of memory) delays the
/// hand-off by at most this long.
pub const INGEST_LEASE_SECS: u64 = 300;

/// What Finalise retries beyond [`RETRYABLE_ERRORS`]: the hand-off held by another run, and
/// `Lambda.Unknown` (the function timed out or ran out of memory; finalise is idempotent).
pub const FINALISE_RETRY_ERRORS: &[&str] = &[ERR_INGEST_BUSY, "Lambda.Unknown"];

/// Every `errorType` a handler can report.
pub const ALL_ERRORS: &[&str] = &[
    ERR_TRANSIENT,
    ERR_THROTTLED,
    ERR_INVALID,
    ERR_JOB_FAILED,
    ERR_STORAGE,
    ERR_INTERNAL,
    ERR_INGEST_BUSY,
];

/// Errors the Lambda service itself reports for a direct-ARN task (throttled, or a
/// transient service fault); retried like [`ERR_TRANSIENT`].
pub const LAMBDA_SERVICE_ERRORS: &[&str] = &[
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
];

/// The `errorType`s the state machine retries.
pub const RETRYABLE_ERRORS: &[&str] = &[ERR_TRANSIENT, ERR_THROTTLED];

/// A handler failure: a fixed `errorType` (one of [`ALL_ERRORS`]) and a message. Serializes
/// as the Lambda error contract `{errorType, errorMessage}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HandlerError {
    /// One of the `ERR_*` constants.
    #[serde(rename = "errorType")]
    pub error_type: &'static str,
    /// What went wrong.
    #[serde(rename = "errorMessage")]
    pub error_message: String,
}

impl HandlerError {
    /// An error of `error_type` (one of the `ERR_*` constants).
    pub fn new(error_type: &'static str, message: impl Into<String>) -> Self {
        HandlerError {
            error_type,
            error_message: message.into(),
        }
    }

    /// Whether the state machine retries this error.
    pub fn is_retryable(&self) -> bool {
        RETRYABLE_ERRORS.contains(&self.error_type)
    }
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.error_type, self.error_message)
    }
}

impl std::error::Error for HandlerError {}

impl From<Error> for HandlerError {
    fn from(e: Error) -> Self {
        let msg = e.to_string();
        let t = if e.is_temporary() {
            if msg.contains("Throttl") || msg.contains("SlowDown") {
                ERR_THROTTLED
            } else {
                ERR_TRANSIENT
            }
        } else {
            match e.kind() {
                ErrorKind::InvalidInput | ErrorKind::NotFound => ERR_INVALID,
                ErrorKind::RobotsUnreachable | ErrorKind::PolicyRefused => ERR_JOB_FAILED,
                ErrorKind::Storage | ErrorKind::Conflict => ERR_STORAGE,
                ErrorKind::Network | ErrorKind::Timeout => ERR_TRANSIENT,
                _ => ERR_INTERNAL,
            }
        };
        HandlerError::new(t, msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_errors_map_to_fixed_types() {
        let t = |e: Error| HandlerError::from(e).error_type;
        assert_eq!(t(Error::invalid("x")), ERR_INVALID);
        assert_eq!(
            t(Error::new(ErrorKind::Storage, "x").with_temporary(true)),
            ERR_TRANSIENT
        );
        assert_eq!(
            t(Error::new(ErrorKind::Storage, "ThrottlingException").with_temporary(true)),
            ERR_THROTTLED
        );
        assert_eq!(
            t(Error::new(ErrorKind::RobotsUnreachable, "x")),
            ERR_JOB_FAILED
        );
        let json = serde_json::to_value(HandlerError::new(ERR_INVALID, "m")).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"errorType": ERR_INVALID, "errorMessage": "m"})
        );
    }
}

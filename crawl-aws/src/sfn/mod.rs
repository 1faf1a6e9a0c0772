//! The serverless crawl on AWS Step Functions: the state machine ([`state_machine`]) and
//! the fixed `errorType` strings its Retry and Catch match ([`ERR_TRANSIENT`]...).
//!
//! The definition is also checked in as `crawl-aws/deploy/state-machine.asl.json`; a test
//! keeps it identical to [`state_machine`]`(&SfnOptions::default())` (regenerate with
//! `KB_CRAWL_BLESS=1 cargo test -p crawl-aws --features aws-sfn --test asl`).

mod asl;
mod errors;

pub use asl::{state_machine, states, SfnOptions, MAX_CONCURRENCY};
pub use errors::{
    HandlerError, ALL_ERRORS, ERR_INTERNAL, ERR_INVALID, ERR_JOB_FAILED, ERR_STORAGE,
    ERR_THROTTLED, ERR_TRANSIENT, LAMBDA_SERVICE_ERRORS, RETRYABLE_ERRORS,
};

//! crawl-aws's integration tests, one test binary: each file of `tests/` is a module here,
//! behind the features it needs (one link of the AWS SDKs instead of one a file). A test is
//! named `file::test_name`: `cargo test -p crawl-aws --all-features --test it -- asl::`.
//! `sfn_e2e.rs` and `sfn_cost.rs` stay binaries of their own (`--test sfn_e2e`,
//! `--test sfn_cost`): scripts/test.sh runs them in its second lane.

#![allow(unreachable_pub)]

#[cfg(all(feature = "aws-s3", feature = "aws-dynamodb"))]
mod common;
#[cfg(feature = "agentcore")]
mod kb_host;

#[cfg(feature = "aws-sfn")]
mod asl;
#[cfg(all(feature = "aws-s3", feature = "aws-dynamodb"))]
mod backends;
#[cfg(all(feature = "aws-s3", feature = "aws-dynamodb"))]
mod conformance;
#[cfg(feature = "agentcore")]
mod kb_agentcore;
#[cfg(feature = "bedrock-kb")]
mod kb_bedrock;
#[cfg(feature = "agentcore")]
mod kb_linked;
#[cfg(feature = "aws-lambda-api")]
mod lambda_api;
#[cfg(feature = "aws-lambda")]
mod lambda_finalise;
#[cfg(feature = "aws-lambda")]
mod lambda_init;
#[cfg(feature = "aws-lambda-chrome")]
mod lambda_render;
#[cfg(all(feature = "aws-scheduler", feature = "aws-s3"))]
mod scheduler;
#[cfg(feature = "aws-lambda-api")]
mod template;

#![doc = include_str!("../README.md")]

pub use crawl_core::*;

/// HTML to markdown extraction (crate `crawl-extract`): main content, metadata and links
/// of a page. The same module as `crawl_core::extract`.
pub use crawl_extract as extract;

/// Embedded storage backends: filesystem sink, moka dedup store, durable redb state.
#[cfg(feature = "fs")]
pub use crawl_store as store;

/// AWS backends (`S3Sink`, `DynamoDedup`, `DynamoJobStore`), behind the `aws`, `aws-s3` and
/// `aws-dynamodb` features; the serverless state machine and handlers behind `aws-sfn` and
/// `aws-lambda`.
#[cfg(any(
    feature = "aws-s3",
    feature = "aws-dynamodb",
    feature = "aws-sfn",
    feature = "aws-lambda"
))]
pub use crawl_aws as aws;

/// The job API: an axum router for crawl jobs per assistant, runners and ingestors.
#[cfg(feature = "api")]
pub use crawl_api as api;

/// The headless-Chromium renderer (crate `crawl-render`).
#[cfg(feature = "render-chrome")]
pub use crawl_render as render;

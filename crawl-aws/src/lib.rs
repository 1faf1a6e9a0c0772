//! kb-crawl backends on AWS.
//!
//! - [`S3Sink`] (feature `aws-s3`): documents and manifest in an S3 bucket.
//! - [`DynamoDedup`], [`DynamoJobStore`] and [`DynamoSourceStore`] (feature `aws-dynamodb`): URL dedup with a TTL
//!   window, and job records with exact page budgets, in DynamoDB.
//! - [`lambda`] (feature `aws-lambda`): the handlers of the serverless crawl; with
//!   `aws-lambda-chrome`, the scrape handler renders with headless Chromium.
//! - [`api`] (feature `aws-lambda-api`): the whole job API (crawl-api's router) as a Lambda
//!   behind an API Gateway HTTP API.
//! - [`sfn`] (feature `aws-sfn`): the Step Functions state machine of the serverless crawl.
//! - [`kb`] (features `agentcore`, `bedrock-kb`): knowledge-base targets, the host's document
//!   contract and Amazon Bedrock Knowledge Bases.
//!
//! Every backend is shared across processes ([`crawl_core::Capabilities::SHARED`]), so a
//! crawl can be spread over many Lambda invocations. Builders take an endpoint override for
//! local stand-ins such as moto.

#[cfg(feature = "aws-lambda-api")]
pub mod api;
#[cfg(any(feature = "aws-s3", feature = "aws-dynamodb"))]
mod config;
#[cfg(any(feature = "aws-s3", feature = "aws-dynamodb"))]
mod error;
#[cfg(any(feature = "agentcore", feature = "bedrock-kb"))]
pub mod kb;
#[cfg(feature = "aws-lambda")]
pub mod lambda;
#[cfg(feature = "aws-s3")]
mod s3;
#[cfg(feature = "aws-scheduler")]
pub mod scheduler;
#[cfg(feature = "aws-sfn")]
pub mod sfn;

#[cfg(feature = "aws-s3")]
pub use s3::{S3Sink, S3SinkBuilder, MAX_PREFIX_BYTES, WORKING_STATE_PREFIX, WORKING_STATE_TAG};
#[cfg(feature = "aws-dynamodb")]
mod dynamo;

#[cfg(feature = "aws-dynamodb")]
pub use dynamo::{
    DynamoBuilder, DynamoDedup, DynamoHostLimiter, DynamoJobStore, DynamoSourceStore,
    ASSISTANT_INDEX, TENANT_INDEX,
};

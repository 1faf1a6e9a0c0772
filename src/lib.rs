//! kb-crawl facade.
pub use crawl_core::*;

/// AWS backends (`S3Sink`, `DynamoDedup`, `DynamoJobStore`), behind the `aws`, `aws-s3` and
/// `aws-dynamodb` features.
#[cfg(any(feature = "aws-s3", feature = "aws-dynamodb"))]
pub use crawl_aws as aws;

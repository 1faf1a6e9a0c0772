//! Set-up of the unit tests that run against a local DynamoDB stand-in (moto).

use crawl_core::JobId;

use super::{DynamoDedup, DynamoJobStore};

/// moto's endpoint, or `None` (skipped) unless `KB_CRAWL_REQUIRE_SERVICES=1`.
pub(crate) fn endpoint() -> Option<String> {
    match std::env::var("KB_CRAWL_AWS_ENDPOINT") {
        Ok(e) if !e.trim().is_empty() => Some(e),
        _ => {
            assert!(
                std::env::var("KB_CRAWL_REQUIRE_SERVICES").as_deref() != Ok("1"),
                "KB_CRAWL_AWS_ENDPOINT not set but KB_CRAWL_REQUIRE_SERVICES=1"
            );
            println!("SKIPPED: KB_CRAWL_AWS_ENDPOINT not set");
            None
        }
    }
}

/// A table name no other test uses (moto's state is shared by parallel tests).
pub(crate) fn unique(kind: &str) -> String {
    format!("kbc-unit-{kind}-{}", &JobId::new().as_str()[4..])
}

/// A dedup store on a fresh table.
pub(crate) async fn dedup(endpoint: &str) -> DynamoDedup {
    let d = DynamoDedup::builder()
        .table(unique("dedup"))
        .endpoint_url(endpoint)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .build()
        .await
        .unwrap();
    d.create_table_if_missing().await.unwrap();
    d
}

/// A job store on a fresh table.
#[cfg_attr(not(feature = "aws-lambda"), allow(dead_code))] // The job store's tests need aws-lambda.
pub(crate) async fn jobs(endpoint: &str) -> DynamoJobStore {
    let j = DynamoJobStore::builder()
        .table(unique("jobs"))
        .endpoint_url(endpoint)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .build()
        .await
        .unwrap();
    j.create_table_if_missing().await.unwrap();
    j
}

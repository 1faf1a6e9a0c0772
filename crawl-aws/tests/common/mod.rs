//! Shared set-up of the tests against a local AWS stand-in (moto).

#![allow(dead_code, unreachable_pub)]

pub mod recorder;

use std::sync::Arc;

use crawl_aws::{DynamoDedup, DynamoJobStore, S3Sink};
use crawl_core::clock::DynClock;
use crawl_core::JobId;

/// The stand-in's endpoint, or `None` (after saying so) when the test must be skipped.
/// With `KB_CRAWL_REQUIRE_SERVICES=1` a missing endpoint fails the test instead.
pub fn endpoint() -> Option<String> {
    match std::env::var("KB_CRAWL_AWS_ENDPOINT") {
        Ok(e) if !e.trim().is_empty() => Some(e),
        _ => {
            assert!(
                std::env::var("KB_CRAWL_REQUIRE_SERVICES").as_deref() != Ok("1"),
                "KB_CRAWL_AWS_ENDPOINT not set but KB_CRAWL_REQUIRE_SERVICES=1 \
                 (start moto with scripts/moto.sh start; eval \"$(scripts/moto.sh env)\")"
            );
            println!("SKIPPED: KB_CRAWL_AWS_ENDPOINT not set (start moto with scripts/moto.sh)");
            None
        }
    }
}

/// A name no other test uses (moto's state is global and shared by parallel tests).
pub fn unique(kind: &str) -> String {
    format!("kbc-{kind}-{}", &JobId::new().as_str()[4..])
}

/// An S3 sink on a fresh bucket.
pub async fn sink(endpoint: &str, prefix: &str) -> S3Sink {
    let s = sink_of(endpoint, &unique("b"), prefix).await;
    s.create_bucket_if_missing().await.expect("create bucket");
    s
}

/// Another S3 sink (as another process would have) on an existing bucket.
pub async fn sink_of(endpoint: &str, bucket: &str, prefix: &str) -> S3Sink {
    S3Sink::builder()
        .bucket(bucket)
        .prefix(prefix)
        .endpoint_url(endpoint)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .build()
        .await
        .expect("build sink")
}

/// A dedup store on a fresh table.
pub async fn dedup(endpoint: &str, clock: Option<DynClock>) -> DynamoDedup {
    let mut b = DynamoDedup::builder()
        .table(unique("dedup"))
        .endpoint_url(endpoint)
        .region("us-east-1")
        .static_credentials("testing", "testing");
    if let Some(c) = clock {
        b = b.clock(c);
    }
    let d = b.build().await.expect("build dedup");
    d.create_table_if_missing().await.expect("create table");
    d
}

/// A job store on a fresh table.
pub async fn jobs(endpoint: &str) -> DynamoJobStore {
    let s = DynamoJobStore::builder()
        .table(unique("jobs"))
        .endpoint_url(endpoint)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .build()
        .await
        .expect("build job store");
    s.create_table_if_missing().await.expect("create table");
    s
}

/// A source store on a fresh table.
pub async fn sources(endpoint: &str) -> crawl_aws::DynamoSourceStore {
    let s = crawl_aws::DynamoSourceStore::builder()
        .table(unique("sources"))
        .endpoint_url(endpoint)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .build()
        .await
        .expect("build source store");
    s.create_table_if_missing().await.expect("create table");
    s
}

/// Shorthand for `Arc::new`.
pub fn arc<T>(t: T) -> Arc<T> {
    Arc::new(t)
}

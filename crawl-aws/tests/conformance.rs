//! The crawl-core conformance suite against moto over real HTTP, with the real SDK clients.
//! Needs `KB_CRAWL_AWS_ENDPOINT` (see `scripts/moto.sh`); skipped without it unless
//! `KB_CRAWL_REQUIRE_SERVICES=1`.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use crawl_core::clock::ManualClock;
use crawl_core::conformance::{
    dedup_suite, dedup_ttl_window, jobs_suite, sink_suite, source_store_suite,
};
use time::OffsetDateTime;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s3_sink_passes_the_sink_suite() {
    let Some(ep) = common::endpoint() else { return };
    sink_suite(Arc::new(common::sink(&ep, "kb/docs").await)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn s3_sink_at_bucket_root_passes_the_sink_suite() {
    let Some(ep) = common::endpoint() else { return };
    sink_suite(Arc::new(common::sink(&ep, "").await)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dynamo_dedup_passes_the_dedup_suite() {
    let Some(ep) = common::endpoint() else { return };
    dedup_suite(Arc::new(common::dedup(&ep, None).await)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dynamo_dedup_enforces_the_ttl_window_with_an_injected_clock() {
    let Some(ep) = common::endpoint() else { return };
    let clock = Arc::new(ManualClock::new(OffsetDateTime::now_utc()));
    let ttl = Duration::from_secs(24 * 3600);
    let d = common::dedup(&ep, Some(Arc::clone(&clock) as _)).await;
    dedup_ttl_window(&d, &clock, ttl).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dynamo_job_store_passes_the_jobs_suite() {
    let Some(ep) = common::endpoint() else { return };
    jobs_suite(Arc::new(common::jobs(&ep).await)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dynamo_source_store_passes_the_source_suite() {
    let Some(ep) = common::endpoint() else { return };
    source_store_suite(Arc::new(common::sources(&ep).await)).await;
}

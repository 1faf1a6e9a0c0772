//! The crawl's state machine in Amazon States Language, generated from code.

use serde_json::{json, Value};

use super::errors::{
    ERR_JOB_FAILED, ERR_THROTTLED, ERR_TRANSIENT, FINALISE_RETRY_ERRORS, LAMBDA_SERVICE_ERRORS,
};

/// The largest `MaxConcurrency` of the scrape map (and its default): with 2 requests per
/// second per host, more Lambdas only wait for their slot.
pub const MAX_CONCURRENCY: u32 = 50;

/// The host's rate the batch size is planned for (requests per second; the worker's
/// default policy).
pub const PLANNED_HOST_RATE: f64 = 2.0;

/// The time a batch of pages is planned to take, in seconds: well inside Express's
/// 5-minute limit. The scrape handler also stops starting pages once the batch's child
/// execution has run [`BATCH_BUDGET_SECS`], for slow origins.
pub const BATCH_PLANNED_SECS: f64 = 120.0;

/// Express's limit on a child execution's duration, in seconds.
pub const EXPRESS_LIMIT_SECS: f64 = 300.0;

/// The batch's time budget, in seconds from the start of its Express child execution (all
/// its attempts): no page is started after it (`lambda::BATCH_TIME_BUDGET`).
pub const BATCH_BUDGET_SECS: u64 = 150;

/// The longest a page started just before the budget runs, in seconds: its fetch timeout
/// (30 s) times its 3 attempts, their backoff (5 s), and the host slot's wait at
/// [`MAX_CONCURRENCY`] workers sharing one host at [`PLANNED_HOST_RATE`] (25 s).
pub const PAGE_MAX_SECS: f64 = 30.0 * 3.0 + 5.0 + MAX_CONCURRENCY as f64 / PLANNED_HOST_RATE;

/// An attempt of a batch past its budget, in seconds: it starts no page, only reads the
/// job, robots and the batch's earlier report and writes the report (a cold start
/// included).
pub const LATE_ATTEMPT_SECS: f64 = 3.0;

/// The longest the Express child of a batch can run under `definition`'s ScrapePage Retry,
/// in seconds: the budget, the page started just before it ([`PAGE_MAX_SECS`]), then every
/// retry's largest delay (no jitter) and a late attempt ([`LATE_ATTEMPT_SECS`]) each. A test
/// checks it stays within [`EXPRESS_LIMIT_SECS`].
pub fn worst_child_secs(definition: &Value) -> f64 {
    let task =
        &definition["States"][states::SCRAPE_LEVEL]["ItemProcessor"]["States"][states::SCRAPE_PAGE];
    let mut secs = BATCH_BUDGET_SECS as f64 + PAGE_MAX_SECS;
    for rule in task["Retry"].as_array().into_iter().flatten() {
        let interval = rule["IntervalSeconds"].as_f64().unwrap_or(1.0);
        let backoff = rule["BackoffRate"].as_f64().unwrap_or(2.0);
        let cap = rule["MaxDelaySeconds"].as_f64().unwrap_or(f64::INFINITY);
        let attempts = rule["MaxAttempts"].as_u64().unwrap_or(3);
        for i in 0..attempts {
            let delay = (interval * backoff.powi(i32::try_from(i).unwrap_or(i32::MAX))).min(cap);
            secs += delay + LATE_ATTEMPT_SECS;
        }
    }
    secs
}

/// A page's own work in a batch, planned: fetch, extract, store take ≈ 0.2 s (measured by
/// tests/sfn_e2e.rs), a Chromium render (render `auto` or `always`, the container-image
/// worker) a few seconds; 5 s covers both, so rendered pages use the same batches.
pub const PAGE_PLANNED_SECS: f64 = 5.0;

/// The largest batch.
pub const MAX_ITEMS_PER_BATCH: u32 = 50;

/// Pages per batch (the `ItemBatcher`'s `MaxItemsPerBatch`) for `max_concurrency` workers
/// sharing one host at [`PLANNED_HOST_RATE`]: each worker's next page waits
/// `max_concurrency / rate` seconds for the host's slot, plus its own work, so
/// `floor(BATCH_PLANNED_SECS / (max_concurrency / rate + PAGE_PLANNED_SECS))`, between 1
/// and [`MAX_ITEMS_PER_BATCH`]: 20 pages for 2 workers, 8 for 20, 4 for 50.
pub fn batch_size_for(max_concurrency: u32) -> u32 {
    let per_page = f64::from(max_concurrency.max(1)) / PLANNED_HOST_RATE + PAGE_PLANNED_SECS;
    let n = (BATCH_PLANNED_SECS / per_page).floor();
    (n as u32).clamp(1, MAX_ITEMS_PER_BATCH)
}

/// State names (stable: execution histories and alarms refer to them).
pub mod states {
    /// Validates the request, fetches robots.txt once, writes level 0.
    pub const INIT: &str = "Init";
    /// Whether the current level has pages.
    pub const HAS_NEXT: &str = "HasNext";
    /// Distributed Map over the level's URL list.
    pub const SCRAPE_LEVEL: &str = "ScrapeLevel";
    /// One batch of pages (inside the map: the Express child's one Task).
    pub const SCRAPE_PAGE: &str = "ScrapePage";
    /// Counts the level's pages and admits the next level.
    pub const PLAN: &str = "Plan";
    /// Template pass, manifest, job COMPLETED.
    pub const FINALISE: &str = "Finalise";
    /// Success.
    pub const DONE: &str = "Done";
    /// Records the failure on the job.
    pub const MARK_FAILED: &str = "MarkFailed";
    /// Failure.
    pub const FAILED: &str = "Failed";
}

/// Settings of the generated state machine. The function fields are Lambda ARNs; the
/// defaults are `${...}` placeholders for CloudFormation `DefinitionSubstitutions`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SfnOptions {
    /// The init handler's ARN.
    pub init_function: String,
    /// The scrape-page handler's ARN.
    pub scrape_function: String,
    /// The plan-next-level handler's ARN.
    pub plan_function: String,
    /// The finalise handler's ARN.
    pub finalise_function: String,
    /// The mark-failed handler's ARN.
    pub mark_failed_function: String,
    /// Batches scraped at once (capped at [`MAX_CONCURRENCY`]).
    pub max_concurrency: u32,
    /// Pages per batch: one Express child execution and one scrape invocation each
    /// ([`batch_size_for`] of `max_concurrency` unless set).
    pub max_items_per_batch: u32,
    /// Scrape items that may fail (after retries) before the map fails; a failed item is
    /// counted as a skipped page (`worker_failed`) by the plan step.
    pub tolerated_failure_count: u32,
}

impl Default for SfnOptions {
    fn default() -> Self {
        SfnOptions {
            init_function: "${InitFunctionArn}".into(),
            scrape_function: "${ScrapeFunctionArn}".into(),
            plan_function: "${PlanFunctionArn}".into(),
            finalise_function: "${FinaliseFunctionArn}".into(),
            mark_failed_function: "${MarkFailedFunctionArn}".into(),
            max_concurrency: MAX_CONCURRENCY,
            max_items_per_batch: batch_size_for(MAX_CONCURRENCY),
            tolerated_failure_count: 100_000,
        }
    }
}

impl SfnOptions {
    /// Every handler at `prefix` + its name (`init`, `scrape`, `plan`, `finalise`,
    /// `mark-failed`), e.g. `arn:aws:lambda:us-east-1:123456789012:function:kb-crawl-`.
    pub fn with_function_prefix(mut self, prefix: &str) -> Self {
        self.init_function = format!("{prefix}init");
        self.scrape_function = format!("{prefix}scrape");
        self.plan_function = format!("{prefix}plan");
        self.finalise_function = format!("{prefix}finalise");
        self.mark_failed_function = format!("{prefix}mark-failed");
        self
    }

    /// Sets the map concurrency (capped at [`MAX_CONCURRENCY`], at least 1), and the batch
    /// size to [`batch_size_for`] it.
    pub fn with_max_concurrency(mut self, n: u32) -> Self {
        self.max_concurrency = n.clamp(1, MAX_CONCURRENCY);
        self.max_items_per_batch = batch_size_for(self.max_concurrency);
        self
    }

    /// Sets the pages per batch (1 to [`MAX_ITEMS_PER_BATCH`]).
    pub fn with_max_items_per_batch(mut self, n: u32) -> Self {
        self.max_items_per_batch = n.clamp(1, MAX_ITEMS_PER_BATCH);
        self
    }
}

fn retry() -> Value {
    let mut transient: Vec<&str> = vec![ERR_TRANSIENT];
    transient.extend_from_slice(LAMBDA_SERVICE_ERRORS);
    json!([
        {
            "ErrorEquals": [ERR_THROTTLED],
            "IntervalSeconds": 2,
            "MaxAttempts": 8,
            "BackoffRate": 2.0,
            "MaxDelaySeconds": 60,
            "JitterStrategy": "FULL"
        },
        {
            "ErrorEquals": transient,
            "IntervalSeconds": 1,
            "MaxAttempts": 4,
            "BackoffRate": 2.0,
            "MaxDelaySeconds": 30,
            "JitterStrategy": "FULL"
        }
    ])
}

/// The ScrapePage Task's Retry, inside an Express child: short and few, so that the child's
/// attempts, the budget's last page included, end inside Express's 5 minutes
/// ([`worst_child_secs`]). A batch that still fails leaves the report of the pages it
/// finished; the plan step counts the rest as `worker_failed`.
fn scrape_retry() -> Value {
    let mut transient: Vec<&str> = vec![ERR_TRANSIENT];
    transient.extend_from_slice(LAMBDA_SERVICE_ERRORS);
    json!([
        {
            "ErrorEquals": [ERR_THROTTLED],
            "IntervalSeconds": 1,
            "MaxAttempts": 2,
            "BackoffRate": 2.0,
            "MaxDelaySeconds": 4,
            "JitterStrategy": "FULL"
        },
        {
            "ErrorEquals": transient,
            "IntervalSeconds": 1,
            "MaxAttempts": 2,
            "BackoffRate": 2.0,
            "MaxDelaySeconds": 4,
            "JitterStrategy": "FULL"
        }
    ])
}

/// Finalise's Retry: [`retry`] plus [`FINALISE_RETRY_ERRORS`] for about ten minutes (twice the
/// ingestion lease on average under full jitter; 20 minutes at most).
fn finalise_retry() -> Value {
    let mut rules = retry();
    if let Some(list) = rules.as_array_mut() {
        list.push(json!({
            "ErrorEquals": FINALISE_RETRY_ERRORS,
            "IntervalSeconds": 30,
            "MaxAttempts": 12,
            "BackoffRate": 1.5,
            "MaxDelaySeconds": 120,
            "JitterStrategy": "FULL"
        }));
    }
    rules
}

fn catch_to_mark_failed() -> Value {
    json!([{ "ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": states::MARK_FAILED }])
}

fn task(resource: &str, next: &str) -> Value {
    json!({
        "Type": "Task",
        "Resource": resource,
        "Retry": retry(),
        "Catch": catch_to_mark_failed(),
        "Next": next
    })
}

/// The crawl's Standard workflow: `Init → HasNext? → ScrapeLevel (Distributed Map over the
/// level's URL list in S3) → Plan → HasNext? … → Finalise`, every failure caught into
/// `MarkFailed → Failed`. Input: `{"job_id": ..., "request": {...}}`.
///
/// The map's `ItemBatcher` groups the level's pages by `max_items_per_batch`; each batch is
/// one EXPRESS child execution whose one Task is one scrape invocation
/// (the scrape handler takes `{"Items": [...]}`). moto runs neither ItemBatcher nor
/// Express children: the serverless e2e tests rewrite this definition for it (Standard
/// children, and the same grouping done by their harness on the ItemReader's read), so the
/// handler code path is the one deployed.
pub fn state_machine(opts: &SfnOptions) -> Value {
    // The child's start time goes with the batch: the handler's time budget runs from it,
    // so a retried batch does not start the clock again.
    let scrape = json!({
        "Type": "Task",
        "Resource": opts.scrape_function,
        "Parameters": {
            "Items.$": "$.Items",
            "ExecutionStartTime.$": "$$.Execution.StartTime"
        },
        "Retry": scrape_retry(),
        "End": true
    });
    json!({
        "Comment": "kb-crawl: one website crawled breadth first, a Distributed Map per depth",
        "StartAt": states::INIT,
        "States": {
            (states::INIT): task(&opts.init_function, states::HAS_NEXT),
            (states::HAS_NEXT): {
                "Type": "Choice",
                "Choices": [
                    { "Variable": "$.has_next", "BooleanEquals": true, "Next": states::SCRAPE_LEVEL }
                ],
                "Default": states::FINALISE
            },
            (states::SCRAPE_LEVEL): {
                "Type": "Map",
                "ItemReader": {
                    "Resource": "arn:aws:states:::s3:getObject",
                    "ReaderConfig": { "InputType": "JSON" },
                    "Parameters": { "Bucket.$": "$.bucket", "Key.$": "$.level_key" }
                },
                "ItemBatcher": {
                    "MaxItemsPerBatch": opts.max_items_per_batch.clamp(1, MAX_ITEMS_PER_BATCH)
                },
                "ItemProcessor": {
                    "ProcessorConfig": { "Mode": "DISTRIBUTED", "ExecutionType": "EXPRESS" },
                    "StartAt": states::SCRAPE_PAGE,
                    "States": { (states::SCRAPE_PAGE): scrape }
                },
                "MaxConcurrency": opts.max_concurrency.clamp(1, MAX_CONCURRENCY),
                "ToleratedFailureCount": opts.tolerated_failure_count,
                "ResultPath": null,
                "Catch": catch_to_mark_failed(),
                "Next": states::PLAN
            },
            (states::PLAN): task(&opts.plan_function, states::HAS_NEXT),
            (states::FINALISE): {
                "Type": "Task",
                "Resource": opts.finalise_function,
                "Retry": finalise_retry(),
                "Catch": catch_to_mark_failed(),
                "Next": states::DONE
            },
            (states::DONE): { "Type": "Succeed" },
            (states::MARK_FAILED): {
                "Type": "Task",
                "Resource": opts.mark_failed_function,
                "Retry": retry(),
                "Catch": [{ "ErrorEquals": ["States.ALL"], "ResultPath": "$.mark_failed_error", "Next": states::FAILED }],
                "Next": states::FAILED
            },
            (states::FAILED): {
                "Type": "Fail",
                "Error": ERR_JOB_FAILED,
                "Cause": "the crawl failed; the job record says why"
            }
        }
    })
}

//! What a serverless crawl costs on AWS, priced from counted calls: the AWS requests, Lambda
//! run times and Step Functions transitions that `tests/sfn_cost.rs` counted for the fixture
//! site and generated 50-, 200- and 500-page sites (first crawl and unchanged re-sync),
//! stored in `crawl-aws/docs/calls.json`, times the list prices below, next to the feature
//! request's estimate. Run: `cargo run -p crawl-aws --example cost`
//! (optionally `-- CONCURRENCY RATE`: scrape workers at once on one host, and its requests
//! per second; by default the counted runs' map concurrency, 2, and 2 requests/s).
//!
//! Regenerate the counts: `KB_CRAWL_BLESS=1 cargo test -p crawl-aws --all-features --test
//! sfn_cost -- --nocapture` (moto needed, see scripts/moto.sh).

use serde_json::Value;

/// List prices, us-east-1, in USD, as on the AWS pricing pages (lambda, step-functions, s3,
/// dynamodb) on 2026-12-01; no free tier.
mod price {
    /// The date of these prices.
    pub(super) const AS_OF: &str = "2026-12-01";
    /// Lambda arm64, per GB-second.
    pub(super) const LAMBDA_GB_S: f64 = 0.000_013_333_4;
    /// Lambda, per request.
    pub(super) const LAMBDA_REQUEST: f64 = 0.20 / 1e6;
    /// Step Functions Standard, per state transition (a Distributed Map also bills one per
    /// child execution it starts, Express children included).
    pub(super) const SFN_TRANSITION: f64 = 0.025 / 1e3;
    /// Step Functions Express, per request (execution started).
    pub(super) const EXPRESS_REQUEST: f64 = 1.00 / 1e6;
    /// Step Functions Express, per GB-second (first tier; billed in 64 MB, 100 ms steps; a
    /// child with one Task and small payloads is billed at the 64 MB minimum).
    pub(super) const EXPRESS_GB_S: f64 = 0.000_016_67;
    /// S3 Standard PUT, COPY, POST, LIST requests.
    pub(super) const S3_PUT: f64 = 0.005 / 1e3;
    /// S3 Standard GET and other requests.
    pub(super) const S3_GET: f64 = 0.0004 / 1e3;
    /// DynamoDB on demand, per write request unit.
    pub(super) const DDB_WRITE: f64 = 0.625 / 1e6;
    /// DynamoDB on demand, per read request unit.
    pub(super) const DDB_READ: f64 = 0.125 / 1e6;
}

/// Work of one scrape without waiting for the host's slot: the mean measured by
/// tests/sfn_e2e.rs (`MEASURED: scrape`, no rate limit, debug build, moto on 127.0.0.1).
/// The counted runs' scrape times include the limiter's waits at their test rate, so they
/// are not used for the scrape line.
const SCRAPE_WORK_S: f64 = 0.187;

/// The counts, as the test wrote them.
const CALLS: &str = include_str!("../docs/calls.json");

/// Memory of each handler in crawl-aws/deploy/template.yaml (MB); scrape is the
/// `ScrapeMemoryMb` parameter's default.
fn memory_mb(handler: &str) -> f64 {
    match handler {
        "plan" | "finalise" => 512.0,
        "mark-failed" => 128.0,
        _ => 256.0,
    }
}

/// The feature request's estimate for a crawl of this many pages.
fn estimate(pages: u64) -> Option<f64> {
    match pages {
        50 => Some(0.15),
        200 => Some(0.50),
        500 => Some(1.20),
        _ => None,
    }
}

#[derive(Debug, Default)]
struct Bill {
    lambda: f64,
    sfn: f64,
    s3: f64,
    dynamodb: f64,
}

impl Bill {
    fn total(&self) -> f64 {
        self.lambda + self.sfn + self.s3 + self.dynamodb
    }
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// Prices one counted run. A scrape is billed `max(work, concurrency / rate)` seconds per
/// page: that many workers share one host's rate, so each waits (billed) for its slot.
/// Each batch is one Express child whose one Task is its scrape invocation: the children
/// last as long as their invocations, so their duration is billed on the same seconds
/// (the counted `express_ms` are at the test's 20 requests/s, printed beside).
fn price_run(run: &Value, concurrency: f64, rate: f64) -> Bill {
    let calls = &run["calls"];
    let ops = &calls["ops"];
    let op = |k: &str| f(&ops[k]);
    let scrape_secs = f(&run["pages_total"]) * SCRAPE_WORK_S.max(concurrency / rate);
    let mut lambda = 0.0;
    if let Some(handlers) = calls["lambda"].as_object() {
        for (name, l) in handlers {
            let secs = if name == "scrape" {
                scrape_secs
            } else {
                f(&l["ms"]) / 1000.0
            };
            lambda += secs * memory_mb(name) / 1024.0 * price::LAMBDA_GB_S
                + f(&l["invocations"]) * price::LAMBDA_REQUEST;
        }
    }
    let express_secs = match f(&run["express_requests"]) {
        0.0 => 0.0,
        _ => scrape_secs,
    };
    let express_gb_s = express_secs * (64.0 / 1024.0);
    let sfn = f(&run["sfn_transitions"]) * price::SFN_TRANSITION
        + f(&run["express_requests"]) * price::EXPRESS_REQUEST
        + express_gb_s * price::EXPRESS_GB_S;
    let put_tier = ["PutObject", "CopyObject", "DeleteObjects", "ListObjectsV2"]
        .iter()
        .map(|o| op(&format!("s3 {o}")))
        .sum::<f64>();
    let get_tier = op("s3 GetObject") + op("s3 HeadObject");
    let s3 = put_tier * price::S3_PUT + get_tier * price::S3_GET;
    let dynamodb = f(&calls["dynamodb_write_units"]) * price::DDB_WRITE
        + f(&calls["dynamodb_read_units"]) * price::DDB_READ;
    Bill {
        lambda,
        sfn,
        s3,
        dynamodb,
    }
}

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let counted: Value = match serde_json::from_str(CALLS) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("crawl-aws/docs/calls.json: {e}");
            std::process::exit(1);
        }
    };
    let counted_concurrency = counted["runs"][0]["max_concurrency"].as_f64();
    let concurrency = args.first().copied().or(counted_concurrency).unwrap_or(2.0);
    let rate = args.get(1).copied().unwrap_or(2.0);
    if let Some(c) = counted_concurrency.filter(|c| *c != concurrency) {
        println!(
            "note: the calls were counted at a map concurrency of {c} (its batch size); only \
             the scrape's billed wait follows {concurrency}."
        );
    }
    println!(
        "Priced from counted calls ({}), list prices us-east-1 of {}; scrape billed at least \
         {concurrency} workers / {rate} req/s per page.",
        counted["measured_by"].as_str().unwrap_or("?"),
        price::AS_OF
    );
    println!(
        "{:<10} {:<7} {:>6} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "site",
        "run",
        "pages",
        "batches",
        "counted s",
        "lambda",
        "sfn",
        "s3",
        "dynamodb",
        "total",
        "request"
    );
    for run in counted["runs"].as_array().into_iter().flatten() {
        let b = price_run(run, concurrency, rate);
        let pages = run["pages_total"].as_u64().unwrap_or(0);
        let est = match estimate(pages) {
            Some(e) if run["site"] == "generated" => format!("{e:.2}"),
            _ => "-".into(),
        };
        println!(
            "{:<10} {:<7} {:>6} {:>8} {:>9.1} {:>9.5} {:>9.5} {:>9.5} {:>9.5} {:>9.4} {:>9}",
            run["site"].as_str().unwrap_or("?"),
            run["kind"].as_str().unwrap_or("?"),
            pages,
            run["express_requests"].as_u64().unwrap_or(0),
            f(&run["express_ms"]) / 1000.0,
            b.lambda,
            b.sfn,
            b.s3,
            b.dynamodb,
            b.total(),
            est
        );
    }
}

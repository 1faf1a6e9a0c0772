//! What a serverless crawl costs on AWS (us-east-1 list prices, arm64 Lambda), next to the
//! feature request's estimate. Run: `cargo run -p crawl-aws --example cost`.
//!
//! Per-page figures are the ones measured by `tests/sfn_e2e.rs` (printed as `MEASURED:`);
//! override with `cost -- SCRAPE_MS MEMORY_MB CONCURRENCY`.

/// Lambda, arm64: USD per GB-second, and per request.
const LAMBDA_GB_S: f64 = 0.000_013_333_4;
const LAMBDA_REQ: f64 = 0.20 / 1e6;
/// Step Functions Standard: USD per state transition.
const SFN_TRANSITION: f64 = 0.025 / 1000.0;
/// S3 Standard: PUT and GET requests.
const S3_PUT: f64 = 0.005 / 1000.0;
const S3_GET: f64 = 0.0004 / 1000.0;
/// DynamoDB on demand: write and read request units.
const DDB_WRITE: f64 = 0.625 / 1e6;
const DDB_READ: f64 = 0.125 / 1e6;

/// Measured on the fixture site (tests/sfn_e2e.rs, debug build, moto on 127.0.0.1): mean
/// scrape-handler time per page, and the plan / init / finalise runs.
const SCRAPE_MS: f64 = 187.0;
const PLAN_MS_PER_PAGE: f64 = 227.0 * 4.0 / 18.0;
const FIXED_MS: f64 = 106.0 + 297.0;
/// Requests per page (see docs/cost.md for the count).
const S3_PUTS_PER_PAGE: f64 = 5.0;
const S3_GETS_PER_PAGE: f64 = 5.0;
const DDB_WRITES_PER_PAGE: f64 = 45.0;
const DDB_READS_PER_PAGE: f64 = 4.0;
/// State transitions per page (child execution start, task, end) and per level.
const TRANSITIONS_PER_PAGE: f64 = 3.0;
const TRANSITIONS_PER_LEVEL: f64 = 4.0;

struct Model {
    scrape_ms: f64,
    memory_mb: f64,
    concurrency: f64,
    rate: f64,
}

impl Model {
    /// Billed seconds per page: the work, or the wait for the host's next slot when more
    /// workers run than the host's rate can feed (each worker then sleeps, billed).
    fn page_seconds(&self) -> f64 {
        (self.scrape_ms / 1000.0).max(self.concurrency / self.rate)
    }

    fn cost(&self, pages: f64, levels: f64) -> (f64, f64, f64, f64, f64) {
        let gb = self.memory_mb / 1024.0;
        let lambda = pages * self.page_seconds() * gb * LAMBDA_GB_S
            + (pages * PLAN_MS_PER_PAGE + FIXED_MS) / 1000.0 * 0.5 * LAMBDA_GB_S
            + (pages + levels + 2.0) * LAMBDA_REQ;
        let sfn =
            (pages * TRANSITIONS_PER_PAGE + levels * TRANSITIONS_PER_LEVEL + 4.0) * SFN_TRANSITION;
        let s3 = pages * (S3_PUTS_PER_PAGE * S3_PUT + S3_GETS_PER_PAGE * S3_GET);
        let ddb = pages * (DDB_WRITES_PER_PAGE * DDB_WRITE + DDB_READS_PER_PAGE * DDB_READ);
        (lambda, sfn, s3, ddb, lambda + sfn + s3 + ddb)
    }
}

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let arg = |i: usize, d: f64| args.get(i).copied().unwrap_or(d);
    let rust = Model {
        scrape_ms: arg(0, SCRAPE_MS),
        memory_mb: arg(1, 256.0),
        concurrency: arg(2, 2.0),
        rate: 2.0,
    };
    // The feature request's design: a 3 GB Lambda starting Chromium for every page
    // (≈ 4 s a page: cold browser start, render, network idle).
    let chromium = Model {
        scrape_ms: 4000.0,
        memory_mb: 3072.0,
        concurrency: 2.0,
        rate: 2.0,
    };
    println!(
        "HTTP-first Rust worker: {:.0} ms/page, {} MB, {} concurrent, {} req/s per host",
        rust.scrape_ms, rust.memory_mb, rust.concurrency, rust.rate
    );
    println!(
        "{:>6} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12} {:>10}",
        "pages", "lambda", "sfn", "s3", "dynamodb", "total", "chromium", "request"
    );
    for (pages, estimate) in [(50.0, 0.15), (200.0, 0.50), (500.0, 1.20)] {
        let levels = 4.0;
        let (l, s, s3, d, t) = rust.cost(pages, levels);
        let (.., tc) = chromium.cost(pages, levels);
        println!(
            "{pages:>6} {l:>10.5} {s:>10.5} {s3:>10.5} {d:>10.5} {t:>10.4} {tc:>12.4} {estimate:>10.2}"
        );
    }
    let (l, .., t) = rust.cost(500.0, 4.0);
    let (lc, .., tc) = chromium.cost(500.0, 4.0);
    println!(
        "500 pages: Chromium-per-page costs {:.1}x in total, {:.0}x in Lambda compute \
         ({lc:.4} vs {l:.4} USD)",
        tc / t,
        lc / l
    );
    let wide = Model {
        concurrency: 50.0,
        ..rust
    };
    let (.., tw) = wide.cost(500.0, 4.0);
    println!(
        "500 pages with MaxConcurrency 50 on one host at 2 req/s: {tw:.4} USD \
         (workers sleep {:.0} s each for their slot)",
        wide.page_seconds()
    );
}

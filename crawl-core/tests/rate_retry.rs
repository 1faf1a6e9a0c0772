//! RateLimitLayer, RetryLayer and the assembled politeness stack against local fixtures.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use common::{local_fetcher, Fixture, Hit, Reply};
use crawl_core::politeness::{stack, HostPolicies, RateLimitLayer, RetryLayer, RobotsLayer};
use crawl_core::{
    CrawlRequest, Error, ErrorKind, FetchRequest, FetchResponse, Fetcher, Guardrails, JobId, Result,
};
use tokio::time::Instant;
use url::Url;

/// The timing tests of this file run one at a time: on a 2-core machine, other tests of the
/// same binary running in parallel delay the fixture's clock readings more than the slack.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Slack allowed below the interval, for the gap between a request's start (which the layer
/// spaces exactly) and its arrival at the fixture, which a loaded machine delays unevenly. A
/// broken limiter gives gaps near zero, far below this.
fn slack(interval: Duration) -> Duration {
    (interval / 5).max(Duration::from_millis(15))
}

fn gaps(hits: &[Hit]) -> Vec<Duration> {
    let mut at: Vec<Instant> = hits.iter().map(|h| h.at).collect();
    at.sort();
    at.windows(2).map(|w| w[1] - w[0]).collect()
}

/// Checks arrivals at the fixture against a limiter that spaces request starts `interval`
/// apart. A request that reaches the fixture late (a loaded machine delays arrivals unevenly)
/// shortens the gap after it, not its distance from the first: so the `k`-th arrival after
/// the first must come at least `k` intervals (less the slack) after it, and no gap may be
/// under half an interval (a burst). The exact spacing of starts is tested on tokio's paused
/// clock (`rate_limit_gaps_never_below_interval`).
fn assert_gaps_at_least(hits: &[Hit], interval: Duration) {
    let g = gaps(hits);
    assert!(!g.is_empty());
    let mut since_first = Duration::ZERO;
    for (i, d) in g.iter().enumerate() {
        since_first += *d;
        let k = u32::try_from(i + 1).unwrap();
        assert!(
            since_first + slack(interval) >= interval * k,
            "arrival {k} came {since_first:?} after the first, under {k} × {interval:?}: {g:?}"
        );
        assert!(*d >= interval / 2, "gap {i} is {d:?}, a burst: {g:?}");
    }
}

// The four tests below run on tokio's paused clock with a scripted inner fetcher: what they
// measure is how long the layer makes callers wait, which virtual time gives exactly.

#[tokio::test(start_paused = true)]
async fn rate_limit_gaps_never_below_interval() {
    let inner = Scripted::new(Vec::new());
    let interval = Duration::from_millis(150);
    let l = Arc::new(RateLimitLayer::new(
        Arc::clone(&inner) as Arc<dyn Fetcher>,
        Some(interval),
    ));
    let mut tasks = Vec::new();
    for i in 0..10 {
        let l = Arc::clone(&l);
        let url = Url::parse(&format!("http://example.test/p{i}")).unwrap();
        tasks.push(tokio::spawn(async move {
            l.fetch(&FetchRequest::page(url)).await
        }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    let starts = inner.starts();
    assert_eq!(starts.len(), 10);
    let g: Vec<Duration> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(g.iter().all(|d| *d >= interval), "{g:?}");
}

#[tokio::test(start_paused = true)]
async fn rate_limit_none_is_unlimited() {
    let inner = Scripted::new(Vec::new());
    let l = Arc::new(RateLimitLayer::new(
        Arc::clone(&inner) as Arc<dyn Fetcher>,
        None,
    ));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..8 {
        let l = Arc::clone(&l);
        let url = Url::parse(&format!("http://example.test/p{i}")).unwrap();
        tasks.push(tokio::spawn(async move {
            l.fetch(&FetchRequest::page(url)).await
        }));
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    assert_eq!(inner.calls(), 8);
    assert_eq!(
        start.elapsed(),
        Duration::ZERO,
        "an unlimited layer made callers wait"
    );
}

#[tokio::test(start_paused = true)]
async fn rate_limit_is_per_host() {
    let inner = Scripted::new(Vec::new());
    let l = Arc::new(RateLimitLayer::new(
        Arc::clone(&inner) as Arc<dyn Fetcher>,
        Some(Duration::from_secs(3)),
    ));
    let qa = FetchRequest::page(Url::parse("http://a.example.test/").unwrap());
    let qb = FetchRequest::page(Url::parse("http://b.example.test/").unwrap());
    let qa2 = FetchRequest::page(Url::parse("http://a.example.test/2").unwrap());
    let start = Instant::now();
    let (ra, rb) = tokio::join!(l.fetch(&qa), l.fetch(&qb));
    ra.unwrap();
    rb.unwrap();
    // Two hosts' first requests do not wait for each other...
    assert_eq!(start.elapsed(), Duration::ZERO);
    // ...while a second request to one host waits its interval.
    l.fetch(&qa2).await.unwrap();
    assert!(
        start.elapsed() >= Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn pace_takes_a_slot_like_fetch_for_pages_the_browser_loads() {
    let inner = Scripted::new(Vec::new());
    let l = RateLimitLayer::new(
        Arc::clone(&inner) as Arc<dyn Fetcher>,
        Some(Duration::from_secs(2)),
    );
    let u = Url::parse("http://a.example.test/page").unwrap();
    let start = Instant::now();
    l.fetch(&FetchRequest::page(u.clone())).await.unwrap();
    l.pace(&u, None).await.unwrap();
    assert!(
        start.elapsed() >= Duration::from_secs(2),
        "pace did not wait"
    );
    l.fetch(&FetchRequest::page(u)).await.unwrap();
    assert!(
        start.elapsed() >= Duration::from_secs(4),
        "pace did not take the slot"
    );
    assert_eq!(inner.calls(), 2, "pace must not fetch");
}

/// A site with a robots.txt carrying `Crawl-delay: {delay}`.
async fn delayed_site(delay: &'static str) -> Fixture {
    Fixture::start(move |hit, _| {
        if hit.path == "/robots.txt" {
            Reply::text(&format!("User-agent: *\nCrawl-delay: {delay}\n"))
        } else {
            Reply::html("<p>x</p>")
        }
    })
    .await
}

fn crawl_request(fx: &Fixture, rate: f64, max_crawl_delay: Duration) -> CrawlRequest {
    CrawlRequest::builder(fx.url("/").as_str())
        .rate(Some(rate))
        .allow_private_network(true)
        .user_agent("kb-crawl/0.1 (+test)")
        .max_crawl_delay(max_crawl_delay)
        .guardrails(Guardrails::lifted())
        .build()
        .unwrap()
}

#[tokio::test]
async fn rate_limit_crawl_delay_within_cap_raises_interval() {
    let _serial = SERIAL.lock().await;
    let fx = delayed_site("0.8").await;
    let req = crawl_request(&fx, 2.0, Duration::from_secs(10));
    let f = stack(Arc::new(local_fetcher()), &req);
    let job = JobId::new();
    for i in 0..3 {
        f.fetch(&FetchRequest::page(fx.url(&format!("/p{i}"))).with_job(&job))
            .await
            .unwrap();
    }
    let hits = fx.hits();
    assert_eq!(hits[0].path, "/robots.txt");
    assert_eq!(hits.len(), 4);
    // The robots.txt fetch is itself rate limited, and the crawl delay (800 ms > 500 ms)
    // applies from the first page on.
    assert_gaps_at_least(&hits, Duration::from_millis(800));
}

#[tokio::test]
async fn rate_limit_crawl_delay_above_cap_is_capped() {
    let _serial = SERIAL.lock().await;
    let fx = delayed_site("3600").await;
    let req = crawl_request(&fx, 10.0, Duration::from_millis(300));
    let f = stack(Arc::new(local_fetcher()), &req);
    let job = JobId::new();
    let start = Instant::now();
    for i in 0..3 {
        f.fetch(&FetchRequest::page(fx.url(&format!("/p{i}"))).with_job(&job))
            .await
            .unwrap();
    }
    assert_gaps_at_least(&fx.hits(), Duration::from_millis(300));
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test]
async fn rate_limit_crawl_delay_obeyed_even_when_rate_unlimited() {
    let _serial = SERIAL.lock().await;
    let fx = delayed_site("0.3").await;
    let policies = HostPolicies::new();
    let rate: Arc<dyn Fetcher> = Arc::new(
        RateLimitLayer::new(Arc::new(local_fetcher()), None).with_host_policies(policies.clone()),
    );
    let f = RobotsLayer::new(rate, "kb-crawl").with_host_policies(policies);
    for i in 0..3 {
        f.fetch(&FetchRequest::page(fx.url(&format!("/p{i}"))))
            .await
            .unwrap();
    }
    assert_gaps_at_least(&fx.hits(), Duration::from_millis(300));
}

// --- retry ------------------------------------------------------------------------------

#[tokio::test]
async fn retry_503_with_retry_after_1_then_200_succeeds_after_waiting() {
    let _serial = SERIAL.lock().await;
    let fx = Fixture::start(|_, n| {
        if n == 0 {
            Reply::status(503).header("Retry-After", "1")
        } else {
            Reply::html("<p>ok</p>")
        }
    })
    .await;
    let f = RetryLayer::new(Arc::new(local_fetcher()));
    let start = Instant::now();
    let r = f.fetch(&FetchRequest::page(fx.url("/"))).await.unwrap();
    assert_eq!(r.status, 200);
    assert!(
        start.elapsed() >= Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    let hits = fx.hits();
    assert_eq!(hits.len(), 2);
    assert!(hits[1].at - hits[0].at >= Duration::from_secs(1) - slack(Duration::from_secs(1)));
}

#[tokio::test]
async fn retry_429_with_retry_after_3600_gives_up_quickly() {
    let _serial = SERIAL.lock().await;
    let fx = Fixture::start(|_, _| Reply::status(429).header("Retry-After", "3600")).await;
    let f = RetryLayer::new(Arc::new(local_fetcher()));
    let start = Instant::now();
    let r = f.fetch(&FetchRequest::page(fx.url("/"))).await.unwrap();
    assert_eq!(r.status, 429);
    assert_eq!(fx.hits().len(), 1);
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn retry_reset_then_200_is_retried() {
    let _serial = SERIAL.lock().await;
    let fx = Fixture::start(|_, n| {
        if n == 0 {
            Reply::raw(|s| async move {
                let _ = s.set_zero_linger();
                drop(s);
            })
        } else {
            Reply::html("<p>ok</p>")
        }
    })
    .await;
    let f = RetryLayer::new(Arc::new(local_fetcher()))
        .with_backoff(Duration::from_millis(20), Duration::from_millis(100));
    let r = f.fetch(&FetchRequest::page(fx.url("/"))).await.unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(fx.hits().len(), 2);
}

#[tokio::test]
async fn retry_502_and_504_are_retried() {
    let _serial = SERIAL.lock().await;
    for status in [502u16, 504] {
        let fx = Fixture::start(move |_, n| {
            if n == 0 {
                Reply::status(status)
            } else {
                Reply::html("<p>ok</p>")
            }
        })
        .await;
        let f = RetryLayer::new(Arc::new(local_fetcher()))
            .with_backoff(Duration::from_millis(10), Duration::from_millis(50));
        let r = f.fetch(&FetchRequest::page(fx.url("/"))).await.unwrap();
        assert_eq!(r.status, 200, "{status}");
    }
}

#[tokio::test]
async fn retry_applies_rate_limit_per_attempt() {
    let _serial = SERIAL.lock().await;
    let fx = Fixture::start(|_, n| {
        if n == 0 {
            Reply::status(503).header("Retry-After", "0")
        } else {
            Reply::html("<p>ok</p>")
        }
    })
    .await;
    let rate: Arc<dyn Fetcher> = Arc::new(RateLimitLayer::new(
        Arc::new(local_fetcher()),
        Some(Duration::from_millis(400)),
    ));
    let f = RetryLayer::new(rate);
    f.fetch(&FetchRequest::page(fx.url("/"))).await.unwrap();
    assert_gaps_at_least(&fx.hits(), Duration::from_millis(400));
}

/// A fetcher that replays a script of results and counts calls.
#[derive(Debug)]
struct Scripted {
    script: Mutex<Vec<Result<FetchResponse>>>,
    calls: AtomicUsize,
    starts: Mutex<Vec<Instant>>,
}

impl std::fmt::Display for Scripted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scripted")
    }
}

impl Scripted {
    fn new(script: Vec<Result<FetchResponse>>) -> Arc<Self> {
        Arc::new(Scripted {
            script: Mutex::new(script.into_iter().rev().collect()),
            calls: AtomicUsize::new(0),
            starts: Mutex::new(Vec::new()),
        })
    }
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
    /// When each call began, in order.
    fn starts(&self) -> Vec<Instant> {
        self.starts.lock().unwrap().clone()
    }
}

#[async_trait]
impl Fetcher for Scripted {
    async fn fetch(&self, req: &FetchRequest) -> Result<FetchResponse> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.starts.lock().unwrap().push(Instant::now());
        let mut s = self.script.lock().unwrap();
        match s.len() {
            0 => Ok(FetchResponse::new(req.url.clone(), 200, Vec::new())),
            1 => {
                match &s[0] {
                    Ok(r) => Ok(r.clone()),
                    Err(e) => Err(Error::new(e.kind(), e.message().to_owned())
                        .with_temporary(e.is_temporary())),
                }
            }
            _ => s.pop().unwrap(),
        }
    }
}

fn url() -> Url {
    Url::parse("http://example.test/").unwrap()
}

#[tokio::test(start_paused = true)]
async fn retry_never_retries_non_temporary_error() {
    let _serial = SERIAL.lock().await;
    for kind in [
        ErrorKind::PolicyRefused,
        ErrorKind::TooLarge,
        ErrorKind::RobotsDisallowed,
    ] {
        let inner = Scripted::new(vec![Err(Error::new(kind, "no"))]);
        let f = RetryLayer::new(Arc::clone(&inner) as Arc<dyn Fetcher>);
        let e = f.fetch(&FetchRequest::page(url())).await.unwrap_err();
        assert_eq!(e.kind(), kind);
        assert_eq!(inner.calls(), 1, "{kind:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn retry_gives_up_after_max_attempts_returning_last_answer() {
    let _serial = SERIAL.lock().await;
    let inner = Scripted::new(vec![Ok(FetchResponse::new(url(), 503, Vec::new()))]);
    let f = RetryLayer::new(Arc::clone(&inner) as Arc<dyn Fetcher>);
    let r = f.fetch(&FetchRequest::page(url())).await.unwrap();
    assert_eq!(r.status, 503);
    assert_eq!(inner.calls(), 3);

    let inner = Scripted::new(vec![Err(Error::new(ErrorKind::Timeout, "slow"))]);
    let f = RetryLayer::new(Arc::clone(&inner) as Arc<dyn Fetcher>).with_max_attempts(5);
    let e = f.fetch(&FetchRequest::page(url())).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert_eq!(inner.calls(), 5);
}

#[tokio::test(start_paused = true)]
async fn retry_backoff_is_exponential_with_full_jitter() {
    let _serial = SERIAL.lock().await;
    // With no Retry-After, waits are jittered in [0, base·2^k]: total ≤ 0.5 + 1 + 2 + 4 s.
    let inner = Scripted::new(vec![Err(Error::new(ErrorKind::Network, "reset"))]);
    let f = RetryLayer::new(Arc::clone(&inner) as Arc<dyn Fetcher>).with_max_attempts(5);
    let start = Instant::now();
    let _ = f.fetch(&FetchRequest::page(url())).await;
    assert_eq!(inner.calls(), 5);
    assert!(
        start.elapsed() <= Duration::from_millis(7500),
        "{:?}",
        start.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn retry_after_http_date_is_honoured() {
    let _serial = SERIAL.lock().await;
    let when = std::time::SystemTime::now() + Duration::from_secs(5);
    let resp = FetchResponse::new(url(), 503, Vec::new())
        .with_header("Retry-After", httpdate::fmt_http_date(when));
    let inner = Scripted::new(vec![
        Ok(resp),
        Ok(FetchResponse::new(url(), 200, Vec::new())),
    ]);
    let f = RetryLayer::new(Arc::clone(&inner) as Arc<dyn Fetcher>);
    let start = Instant::now();
    let r = f.fetch(&FetchRequest::page(url())).await.unwrap();
    assert_eq!(r.status, 200);
    let waited = start.elapsed();
    assert!(
        waited >= Duration::from_secs(3) && waited <= Duration::from_secs(6),
        "{waited:?}"
    );
}

#[tokio::test]
async fn stack_orders_robots_retry_rate_inner() {
    let _serial = SERIAL.lock().await;
    let fx = Fixture::start(|_, _| Reply::status(404)).await;
    let req = crawl_request(&fx, 2.0, Duration::from_secs(10));
    let f = stack(Arc::new(local_fetcher()), &req);
    assert_eq!(
        f.to_string(),
        "RobotsLayer(RetryLayer(RateLimitLayer(HttpFetcher)))"
    );
    let no_robots = CrawlRequest::builder(fx.url("/").as_str())
        .respect_robots(false)
        .allow_private_network(true)
        .build()
        .unwrap();
    let f = stack(Arc::new(local_fetcher()), &no_robots);
    assert_eq!(f.to_string(), "RetryLayer(RateLimitLayer(HttpFetcher))");
}

#[tokio::test]
async fn stack_retries_robots_fetch_before_disallowing() {
    let _serial = SERIAL.lock().await;
    // robots.txt answers 503 once, then rules: the retry layer below the robots layer
    // gets the rules on the second attempt.
    let fx = Fixture::start(|hit, n| {
        if hit.path == "/robots.txt" {
            if n == 0 {
                Reply::status(503).header("Retry-After", "0")
            } else {
                Reply::text("User-agent: *\nDisallow: /no\n")
            }
        } else {
            Reply::html("<p>x</p>")
        }
    })
    .await;
    let req = crawl_request(&fx, 10.0, Duration::from_secs(10));
    let f = stack(Arc::new(local_fetcher()), &req);
    f.check(&fx.url("/yes"), None).await.unwrap();
    assert_eq!(
        f.check(&fx.url("/no"), None).await.unwrap_err().kind(),
        ErrorKind::RobotsDisallowed
    );
    assert_eq!(fx.count("/robots.txt"), 2);
}

/// The most request starts the fixture saw in any window of `rate` starts' worth of time: a
/// 1-second window less the slack the gap tests allow per gap (two gaps for the default
/// 2 requests/s), so a limiter that keeps every gap within its slack counts at most `rate`.
fn max_starts_per_second(hits: &[Hit], interval: Duration) -> usize {
    let per_second = (Duration::from_secs(1).as_secs_f64() / interval.as_secs_f64()).round();
    let window = Duration::from_secs(1) - slack(interval) * per_second as u32;
    let mut at: Vec<Instant> = hits.iter().map(|h| h.at).collect();
    at.sort();
    (0..at.len())
        .map(|i| at[i..].iter().take_while(|t| **t - at[i] < window).count())
        .max()
        .unwrap_or(0)
}

fn three_page_site(hit: &Hit, _: usize) -> Reply {
    let links = match hit.path.as_str() {
        "/robots.txt" => return Reply::status(404),
        p if p.ends_with('/') => ["a", "b", "c"]
            .iter()
            .map(|l| format!("<a href=\"{p}{l}\">{l}</a>"))
            .collect::<String>(),
        _ => String::new(),
    };
    Reply::html(&format!(
        "<html><head><title>{0}</title></head><body><main><h1>{0}</h1><p>Enough words on \
         the page {0} to be kept as a document by the crawler.</p>{links}</main></body></html>",
        hit.path
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_jobs_on_one_host_share_its_rate() {
    let _serial = SERIAL.lock().await;
    let fx = Fixture::start(three_page_site).await;
    // One crawler, its default fetcher factory: what `serve` runs every job with.
    let crawler = crawl_core::Crawler::builder().build().unwrap();
    let mut handles = Vec::new();
    for j in ["j1", "j2", "j3"] {
        let req = CrawlRequest::builder(fx.url(&format!("/{j}/")).as_str())
            .max_depth(1)
            .max_pages(4)
            .concurrency(4)
            .guardrails(Guardrails::lifted())
            .allow_private_network(true)
            .detect_soft_404(false)
            .sitemap(crawl_core::SitemapMode::Off)
            .build()
            .unwrap();
        assert_eq!(req.rate, Some(2.0), "the default rate");
        handles.push(crawler.start(req).await.unwrap());
    }
    for h in handles {
        let rec = h.wait().await.unwrap();
        assert_eq!(
            rec.status,
            crawl_core::JobStatus::Completed,
            "{:?}",
            rec.failure
        );
        assert_eq!(rec.progress.pages_processed, 4);
    }
    let hits = fx.hits();
    assert_eq!(hits.len(), 15, "3 × (robots.txt + 4 pages)");
    let interval = Duration::from_millis(500);
    let most = max_starts_per_second(&hits, interval);
    assert!(
        most <= 2,
        "{most} request starts within one second: {:?}",
        gaps(&hits)
    );
    assert_gaps_at_least(&hits, interval);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_waiting_for_a_shared_host_take_turns() {
    let _serial = SERIAL.lock().await;
    let fx = Fixture::start(|_, _| Reply::html("<p>x</p>")).await;
    let hosts = crawl_core::politeness::HostLimiter::new();
    let layer = |hosts: &crawl_core::politeness::HostLimiter| {
        Arc::new(
            RateLimitLayer::new(Arc::new(local_fetcher()), Some(Duration::from_millis(100)))
                .with_host_limiter(hosts.clone()),
        )
    };
    let (a, b) = (layer(&hosts), layer(&hosts));
    let (job_a, job_b) = (JobId::new(), JobId::new());
    let mut tasks = Vec::new();
    for i in 0..6 {
        let (a, url) = (Arc::clone(&a), fx.url(&format!("/a{i}")));
        let job = job_a.clone();
        tasks.push(tokio::spawn(async move {
            a.fetch(&FetchRequest::page(url).with_job(&job)).await
        }));
    }
    // Job A's six requests are queued first; then job B's one.
    tokio::time::sleep(Duration::from_millis(20)).await;
    let url = fx.url("/b0");
    tasks.push(tokio::spawn(async move {
        b.fetch(&FetchRequest::page(url).with_job(&job_b)).await
    }));
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    let mut hits = fx.hits();
    hits.sort_by_key(|h| h.at);
    let order: Vec<&str> = hits.iter().map(|h| h.path.as_str()).collect();
    let b_at = order.iter().position(|p| *p == "/b0").unwrap();
    // A's first request started at once and its second holds the host's slot: B is next.
    assert!(b_at <= 2, "job B waited behind job A's queue: {order:?}");
    assert_gaps_at_least(&hits, Duration::from_millis(100));
}

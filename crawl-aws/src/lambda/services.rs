//! The backends every handler uses, built once per Lambda container.

use std::sync::Arc;

use crawl_core::clock::{DynClock, SystemClock};
use crawl_core::politeness::{HostPolicies, RetryLayer, RobotsLayer};
use crawl_core::{
    CrawlPolicy, CrawlRequest, DynFetcher, DynIngestor, DynRenderer, Guardrails, Result,
};

use super::robots::{RobotsSnapshot, SeededRobots};
use crate::dynamo::LevelLedger;
use crate::{DynamoDedup, DynamoHostLimiter, DynamoJobStore, S3Sink};

/// The sink, dedup store and job store the handlers share, and the guardrails every request
/// is validated against.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Services {
    /// Documents and the crawl's working state (level lists, batch reports).
    pub sink: Arc<S3Sink>,
    /// URL dedup, the plan step's claims and the host limiter's slots.
    pub dedup: Arc<DynamoDedup>,
    /// Job records and exact page budgets.
    pub jobs: Arc<DynamoJobStore>,
    /// Limits a request must stay within.
    pub guardrails: Guardrails,
    /// The deployment's crawl policy (network, robots.txt, crawl delay, concurrency, rate)
    /// the init handler gives every job: never taken from the event.
    pub policy: CrawlPolicy,
    /// Time source (`fetched_at`).
    pub clock: DynClock,
    /// The browser of the scrape handler for requests whose render mode is `always` or
    /// `auto` (none by default: `always` pages are then skipped `render_unavailable`, `auto`
    /// pages keep their HTTP version).
    pub renderer: Option<DynRenderer>,
    /// Called once per completed job by the finalise handler (none by default).
    pub ingestor: Option<DynIngestor>,
    /// Sources and their pages' state, for runs of a source (a job whose request has a
    /// `sync` target); none by default, when such a job fails in its first page.
    pub sources: Option<crawl_core::DynSourceStore>,
    /// How long a scrape batch may go on starting pages ([`BATCH_TIME_BUDGET`](super::BATCH_TIME_BUDGET)
    /// by default).
    pub batch_time_budget: std::time::Duration,
    /// Admissions and page counts over the dedup and job tables, repeatable per level.
    pub(crate) ledger: LevelLedger,
}

impl Services {
    /// Services over these backends, with the default guardrails and the system clock.
    pub fn new(sink: S3Sink, dedup: DynamoDedup, jobs: DynamoJobStore) -> Self {
        Services {
            ledger: LevelLedger::new(&dedup, &jobs),
            sink: Arc::new(sink),
            dedup: Arc::new(dedup),
            jobs: Arc::new(jobs),
            guardrails: Guardrails::default(),
            policy: CrawlPolicy::default(),
            clock: Arc::new(SystemClock),
            ingestor: None,
            renderer: None,
            sources: None,
            batch_time_budget: super::BATCH_TIME_BUDGET,
        }
    }

    /// Sets the source store (runs of a source need it).
    pub fn with_sources(mut self, sources: crawl_core::DynSourceStore) -> Self {
        self.sources = Some(sources);
        self
    }

    /// Sets how long a scrape batch may go on starting pages.
    pub fn with_batch_time_budget(mut self, budget: std::time::Duration) -> Self {
        self.batch_time_budget = budget;
        self
    }

    /// Sets the guardrails.
    pub fn with_guardrails(mut self, g: Guardrails) -> Self {
        self.guardrails = g;
        self
    }

    /// Sets the crawl policy of the jobs init creates.
    pub fn with_policy(mut self, p: CrawlPolicy) -> Self {
        self.policy = p;
        self
    }

    /// Hands each completed job's documents to `ingestor`, once per job (see
    /// [`finalise`](super::finalise)).
    pub fn with_ingestor(mut self, ingestor: DynIngestor) -> Self {
        self.ingestor = Some(ingestor);
        self
    }

    /// Renders pages with `renderer` when a request asks for it.
    pub fn with_renderer(mut self, renderer: DynRenderer) -> Self {
        self.renderer = Some(renderer);
        self
    }

    /// Configured from the environment: `KB_CRAWL_S3_BUCKET`, `KB_CRAWL_S3_PREFIX`,
    /// `KB_CRAWL_DEDUP_TABLE`, `KB_CRAWL_JOBS_TABLE`, `KB_CRAWL_AWS_ENDPOINT`, and
    /// `KB_CRAWL_GUARDRAILS` (JSON, e.g. `{"maxPages": 200}`; the defaults otherwise),
    /// `KB_CRAWL_POLICY` (JSON [`CrawlPolicy`], e.g. `{"rate": 1, "maxCrawlDelay": 5}`; the
    /// defaults otherwise: public network only, robots.txt obeyed, 2 requests/s), and
    /// `KB_CRAWL_WEBHOOK_URL` with the key `KB_CRAWL_WEBHOOK_SECRET_ARN` (a Secrets Manager
    /// secret read once here, at cold start; the template's way) or, for local runs,
    /// `KB_CRAWL_WEBHOOK_SECRET` (the key itself): when set, completed jobs are
    /// handed to a [`WebhookIngestor`](crawl_api::ingest::WebhookIngestor) (a signed
    /// manifest POSTed to that URL). With the feature `aws-lambda-chrome`, a
    /// [`ChromeRenderer`](crawl_render::ChromeRenderer) on `KB_CRAWL_CHROMIUM` (else
    /// `CHROME`, `/usr/bin/chromium`, ...): an error when no Chromium is found.
    pub async fn from_env() -> Result<Services> {
        let mut s = Services::new(
            S3Sink::from_env().await?,
            DynamoDedup::from_env().await?,
            DynamoJobStore::from_env().await?,
        );
        if crate::config::env("KB_CRAWL_SOURCES_TABLE").is_some() {
            s.sources = Some(Arc::new(crate::DynamoSourceStore::from_env().await?));
        }
        if let Some(g) = crate::config::env("KB_CRAWL_GUARDRAILS") {
            s.guardrails = serde_json::from_str(&g)
                .map_err(|e| crawl_core::Error::invalid(format!("KB_CRAWL_GUARDRAILS: {e}")))?;
        }
        if let Some(p) = crate::config::env("KB_CRAWL_POLICY") {
            s.policy = serde_json::from_str(&p)
                .map_err(|e| crawl_core::Error::invalid(format!("KB_CRAWL_POLICY: {e}")))?;
        }
        #[cfg(feature = "aws-lambda-chrome")]
        {
            s.renderer = Some(Arc::new(lambda_renderer(crate::config::env(
                "KB_CRAWL_CHROMIUM",
            ))?));
        }
        s.ingestor = webhook_from_env().await?;
        Ok(s)
    }

    /// The fetcher of a handler: the same layers as
    /// [`crawl_core::default_fetcher`] — robots.txt, retry, per-host interval, HTTP — but
    /// with the interval held across Lambdas by [`DynamoHostLimiter`], and robots.txt
    /// answered from the job's snapshot when one is given.
    pub(crate) fn fetcher(
        &self,
        req: &CrawlRequest,
        robots: Option<RobotsSnapshot>,
        record: impl FnOnce(DynFetcher) -> DynFetcher,
    ) -> Result<DynFetcher> {
        let http: DynFetcher = Arc::new(crawl_core::http::HttpFetcher::for_request(req)?);
        let policies = HostPolicies::new();
        let limited: DynFetcher = Arc::new(
            DynamoHostLimiter::new(http, &self.dedup, req.min_interval())
                .with_host_policies(policies.clone(), req.max_crawl_delay),
        );
        let retry: DynFetcher = Arc::new(RetryLayer::new(limited));
        let seeded: DynFetcher = match robots {
            Some(s) => Arc::new(SeededRobots::new(retry, s)),
            None => record(retry),
        };
        Ok(if req.respect_robots {
            Arc::new(RobotsLayer::new(seeded, &req.user_agent).with_host_policies(policies))
        } else {
            seeded
        })
    }
}

/// The ingestion webhook of `KB_CRAWL_WEBHOOK_URL`, keyed by the secret of
/// `KB_CRAWL_WEBHOOK_SECRET_ARN` (read now) or, for local runs, `KB_CRAWL_WEBHOOK_SECRET`;
/// `None` when no URL is set. The workers hand completed jobs to it; the job API's DELETE
/// tells it to remove a job's documents.
pub async fn webhook_from_env() -> Result<Option<DynIngestor>> {
    let Some(url) = crate::config::env("KB_CRAWL_WEBHOOK_URL") else {
        return Ok(None);
    };
    let secret = match crate::config::env("KB_CRAWL_WEBHOOK_SECRET_ARN") {
        Some(arn) => read_secret(&arn, crate::config::env("KB_CRAWL_AWS_ENDPOINT")).await?,
        None => crate::config::env("KB_CRAWL_WEBHOOK_SECRET").ok_or_else(|| {
            crawl_core::Error::invalid(
                "KB_CRAWL_WEBHOOK_URL is set but neither KB_CRAWL_WEBHOOK_SECRET_ARN nor \
                 KB_CRAWL_WEBHOOK_SECRET is",
            )
        })?,
    };
    Ok(Some(Arc::new(crawl_api::ingest::WebhookIngestor::new(
        url,
        secret.into_bytes(),
    )?)))
}

/// The `SecretString` of Secrets Manager secret `arn` (the webhook's HMAC key); `endpoint`
/// overrides the service endpoint (a local stand-in, with static test credentials).
pub async fn read_secret(arn: &str, endpoint: Option<String>) -> Result<String> {
    let local = endpoint.is_some();
    let conn = crate::config::Connection {
        endpoint_url: endpoint,
        ..crate::config::Connection::default()
    };
    let sdk = conn.load().await;
    let mut cfg = aws_sdk_secretsmanager::config::Builder::from(&sdk);
    if local {
        cfg = cfg.credentials_provider(aws_sdk_secretsmanager::config::Credentials::new(
            "testing", "testing", None, None, "kb-crawl",
        ));
    }
    let client = aws_sdk_secretsmanager::Client::from_conf(cfg.build());
    let out = client
        .get_secret_value()
        .secret_id(arn)
        .send()
        .await
        .map_err(|e| {
            crawl_core::Error::new(
                crawl_core::ErrorKind::Storage,
                format!(
                    "KB_CRAWL_WEBHOOK_SECRET_ARN: cannot read the secret ({})",
                    aws_sdk_secretsmanager::error::DisplayErrorContext(&e)
                ),
            )
        })?;
    out.secret_string()
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| {
            crawl_core::Error::invalid(
                "KB_CRAWL_WEBHOOK_SECRET_ARN: the secret has no SecretString (store the key as text)",
            )
        })
}

/// A renderer for one page per invocation inside Lambda: one tab, and flags for Lambda's
/// sandbox (a small `/dev/shm`, no zygote). The browser starts on the first render and
/// stays up between invocations of a warm container.
#[cfg(feature = "aws-lambda-chrome")]
pub fn lambda_renderer(executable: Option<String>) -> Result<crawl_render::ChromeRenderer> {
    let mut config = crawl_render::ChromeConfig::default().with_max_tabs(1);
    if let Some(exe) = executable {
        config = config.with_executable(exe);
    }
    config.extra_args = vec![
        "--disable-dev-shm-usage".into(),
        "--no-zygote".into(),
        "--disable-gpu".into(),
    ];
    crawl_render::ChromeRenderer::new(config)
}

//! [`ApiState`]: the backends and settings the router works with.

use std::fmt;
use std::sync::Arc;

use crawl_core::clock::{DynClock, SystemClock};
use crawl_core::{CrawlPolicy, DynIngestor, DynJobStore, DynSink, Guardrails};
use time::OffsetDateTime;

use crate::auth::{AllowAll, DynAuthorizer};
use crate::guard::SiteGuard;
use crate::limits::{Retention, RunningIndex, DEFAULT_MAX_RUNNING_TOTAL};
use crate::runner::{DynRunner, InProcessRunner};

/// Default cap on running jobs per assistant.
pub const DEFAULT_MAX_RUNNING_PER_ASSISTANT: usize = 3;

/// Everything the router needs. Cheap to clone.
#[derive(Clone)]
pub struct ApiState {
    pub(crate) runner: DynRunner,
    pub(crate) jobs: DynJobStore,
    pub(crate) sink: DynSink,
    pub(crate) ingestor: DynIngestor,
    pub(crate) authorizer: DynAuthorizer,
    pub(crate) guardrails: Guardrails,
    pub(crate) max_running_per_assistant: usize,
    pub(crate) max_running_total: usize,
    pub(crate) retention: Retention,
    pub(crate) clock: DynClock,
    /// When retention last swept every assistant's records.
    pub(crate) last_sweep: Arc<std::sync::Mutex<Option<OffsetDateTime>>>,
    /// The deployment's policy for every crawl (never from the request body).
    pub(crate) policy: CrawlPolicy,
    /// Host, Origin and Content-Type checks run before every route.
    pub(crate) site: Arc<SiteGuard>,
    /// Serialises the running-jobs check with the start, so two requests at once cannot both
    /// pass a limit (per process); holds the jobs this API started that may still run.
    pub(crate) start_lock: Arc<tokio::sync::Mutex<RunningIndex>>,
    /// Where sources' schedules fire from (default: the records, for the embedded scheduler).
    pub(crate) schedules: crate::schedule::DynScheduleStore,
}

impl fmt::Debug for ApiState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApiState")
            .field("runner", &self.runner.to_string())
            .field("jobs", &self.jobs.to_string())
            .field("sink", &self.sink.to_string())
            .field("ingestor", &self.ingestor.to_string())
            .field("authorizer", &self.authorizer)
            .field("guardrails", &self.guardrails)
            .field("max_running_per_assistant", &self.max_running_per_assistant)
            .field("max_running_total", &self.max_running_total)
            .field("retention", &self.retention)
            .field("policy", &self.policy)
            .field("site", &self.site)
            .field("schedules", &self.schedules.to_string())
            .finish()
    }
}

impl ApiState {
    /// State over a runner and the job store and sink it writes to. `ingestor` is called on
    /// delete (give the crawler the same one for `on_completed`). Defaults: allow-all
    /// authorizer, the [`SiteGuard`] for loopback hosts, the feature request's guardrails, 3 running
    /// jobs per assistant and 20 in all, [`Retention::default`], the default
    /// [`CrawlPolicy`] (public network only, robots.txt obeyed, 2 requests/s per host).
    pub fn new(runner: DynRunner, jobs: DynJobStore, sink: DynSink, ingestor: DynIngestor) -> Self {
        ApiState {
            runner,
            jobs,
            sink,
            ingestor,
            authorizer: Arc::new(AllowAll),
            guardrails: Guardrails::default(),
            max_running_per_assistant: DEFAULT_MAX_RUNNING_PER_ASSISTANT,
            max_running_total: DEFAULT_MAX_RUNNING_TOTAL,
            retention: Retention::default(),
            clock: Arc::new(SystemClock),
            last_sweep: Arc::default(),
            policy: CrawlPolicy::default(),
            site: Arc::new(SiteGuard::default()),
            start_lock: Arc::default(),
            schedules: Arc::new(crate::schedule::InRecordSchedules),
        }
    }

    /// State over an [`InProcessRunner`], reading the crawler's own job store and sink.
    pub fn in_process(runner: InProcessRunner, ingestor: DynIngestor) -> Self {
        let jobs = Arc::clone(runner.crawler().jobs());
        let sink = Arc::clone(runner.crawler().sink());
        Self::new(Arc::new(runner), jobs, sink, ingestor)
    }

    /// Uses this authorizer.
    #[must_use]
    pub fn authorizer(mut self, a: DynAuthorizer) -> Self {
        self.authorizer = a;
        self
    }

    /// Validates requests against these limits.
    #[must_use]
    pub fn guardrails(mut self, g: Guardrails) -> Self {
        self.guardrails = g;
        self
    }

    /// Caps the jobs one assistant may have running at once (answers 429 above it).
    #[must_use]
    pub fn max_running_per_assistant(mut self, n: usize) -> Self {
        self.max_running_per_assistant = n;
        self
    }

    /// Caps the jobs running at once across all assistants (answers 429 above it; default 20),
    /// so new assistant ids cannot get around the per-assistant cap.
    #[must_use]
    pub fn max_running_total(mut self, n: usize) -> Self {
        self.max_running_total = n;
        self
    }

    /// Which finished job records are kept (default: 100 per assistant, 90 days).
    #[must_use]
    pub fn retention(mut self, r: Retention) -> Self {
        self.retention = r;
        self
    }

    /// The clock retention measures ages with (default the system's).
    #[must_use]
    pub fn clock(mut self, c: DynClock) -> Self {
        self.clock = c;
        self
    }

    /// Lets crawls reach private, loopback and link-local hosts (intranets, local demos).
    #[must_use]
    pub fn allow_private_network(mut self, allow: bool) -> Self {
        self.policy.allow_private_network = allow;
        self
    }

    /// Checks `Host`, `Origin` and `Content-Type` with this guard (default
    /// [`SiteGuard::default`]: loopback host names only).
    #[must_use]
    pub fn site_guard(mut self, g: SiteGuard) -> Self {
        self.site = Arc::new(g);
        self
    }

    /// Answers only for these `Host`s (`name` or `name:port`; `"*"` for any): the names the
    /// server is reached by, e.g. its public name behind a proxy. Default: `localhost`,
    /// `127.0.0.1`, `[::1]`.
    #[must_use]
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.site = Arc::new((*self.site).clone().with_hosts(hosts));
        self
    }

    /// Keeps sources' schedules there too (serverless: EventBridge Scheduler); by default
    /// they live in the source records only, where the embedded [`Scheduler`](crate::Scheduler)
    /// reads them.
    #[must_use]
    pub fn schedules(mut self, s: crate::schedule::DynScheduleStore) -> Self {
        self.schedules = s;
        self
    }

    /// Crawls with this policy (network, robots.txt, crawl delay, concurrency, rate): a
    /// request body cannot change it. Default [`CrawlPolicy::default`].
    #[must_use]
    pub fn policy(mut self, p: CrawlPolicy) -> Self {
        self.policy = p;
        self
    }
}

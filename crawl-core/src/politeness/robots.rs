//! The robots.txt layer (RFC 9309).

use std::collections::HashMap;
use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::OnceCell;
use tokio::time::Instant;
use url::Url;

use super::robots_txt::{product_token, RobotsRules};
use super::{origin_of, HostPolicies};
use crate::error::{Error, ErrorKind, Result};
use crate::job::JobId;
use crate::page::{FetchPurpose, FetchRequest, FetchResponse};
use crate::Fetcher;

/// Redirects followed for robots.txt (RFC 9309 §2.3.1.2: at least five).
const MAX_REDIRECTS: usize = 5;
/// How long a robots.txt verdict is reused (RFC 9309 §2.4: at most 24 hours).
const CACHE_TTL: Duration = Duration::from_secs(24 * 3600);
/// Entries kept before expired ones are swept.
const SWEEP_AT: usize = 4096;

/// What robots.txt says about one origin.
#[derive(Debug, Clone)]
enum Verdict {
    /// Parsed rules (empty = allow all: 4xx, HTML, no rules).
    Rules(RobotsRules),
    /// Unreachable (5xx, 429, network, DNS, timeout, refused, too many redirects, parser
    /// crash): everything but /robots.txt is disallowed.
    Unreachable(String),
}

#[derive(Debug)]
struct Entry {
    cell: OnceCell<(Arc<Verdict>, Instant)>,
}

type Key = (Option<JobId>, String);

/// Obeys robots.txt: fetches `/robots.txt` once per origin (scheme, host, port) per job
/// through the wrapped fetcher — concurrent first checks share one fetch — and refuses
/// disallowed URLs with [`ErrorKind::RobotsDisallowed`] and every URL of an origin whose
/// robots.txt is unreachable with [`ErrorKind::RobotsUnreachable`].
///
/// Status handling (RFC 9309 §2.3.1):
/// - 2xx: the first 500 KiB are parsed (BOM stripped; HTML means no rules);
/// - 3xx: up to five redirects are followed, each hop fetched by the inner fetcher (so
///   checked by the network policy); a sixth redirect, or a 3xx without `Location`, counts
///   as unreachable (the RFC would allow "unavailable"; we choose the conservative reading);
/// - 4xx (401, 403, 404, 410...): unavailable, everything allowed;
/// - 429: treated as unreachable, everything disallowed (like 5xx; the site asks us to
///   slow down, so we do not read it as "no robots.txt");
/// - 5xx, network error, DNS failure, timeout, policy refusal: unreachable, everything
///   disallowed.
///
/// A panic in the parser (none is known) is caught and counted as unreachable: we fail
/// closed rather than crawl a site whose rules we could not read.
pub struct RobotsLayer {
    inner: Arc<dyn Fetcher>,
    token: String,
    policies: HostPolicies,
    cache: Mutex<HashMap<Key, Arc<Entry>>>,
}

impl fmt::Debug for RobotsLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RobotsLayer")
            .field("inner", &self.inner)
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for RobotsLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RobotsLayer({})", self.inner)
    }
}

impl RobotsLayer {
    /// Wraps `inner`, matching robots.txt groups against the product token of
    /// `user_agent` (the first word before `/`, e.g. `kb-crawl`).
    pub fn new(inner: Arc<dyn Fetcher>, user_agent: &str) -> Self {
        RobotsLayer {
            inner,
            token: product_token(user_agent),
            policies: HostPolicies::new(),
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Shares `policies` (where the `Crawl-delay` of each origin is published).
    pub fn with_host_policies(mut self, policies: HostPolicies) -> Self {
        self.policies = policies;
        self
    }

    /// The handle where crawl delays are published.
    pub fn host_policies(&self) -> &HostPolicies {
        &self.policies
    }

    /// The `Crawl-delay` robots.txt set for `origin` (see [`origin_of`]) in `job`, once it
    /// has been fetched.
    pub fn crawl_delay(&self, job: Option<&JobId>, origin: &str) -> Option<Duration> {
        self.policies.crawl_delay(job, origin)
    }

    /// Forgets the cached robots.txt verdicts and crawl delays of `job`.
    pub fn forget_job(&self, job: &JobId) {
        let mut c = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        c.retain(|(j, _), _| j.as_ref() != Some(job));
        drop(c);
        self.policies.forget_job(job);
    }

    fn entry(&self, key: &Key) -> Arc<Entry> {
        let mut c = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let expired = |e: &Entry| {
            e.cell
                .get()
                .is_some_and(|(_, at)| now.duration_since(*at) >= CACHE_TTL)
        };
        if let Some(e) = c.get(key) {
            if !expired(e) {
                return Arc::clone(e);
            }
        }
        if c.len() >= SWEEP_AT {
            c.retain(|_, e| !expired(e));
        }
        let e = Arc::new(Entry {
            cell: OnceCell::new(),
        });
        c.insert(key.clone(), Arc::clone(&e));
        e
    }

    async fn verdict(&self, url: &Url, job: Option<&JobId>) -> Arc<Verdict> {
        let origin = origin_of(url);
        let key = (job.cloned(), origin.clone());
        let entry = self.entry(&key);
        let (v, _) = entry
            .cell
            .get_or_init(|| async {
                let v = self.load(url, job).await;
                if let Verdict::Rules(r) = &v {
                    if let Some(d) = r.crawl_delay() {
                        self.policies.set_crawl_delay(job, &origin, d);
                    }
                }
                (Arc::new(v), Instant::now())
            })
            .await;
        Arc::clone(v)
    }

    async fn load(&self, url: &Url, job: Option<&JobId>) -> Verdict {
        let mut target = match url.join("/robots.txt") {
            Ok(u) => u,
            Err(e) => return Verdict::Unreachable(format!("no robots.txt URL: {e}")),
        };
        let mut redirects = 0;
        loop {
            let mut req = FetchRequest::robots(target.clone());
            if let Some(j) = job {
                req = req.with_job(j);
            }
            let resp = match self.inner.fetch(&req).await {
                Ok(r) => r,
                Err(e) => return Verdict::Unreachable(format!("fetching {target}: {e}")),
            };
            match resp.status {
                200..=299 => return parse_guarded(&resp, &self.token),
                300..=399 => {
                    let Some(next) = resp.redirect_target() else {
                        return Verdict::Unreachable(format!(
                            "{target} answered {} without a Location",
                            resp.status
                        ));
                    };
                    if redirects == MAX_REDIRECTS {
                        return Verdict::Unreachable(format!(
                            "more than {MAX_REDIRECTS} redirects from {}",
                            url.join("/robots.txt")
                                .map(|u| u.to_string())
                                .unwrap_or_default()
                        ));
                    }
                    redirects += 1;
                    target = next;
                }
                429 => {
                    return Verdict::Unreachable(format!("{target} answered 429 Too Many Requests"))
                }
                400..=499 => return Verdict::Rules(RobotsRules::allow_all()),
                s => return Verdict::Unreachable(format!("{target} answered {s}")),
            }
        }
    }
}

fn parse_guarded(resp: &FetchResponse, token: &str) -> Verdict {
    match std::panic::catch_unwind(AssertUnwindSafe(|| RobotsRules::parse(&resp.body, token))) {
        Ok(r) => Verdict::Rules(r),
        Err(_) => Verdict::Unreachable(format!("{} could not be parsed", resp.url)),
    }
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl Fetcher for RobotsLayer {
    async fn fetch(&self, req: &FetchRequest) -> Result<FetchResponse> {
        if req.purpose != FetchPurpose::Robots {
            self.check(&req.url, req.job.as_ref()).await?;
        }
        self.inner.fetch(req).await
    }

    async fn check(&self, url: &Url, job: Option<&JobId>) -> Result<()> {
        // The network policy first: no robots.txt fetch for a refused host.
        self.inner.check(url, job).await?;
        if url.path() == "/robots.txt" {
            return Ok(());
        }
        match &*self.verdict(url, job).await {
            Verdict::Unreachable(why) => Err(Error::new(
                ErrorKind::RobotsUnreachable,
                format!("robots.txt unreachable, disallowing all: {why}"),
            )
            .with_temporary(false)
            .with_url(url)
            .with_backend("RobotsLayer")),
            Verdict::Rules(rules) => {
                let path = &url[url::Position::BeforePath..url::Position::AfterQuery];
                let allowed = std::panic::catch_unwind(AssertUnwindSafe(|| rules.allowed(path)))
                    .unwrap_or(false);
                if allowed {
                    Ok(())
                } else {
                    Err(
                        Error::new(ErrorKind::RobotsDisallowed, "disallowed by robots.txt")
                            .with_url(url)
                            .with_backend("RobotsLayer"),
                    )
                }
            }
        }
    }

    async fn pace(&self, url: &Url, job: Option<&JobId>) -> Result<()> {
        self.inner.pace(url, job).await
    }
}

//! The reqwest-based [`Fetcher`]: one GET, no redirects, bounded in time and size, and
//! guarded against SSRF in the connection path itself.
//!
//! # How the SSRF guard works
//! - Before any request, [`NetworkPolicy::check_url`] refuses other schemes, credentials,
//!   refused host names (`localhost`, metadata names) and refused IP-literal hosts. This
//!   check is essential: hyper connects to IP literals WITHOUT asking a resolver.
//! - Every domain host is resolved by a custom [`reqwest::dns::Resolve`] installed on the
//!   client, which calls [`NetworkPolicy::resolve_host`] through the injected [`Resolver`]:
//!   one lookup, the host refused when ANY answer is refused, and the vetted addresses handed
//!   straight to hyper's connector, which connects to exactly those. There is no second
//!   lookup between the check and the connect, so DNS rebinding has no window.
//! - Proxies are disabled (`no_proxy`): with a proxy the proxy would resolve the name and
//!   our resolver would never see it. Redirects are never followed (`Policy::none`): the
//!   engine follows them, checking each hop.
//!
//! We chose the custom resolver over `ClientBuilder::resolve_to_addrs` because the latter
//! pins addresses per client, so it would need one client (and one connection pool) per
//! host; the resolver keeps a single pooled client and is consulted for every new
//! connection.

mod sniff;

pub use sniff::{is_binary, looks_like_html};

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use reqwest::header::{HeaderValue, ACCEPT, CONTENT_TYPE, IF_MODIFIED_SINCE, IF_NONE_MATCH};

use crate::error::{Error, ErrorKind, Result};
use crate::net::{NetworkPolicy, Resolver, SystemResolver};
use crate::page::{FetchPurpose, FetchRequest, FetchResponse};
use crate::request::{CrawlRequest, DEFAULT_USER_AGENT};
use crate::Fetcher;

const BACKEND: &str = "HttpFetcher";

/// Cap on the HTTP/2 header list. HTTP/1 heads are bounded by hyper itself (at most 100
/// headers in a buffer of about 400 KiB); reqwest 0.12 exposes no smaller knob for them.
const MAX_HEADER_LIST: u32 = 64 * 1024;

/// The plain-HTTP fetcher. Build it with [`HttpFetcher::builder`].
#[derive(Clone)]
pub struct HttpFetcher {
    client: reqwest::Client,
    policy: NetworkPolicy,
    total_timeout: Duration,
}

impl fmt::Debug for HttpFetcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpFetcher")
            .field("policy", &self.policy)
            .field("total_timeout", &self.total_timeout)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for HttpFetcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(BACKEND)
    }
}

/// Builder of [`HttpFetcher`].
#[derive(Debug, Clone)]
pub struct HttpFetcherBuilder {
    user_agent: String,
    connect_timeout: Duration,
    total_timeout: Duration,
    policy: NetworkPolicy,
    resolver: Arc<dyn Resolver>,
}

impl Default for HttpFetcherBuilder {
    fn default() -> Self {
        HttpFetcherBuilder {
            user_agent: DEFAULT_USER_AGENT.to_owned(),
            connect_timeout: Duration::from_secs(10),
            total_timeout: Duration::from_secs(30),
            policy: NetworkPolicy::public_only(),
            resolver: Arc::new(SystemResolver),
        }
    }
}

impl HttpFetcherBuilder {
    /// The `User-Agent` header (default [`DEFAULT_USER_AGENT`]).
    pub fn user_agent(mut self, ua: impl Into<String>) -> Self {
        self.user_agent = ua.into();
        self
    }

    /// Deadline for establishing a connection (default 10 s).
    pub fn connect_timeout(mut self, d: Duration) -> Self {
        self.connect_timeout = d;
        self
    }

    /// Deadline for the whole request, body included (default 30 s): a slow-loris server
    /// cannot hold a fetch longer than this.
    pub fn total_timeout(mut self, d: Duration) -> Self {
        self.total_timeout = d;
        self
    }

    /// The network policy (default: public addresses only).
    pub fn policy(mut self, policy: NetworkPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Shorthand for `policy(NetworkPolicy { allow_private })`.
    pub fn allow_private(mut self, allow: bool) -> Self {
        self.policy.allow_private = allow;
        self
    }

    /// The DNS resolver (default: the system's). Every answer still passes the policy.
    pub fn resolver(mut self, resolver: Arc<dyn Resolver>) -> Self {
        self.resolver = resolver;
        self
    }

    /// Builds the fetcher.
    pub fn build(self) -> Result<HttpFetcher> {
        let ua = HeaderValue::from_str(&self.user_agent)
            .map_err(|_| Error::invalid("user_agent: not a valid header value"))?;
        let client = reqwest::Client::builder()
            .user_agent(ua)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .referer(false)
            .connect_timeout(self.connect_timeout)
            .timeout(self.total_timeout)
            .http2_max_header_list_size(MAX_HEADER_LIST)
            .pool_max_idle_per_host(4)
            .pool_idle_timeout(Duration::from_secs(30))
            .tcp_nodelay(true)
            .dns_resolver(Arc::new(PolicyDns {
                policy: self.policy,
                resolver: self.resolver,
            }))
            .build()
            .map_err(|e| {
                Error::new(ErrorKind::Internal, "could not build the HTTP client")
                    .with_backend(BACKEND)
                    .with_source(e)
            })?;
        Ok(HttpFetcher {
            client,
            policy: self.policy,
            total_timeout: self.total_timeout,
        })
    }
}

impl HttpFetcher {
    /// A builder with the defaults (public addresses only, 10 s connect, 30 s total).
    pub fn builder() -> HttpFetcherBuilder {
        HttpFetcherBuilder::default()
    }

    /// A fetcher configured from a crawl request: its user agent and network policy.
    pub fn for_request(req: &CrawlRequest) -> Result<HttpFetcher> {
        Self::builder()
            .user_agent(req.user_agent.clone())
            .allow_private(req.allow_private_network)
            .build()
    }

    /// The policy this fetcher enforces.
    pub fn policy(&self) -> &NetworkPolicy {
        &self.policy
    }

    async fn fetch_inner(&self, req: &FetchRequest) -> Result<FetchResponse> {
        let accept = match req.purpose {
            FetchPurpose::Page => "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1",
            FetchPurpose::Robots => "text/plain,*/*;q=0.1",
            FetchPurpose::Sitemap => "application/xml,text/xml;q=0.9,*/*;q=0.1",
        };
        let mut get = self.client.get(req.url.clone()).header(ACCEPT, accept);
        if let Some(v) = &req.validators {
            // A value that is not a valid header (a stored validator mangled somewhere) is
            // left out: the request is then unconditional, never refused.
            if let Some(etag) = v
                .etag
                .as_deref()
                .and_then(|e| HeaderValue::from_str(e).ok())
            {
                get = get.header(IF_NONE_MATCH, etag);
            }
            if let Some(lm) = v
                .last_modified
                .as_deref()
                .and_then(|m| HeaderValue::from_str(m).ok())
            {
                get = get.header(IF_MODIFIED_SINCE, lm);
            }
        }
        let mut resp = get.send().await.map_err(|e| map_reqwest(e, req))?;
        let status = resp.status().as_u16();
        let headers: Vec<(String, String)> = resp
            .headers()
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let mut out = FetchResponse {
            url: req.url.clone(),
            status,
            headers,
            body: Vec::new(),
            truncated: false,
        };
        // Redirects carry no useful body (the engine only needs Location), and a 304 has none.
        if (300..400).contains(&status) {
            return Ok(out);
        }
        let mut cap = req.max_body;
        if req.purpose == FetchPurpose::Page {
            let ctype = resp
                .headers()
                .get(CONTENT_TYPE)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
            if let Some(ct) = ctype {
                let linked = crate::linked::LinkedType::from_content_type(&ct)
                    .filter(|t| req.linked.contains(t));
                if linked.is_some() {
                    cap = crate::linked::MAX_LINKED_BYTES;
                } else if !is_html_type(&ct) {
                    // Not HTML: status and headers only, the body is never downloaded.
                    return Ok(out);
                }
            }
            if let Some(len) = resp.content_length() {
                if len > cap as u64 {
                    return Err(too_large(cap, req, Some(len)));
                }
            }
        }
        // Stream the (already decompressed) body, counting as we go: a gzip bomb or an
        // endless chunked body stops at the cap without being buffered whole.
        let mut body = Vec::new();
        loop {
            let chunk = match resp.chunk().await {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(e) => return Err(map_reqwest(e, req)),
            };
            if body.len() + chunk.len() > cap {
                match req.purpose {
                    FetchPurpose::Page => return Err(too_large(cap, req, None)),
                    FetchPurpose::Robots | FetchPurpose::Sitemap => {
                        let room = req.max_body - body.len();
                        body.extend_from_slice(&chunk[..room]);
                        out.truncated = true;
                        break;
                    }
                }
            }
            body.extend_from_slice(&chunk);
        }
        out.body = body;
        Ok(out)
    }
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl Fetcher for HttpFetcher {
    async fn fetch(&self, req: &FetchRequest) -> Result<FetchResponse> {
        self.policy
            .check_url(&req.url)
            .map_err(|e| e.with_backend(BACKEND))?;
        // reqwest's own timeout covers the same span; this one also bounds our body loop
        // and gives a uniform error.
        match tokio::time::timeout(self.total_timeout, self.fetch_inner(req)).await {
            Ok(r) => r,
            Err(_) => Err(Error::new(
                ErrorKind::Timeout,
                format!("no complete response within {:?}", self.total_timeout),
            )
            .with_url(&req.url)
            .with_backend(BACKEND)),
        }
    }

    async fn check(&self, url: &url::Url, job: Option<&crate::JobId>) -> Result<()> {
        let _ = job;
        self.policy
            .check_url(url)
            .map_err(|e| e.with_backend(BACKEND))
    }

    async fn pace(&self, url: &url::Url, job: Option<&crate::JobId>) -> Result<()> {
        let _ = (url, job);
        Ok(())
    }
}

/// `text/html` and `application/xhtml+xml` (parameters and case ignored).
pub(crate) fn is_html_type(ct: &str) -> bool {
    let essence = ct.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("text/html")
        || essence.eq_ignore_ascii_case("application/xhtml+xml")
}

fn too_large(cap: usize, req: &FetchRequest, declared: Option<u64>) -> Error {
    let msg = match declared {
        Some(n) => format!("declared body of {n} bytes is over the cap of {cap} bytes"),
        None => format!("body is over the cap of {cap} bytes"),
    };
    Error::new(ErrorKind::TooLarge, msg)
        .with_url(&req.url)
        .with_backend(BACKEND)
}

/// Maps a reqwest error, recovering our own policy refusal from the resolver when it is in
/// the source chain.
fn map_reqwest(e: reqwest::Error, req: &FetchRequest) -> Error {
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(s) = src {
        if let Some(ours) = s.downcast_ref::<DnsFailure>() {
            return Error::new(ours.kind, ours.message.clone())
                .with_temporary(ours.temporary)
                .with_url(&req.url)
                .with_backend(BACKEND);
        }
        src = s.source();
    }
    let (kind, msg) = if e.is_timeout() {
        (ErrorKind::Timeout, "deadline passed")
    } else if e.is_connect() {
        (ErrorKind::Network, "connection failed")
    } else if e.is_body() || e.is_decode() {
        (ErrorKind::Network, "body interrupted or corrupt")
    } else {
        (ErrorKind::Network, "request failed")
    };
    Error::new(kind, msg)
        .with_temporary(true)
        .with_url(&req.url)
        .with_backend(BACKEND)
        .with_source(e)
}

/// Our resolver's failure, carried through hyper's error chain and recovered by
/// [`map_reqwest`].
#[derive(Debug)]
struct DnsFailure {
    kind: ErrorKind,
    temporary: bool,
    message: String,
}

impl fmt::Display for DnsFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DnsFailure {}

/// The reqwest resolver hook: every domain hyper connects to is resolved here, once, under
/// the policy.
struct PolicyDns {
    policy: NetworkPolicy,
    resolver: Arc<dyn Resolver>,
}

impl reqwest::dns::Resolve for PolicyDns {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.policy;
        let resolver = Arc::clone(&self.resolver);
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // Port 0: hyper sets the URL's (explicit or default) port on every address.
            match policy.resolve_host(&host, 0, resolver.as_ref()).await {
                Ok(addrs) => Ok(Box::new(addrs.into_iter()) as reqwest::dns::Addrs),
                Err(e) => Err(Box::new(DnsFailure {
                    kind: e.kind(),
                    temporary: e.is_temporary(),
                    message: e.to_string(),
                })
                    as Box<dyn std::error::Error + Send + Sync>),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_content_types() {
        assert!(is_html_type("text/html"));
        assert!(is_html_type("Text/HTML; charset=utf-8"));
        assert!(is_html_type("application/xhtml+xml"));
        assert!(!is_html_type("application/pdf"));
        assert!(!is_html_type("text/plain"));
        assert!(!is_html_type("text/htmlx"));
    }

    #[test]
    fn builder_refuses_bad_user_agent() {
        let e = HttpFetcher::builder()
            .user_agent("a\nb")
            .build()
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
    }
}

//! What a host asks for: [`CrawlRequest`], validated by [`CrawlRequestBuilder`].

use std::time::Duration;

use serde::{Deserialize, Serialize};
use url::Url;

use crate::error::{Error, Result};
use crate::extract::ExtractOptions;
use crate::url::UrlPatterns;

/// The hard limits a host enforces on every request (the feature request's guardrails).
/// A host may lower them; [`Guardrails::lifted`] removes them for trusted callers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(default, rename_all = "camelCase")]
pub struct Guardrails {
    /// Largest `max_depth` accepted. Default 5.
    pub max_depth: u32,
    /// Largest `max_pages` accepted. Default 500.
    pub max_pages: u32,
    /// Largest per-host request rate accepted, requests per second. Default 2.
    pub max_rate: f64,
    /// Largest concurrency accepted. Default 50.
    pub max_concurrency: usize,
    /// Largest `max_links_per_page` accepted. Default [`DEFAULT_MAX_LINKS_PER_PAGE`].
    pub max_links_per_page: u32,
}

/// Links taken from one page by default (the rest are counted as excluded
/// `links_per_page`): far more than any real navigation, small enough that a page with
/// hundreds of thousands of links costs a few megabytes.
pub const DEFAULT_MAX_LINKS_PER_PAGE: u32 = 5_000;

impl Default for Guardrails {
    fn default() -> Self {
        Guardrails {
            max_depth: 5,
            max_pages: 500,
            max_rate: 2.0,
            max_concurrency: 50,
            max_links_per_page: DEFAULT_MAX_LINKS_PER_PAGE,
        }
    }
}

impl Guardrails {
    /// No practical limits (for trusted command-line use).
    pub fn lifted() -> Self {
        Guardrails {
            max_depth: 64,
            max_pages: u32::MAX,
            max_rate: f64::INFINITY,
            max_concurrency: 1024,
            max_links_per_page: u32::MAX,
        }
    }

    /// These guardrails with a lower depth cap.
    pub fn with_max_depth(mut self, d: u32) -> Self {
        self.max_depth = d;
        self
    }

    /// These guardrails with a lower page cap.
    pub fn with_max_pages(mut self, p: u32) -> Self {
        self.max_pages = p;
        self
    }
}

/// When the headless browser is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RenderMode {
    /// Plain HTTP only.
    #[default]
    Never,
    /// Every page goes through the browser.
    Always,
    /// HTTP first; the browser only when the page shows it needs JavaScript.
    Auto,
}

/// How `www.` relates to the root's host in the domain lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WwwPolicy {
    /// `example.com` and `www.example.com` are the same site (default).
    #[default]
    Equivalent,
    /// Only the root's exact host.
    Exact,
}

/// Whether the crawl reads the site's sitemaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SitemapMode {
    /// Read the sitemaps named in robots.txt, or `/sitemap.xml` when it names none, and add
    /// their in-scope URLs to the ones found by links (default).
    #[default]
    Auto,
    /// Links only.
    Off,
}

/// One crawl: the root URL, depth, page cap and politeness. Build it with
/// [`CrawlRequest::builder`], which validates every field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(rename_all = "camelCase")]
pub struct CrawlRequest {
    /// Where the crawl starts (depth 0).
    pub url: Url,
    /// Link hops from the root; the root is depth 0.
    pub max_depth: u32,
    /// Cap on page URLs fetched (robots.txt does not count).
    pub max_pages: u32,
    /// Requests per second per host; `None` means unlimited.
    pub rate: Option<f64>,
    /// Pages in flight at once.
    pub concurrency: usize,
    /// User agent sent and matched against robots.txt.
    pub user_agent: String,
    /// How `www.` is treated by the domain lock.
    pub www: WwwPolicy,
    /// Optional path prefix the crawl stays under (e.g. `/registrar`).
    pub path_prefix: Option<String>,
    /// Allow hosts that resolve to private, loopback or link-local addresses.
    pub allow_private_network: bool,
    /// Obey robots.txt (always true unless a host explicitly turns it off for its own sites).
    pub respect_robots: bool,
    /// Upper bound for a robots.txt `Crawl-delay`.
    #[serde(with = "crate::request::secs")]
    pub max_crawl_delay: Duration,
    /// When to use the browser.
    pub render: RenderMode,
    /// Extraction switches.
    pub extract: ExtractOptions,
    /// Assistant that owns the job, when run behind the job API.
    pub assistant_id: Option<String>,
    /// Probe the site once with a URL that cannot exist; pages identical to its answer are
    /// skipped as `soft_404` (sites that answer 200 for every path). The probe does not
    /// count as a page.
    #[serde(default = "yes")]
    pub detect_soft_404: bool,
    /// Glob patterns on the URL path (and query) a page must match one of to be crawled;
    /// empty means every path (see [`crate::url::UrlPatterns`] for the syntax).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// Glob patterns on the URL path (and query) that keep a page out; they win over
    /// `include`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// Whether sitemaps add URLs to the crawl.
    #[serde(default)]
    pub sitemap: SitemapMode,
    /// Links taken from one page, in document order, after the scope check and per-page
    /// dedup; the rest are counted as excluded `links_per_page` and never looked up.
    #[serde(default = "default_links_per_page")]
    pub max_links_per_page: u32,
    /// When set, the crawl is a run of this source: it compares each page with the
    /// source's stored version and writes into the source's documents (see
    /// [`Crawler::start_sync`](crate::Crawler::start_sync)). Set by the engine, never by
    /// a caller's body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<crate::source::SyncTarget>,
    /// Pass same-site PDF and Word (DOCX) links through as documents of their own type to
    /// an ingestor that accepts them (see [`crate::linked`]); off by default, and without
    /// such an ingestor they stay skipped as `not_html`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub linked_documents: bool,
}

fn yes() -> bool {
    true
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn default_links_per_page() -> u32 {
    DEFAULT_MAX_LINKS_PER_PAGE
}

/// The user agent kb-crawl sends by default; its product token is `kb-crawl`.
pub const DEFAULT_USER_AGENT: &str = concat!(
    "kb-crawl/",
    env!("CARGO_PKG_VERSION"),
    " (+https://github.com/kb-crawl/kb-crawl)"
);

impl CrawlRequest {
    /// A builder for a crawl of `url`, with the defaults of the feature request
    /// (depth 2, 100 pages, 2 requests/s per host, guardrails 5 and 500).
    pub fn builder(url: impl AsRef<str>) -> CrawlRequestBuilder {
        CrawlRequestBuilder {
            url: url.as_ref().to_owned(),
            max_depth: 2,
            max_pages: 100,
            rate: Some(2.0),
            concurrency: 4,
            user_agent: DEFAULT_USER_AGENT.to_owned(),
            www: WwwPolicy::default(),
            path_prefix: None,
            allow_private_network: false,
            respect_robots: true,
            max_crawl_delay: Duration::from_secs(10),
            render: RenderMode::Never,
            extract: ExtractOptions::default(),
            assistant_id: None,
            detect_soft_404: true,
            include: Vec::new(),
            exclude: Vec::new(),
            sitemap: SitemapMode::default(),
            max_links_per_page: DEFAULT_MAX_LINKS_PER_PAGE,
            linked_documents: false,
            guardrails: Guardrails::default(),
        }
    }

    /// The minimum interval between two requests to one host, if rate limited.
    pub fn min_interval(&self) -> Option<Duration> {
        self.rate
            .filter(|r| r.is_finite() && *r > 0.0)
            .map(|r| Duration::from_secs_f64(1.0 / r))
    }

    /// Re-checks a request (for example one deserialized from a queue) against guardrails.
    pub fn validate(&self, guardrails: &Guardrails) -> Result<()> {
        let b = CrawlRequestBuilder {
            url: self.url.to_string(),
            max_depth: self.max_depth,
            max_pages: self.max_pages,
            rate: self.rate,
            concurrency: self.concurrency,
            user_agent: self.user_agent.clone(),
            www: self.www,
            path_prefix: self.path_prefix.clone(),
            allow_private_network: self.allow_private_network,
            respect_robots: self.respect_robots,
            max_crawl_delay: self.max_crawl_delay,
            render: self.render,
            extract: self.extract.clone(),
            assistant_id: self.assistant_id.clone(),
            detect_soft_404: self.detect_soft_404,
            include: self.include.clone(),
            exclude: self.exclude.clone(),
            sitemap: self.sitemap,
            max_links_per_page: self.max_links_per_page,
            linked_documents: self.linked_documents,
            guardrails: *guardrails,
        };
        b.build().map(|_| ())
    }
}

/// Builds a [`CrawlRequest`]; [`build`](Self::build) validates it.
#[derive(Debug, Clone)]
#[must_use]
pub struct CrawlRequestBuilder {
    url: String,
    max_depth: u32,
    max_pages: u32,
    rate: Option<f64>,
    concurrency: usize,
    user_agent: String,
    www: WwwPolicy,
    path_prefix: Option<String>,
    allow_private_network: bool,
    respect_robots: bool,
    max_crawl_delay: Duration,
    render: RenderMode,
    extract: ExtractOptions,
    assistant_id: Option<String>,
    detect_soft_404: bool,
    include: Vec<String>,
    exclude: Vec<String>,
    sitemap: SitemapMode,
    max_links_per_page: u32,
    linked_documents: bool,
    guardrails: Guardrails,
}

impl CrawlRequestBuilder {
    /// Link hops from the root (root = 0).
    pub fn max_depth(mut self, d: u32) -> Self {
        self.max_depth = d;
        self
    }
    /// Cap on page URLs fetched.
    pub fn max_pages(mut self, p: u32) -> Self {
        self.max_pages = p;
        self
    }
    /// Requests per second per host; `0` or `None` removes the limit (if guardrails allow).
    pub fn rate(mut self, r: Option<f64>) -> Self {
        self.rate = r.filter(|r| *r != 0.0);
        self
    }
    /// Pages in flight at once.
    pub fn concurrency(mut self, c: usize) -> Self {
        self.concurrency = c;
        self
    }
    /// User agent string; its first word is the robots.txt product token.
    pub fn user_agent(mut self, ua: impl Into<String>) -> Self {
        self.user_agent = ua.into();
        self
    }
    /// How `www.` is treated.
    pub fn www(mut self, w: WwwPolicy) -> Self {
        self.www = w;
        self
    }
    /// Stay under this path prefix.
    pub fn path_prefix(mut self, p: Option<String>) -> Self {
        self.path_prefix = p;
        self
    }
    /// Allow private, loopback and link-local hosts (intranets, local tests).
    pub fn allow_private_network(mut self, allow: bool) -> Self {
        self.allow_private_network = allow;
        self
    }
    /// Obey robots.txt (default true).
    pub fn respect_robots(mut self, r: bool) -> Self {
        self.respect_robots = r;
        self
    }
    /// Upper bound for `Crawl-delay`.
    pub fn max_crawl_delay(mut self, d: Duration) -> Self {
        self.max_crawl_delay = d;
        self
    }
    /// When to use the browser.
    pub fn render(mut self, m: RenderMode) -> Self {
        self.render = m;
        self
    }
    /// Extraction switches.
    pub fn extract(mut self, e: ExtractOptions) -> Self {
        self.extract = e;
        self
    }
    /// Owning assistant.
    pub fn assistant_id(mut self, a: Option<String>) -> Self {
        self.assistant_id = a;
        self
    }
    /// Probe for a site that answers 200 for every path (default true).
    pub fn detect_soft_404(mut self, on: bool) -> Self {
        self.detect_soft_404 = on;
        self
    }
    /// Glob patterns a page's path (or path and query) must match one of, e.g.
    /// `/registrar/**`; replaces any set before. The root URL must match one.
    pub fn include<I, S>(mut self, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.include = patterns.into_iter().map(Into::into).collect();
        self
    }
    /// Glob patterns that keep a page out, e.g. `**/print/**`; they win over `include`.
    /// Replaces any set before. The root URL must match none.
    pub fn exclude<I, S>(mut self, patterns: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.exclude = patterns.into_iter().map(Into::into).collect();
        self
    }
    /// Whether sitemaps add URLs (default [`SitemapMode::Auto`]).
    pub fn sitemap(mut self, mode: SitemapMode) -> Self {
        self.sitemap = mode;
        self
    }
    /// Links taken from one page (default [`DEFAULT_MAX_LINKS_PER_PAGE`]).
    pub fn max_links_per_page(mut self, n: u32) -> Self {
        self.max_links_per_page = n;
        self
    }
    /// Pass same-site PDF and DOCX links through to an ingestor that accepts them
    /// (default false; see [`CrawlRequest::linked_documents`]).
    pub fn linked_documents(mut self, on: bool) -> Self {
        self.linked_documents = on;
        self
    }
    /// The limits to validate against (default: depth 5, pages 500).
    pub fn guardrails(mut self, g: Guardrails) -> Self {
        self.guardrails = g;
        self
    }

    /// Validates every field and returns the request, or an error naming the broken limit.
    pub fn build(self) -> Result<CrawlRequest> {
        let g = self.guardrails;
        let url = Url::parse(self.url.trim())
            .map_err(|e| Error::invalid(format!("url: '{}' is not a valid URL ({e})", self.url)))?;
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(Error::invalid(format!(
                "url: scheme '{}' is not allowed; only http and https",
                url.scheme()
            )));
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err(Error::invalid("url: has no host"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(Error::invalid("url: credentials in URLs are not allowed"));
        }
        if self.max_depth > g.max_depth {
            return Err(Error::invalid(format!(
                "maxDepth: {} is above the limit of {}",
                self.max_depth, g.max_depth
            )));
        }
        if self.max_pages == 0 {
            return Err(Error::invalid("maxPages: must be at least 1"));
        }
        if self.max_pages > g.max_pages {
            return Err(Error::invalid(format!(
                "maxPages: {} is above the limit of {}",
                self.max_pages, g.max_pages
            )));
        }
        match self.rate {
            Some(r) if !(r.is_finite() && r > 0.0) => {
                return Err(Error::invalid(format!(
                    "rate: {r} is not a positive number of requests per second"
                )))
            }
            Some(r) if r > g.max_rate => {
                return Err(Error::invalid(format!(
                    "rate: {r} requests/s is above the limit of {} per host",
                    g.max_rate
                )))
            }
            None if g.max_rate.is_finite() => {
                return Err(Error::invalid(format!(
                    "rate: unlimited is above the limit of {} requests/s per host",
                    g.max_rate
                )))
            }
            _ => {}
        }
        if self.concurrency == 0 || self.concurrency > g.max_concurrency {
            return Err(Error::invalid(format!(
                "concurrency: {} is outside 1..={}",
                self.concurrency, g.max_concurrency
            )));
        }
        if self.user_agent.trim().is_empty() || self.user_agent.contains(['\r', '\n']) {
            return Err(Error::invalid("userAgent: must be one non-empty line"));
        }
        if self.max_links_per_page == 0 || self.max_links_per_page > g.max_links_per_page {
            return Err(Error::invalid(format!(
                "maxLinksPerPage: {} is outside 1..={}",
                self.max_links_per_page, g.max_links_per_page
            )));
        }
        if let Some(p) = &self.path_prefix {
            if !p.starts_with('/') {
                return Err(Error::invalid("pathPrefix: must start with '/'"));
            }
        }
        let patterns = UrlPatterns::new(&self.include, &self.exclude)?;
        if !patterns.allows(&url) {
            let excluded = !UrlPatterns::new(&[], &self.exclude)?.allows(&url);
            let (field, which) = if excluded {
                ("exclude", "an exclude pattern")
            } else {
                ("include", "no include pattern")
            };
            return Err(Error::invalid(format!(
                "{field}: the root URL {url} matches {which}; the crawl must start at a page it keeps"
            )));
        }
        Ok(CrawlRequest {
            url,
            max_depth: self.max_depth,
            max_pages: self.max_pages,
            rate: self.rate,
            concurrency: self.concurrency,
            user_agent: self.user_agent,
            www: self.www,
            path_prefix: self.path_prefix,
            allow_private_network: self.allow_private_network,
            respect_robots: self.respect_robots,
            max_crawl_delay: self.max_crawl_delay,
            render: self.render,
            extract: self.extract,
            assistant_id: self.assistant_id,
            detect_soft_404: self.detect_soft_404,
            include: self.include,
            exclude: self.exclude,
            sitemap: self.sitemap,
            max_links_per_page: self.max_links_per_page,
            sync: None,
            linked_documents: self.linked_documents,
        })
    }
}

/// Serde helper: a `Duration` as fractional seconds.
pub(crate) mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub(crate) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        Duration::try_from_secs_f64(v).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn defaults_match_the_feature_request() {
        let r = CrawlRequest::builder("https://example.com/")
            .build()
            .unwrap();
        assert_eq!((r.max_depth, r.max_pages, r.rate), (2, 100, Some(2.0)));
        assert_eq!(r.min_interval(), Some(Duration::from_millis(500)));
    }

    #[test]
    fn guardrails_name_the_broken_limit() {
        let e = CrawlRequest::builder("https://example.com/")
            .max_depth(6)
            .build()
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert!(
            e.to_string().contains("maxDepth") && e.to_string().contains('5'),
            "{e}"
        );
        let e = CrawlRequest::builder("https://example.com/")
            .max_pages(501)
            .build()
            .unwrap_err();
        assert!(
            e.to_string().contains("maxPages") && e.to_string().contains("500"),
            "{e}"
        );
        let e = CrawlRequest::builder("https://example.com/")
            .rate(None)
            .build()
            .unwrap_err();
        assert!(e.to_string().contains("rate"), "{e}");
    }

    #[test]
    fn a_host_can_lower_guardrails_and_a_cli_can_lift_them() {
        let g = Guardrails::default().with_max_depth(1);
        assert!(CrawlRequest::builder("https://example.com/")
            .guardrails(g)
            .build()
            .is_err());
        let r = CrawlRequest::builder("https://example.com/")
            .max_depth(9)
            .max_pages(10_000)
            .rate(None)
            .guardrails(Guardrails::lifted())
            .build()
            .unwrap();
        assert_eq!(r.min_interval(), None);
    }

    #[test]
    fn root_must_be_http_without_credentials() {
        for bad in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "gopher://x/",
            "data:text/html,hi",
            "not a url",
            "https://u:p@example.com/",
        ] {
            let e = CrawlRequest::builder(bad).build().unwrap_err();
            assert!(
                e.to_string().starts_with("invalid_input: url"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn patterns_are_validated_when_the_request_is_built() {
        let e = CrawlRequest::builder("https://example.com/registrar")
            .include(["/registrar/[x"])
            .build()
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        assert!(
            e.to_string()
                .starts_with("invalid_input: include: pattern '/registrar/[x'"),
            "{e}"
        );
        let e = CrawlRequest::builder("https://example.com/registrar")
            .exclude(["print/**"])
            .build()
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid_input: exclude: pattern 'print/**'"),
            "{e}"
        );
        let r = CrawlRequest::builder("https://example.com/registrar")
            .include(["/registrar/**"])
            .exclude(["**/print/**"])
            .build()
            .unwrap();
        assert_eq!(r.include, vec!["/registrar/**".to_owned()]);
        r.validate(&Guardrails::default()).unwrap();
    }

    #[test]
    fn the_root_must_be_kept_by_the_patterns() {
        let e = CrawlRequest::builder("https://example.com/")
            .include(["/registrar/**"])
            .build()
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid_input: include: the root URL"),
            "{e}"
        );
        let e = CrawlRequest::builder("https://example.com/print/x")
            .exclude(["**/print/**"])
            .build()
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid_input: exclude: the root URL"),
            "{e}"
        );
        // Included but also excluded: the error names exclude.
        let e = CrawlRequest::builder("https://example.com/registrar/print")
            .include(["/registrar/**"])
            .exclude(["**/print"])
            .build()
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("invalid_input: exclude: the root URL"),
            "{e}"
        );
    }

    #[test]
    fn a_record_without_the_new_fields_still_reads() {
        let r = CrawlRequest::builder("https://example.com/")
            .build()
            .unwrap();
        let mut j = serde_json::to_value(&r).unwrap();
        let o = j.as_object_mut().unwrap();
        assert!(!o.contains_key("include") && !o.contains_key("exclude"));
        o.remove("sitemap");
        let back: CrawlRequest = serde_json::from_value(j).unwrap();
        assert_eq!(back.sitemap, SitemapMode::Auto);
        assert_eq!(r, back);
    }

    #[test]
    fn serde_round_trip() {
        let r = CrawlRequest::builder("https://example.com/")
            .build()
            .unwrap();
        let j = serde_json::to_string(&r).unwrap();
        let back: CrawlRequest = serde_json::from_str(&j).unwrap();
        assert_eq!(r, back);
        back.validate(&Guardrails::default()).unwrap();
    }
}

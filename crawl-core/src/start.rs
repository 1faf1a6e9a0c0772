//! What an API caller may ask for ([`StartCrawl`], the body of `POST /assistants/{id}/crawl`)
//! and what only the deployment decides ([`CrawlPolicy`]): the network policy, robots.txt,
//! crawl delay, concurrency and rate never come from a request body.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::request::{CrawlRequest, Guardrails, RenderMode, SitemapMode, DEFAULT_USER_AGENT};

/// The body of `POST /assistants/{assistant_id}/crawl`, the same for the embedded job API and
/// the serverless Init event (`request`). Only the fields the feature request names (plus the
/// render mode); every one is optional except `url`, and defaults fill the rest. An unknown
/// field is refused, naming it: `allowPrivateNetwork` and the other policy switches are not
/// part of the body.
///
/// A new optional field is one line here (the field with `skip_serializing_if`) and one line
/// in [`StartCrawl::into_request`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct StartCrawl {
    /// The root URL (required; `None` is refused by [`into_request`](Self::into_request)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Link hops from the root; the deployment's default (2) when absent.
    #[serde(
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_depth: Option<u64>,
    /// Cap on pages fetched; the deployment's default (100) when absent.
    #[serde(
        deserialize_with = "whole_number",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_pages: Option<u64>,
    /// When to use the browser (`never`, `always`, `auto`); `never` when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub render: Option<RenderMode>,
    /// Glob patterns on the URL path (and query) a page must match one of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include: Option<Vec<String>>,
    /// Glob patterns that keep a page out (they win over `include`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclude: Option<Vec<String>>,
    /// Whether sitemaps add URLs (`auto`, `off`); `auto` when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sitemap: Option<SitemapMode>,
    /// Pass same-site PDF and DOCX links through to an ingestor that accepts them; false
    /// when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linked_documents: Option<bool>,
}

/// A non-negative whole number, or null.
fn whole_number<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<u64>, D::Error> {
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) if n.is_u64() => Ok(n.as_u64()),
        Some(_) => Err(serde::de::Error::custom(
            "must be a whole number, at least 0",
        )),
    }
}

impl StartCrawl {
    /// A body for `url` with every optional field left to the defaults.
    pub fn new(url: impl Into<String>) -> Self {
        StartCrawl {
            url: Some(url.into()),
            ..StartCrawl::default()
        }
    }

    /// Reads a body from a JSON object; an error names the first field at fault
    /// (`maxDepth: must be a whole number, at least 0`, `allowPrivateNetwork: unknown field ...`).
    pub fn from_object(body: Map<String, Value>) -> Result<Self> {
        for (key, value) in &body {
            let one = Map::from_iter([(key.clone(), value.clone())]);
            if let Err(e) = serde_json::from_value::<StartCrawl>(Value::Object(one)) {
                return Err(Error::invalid(format!("{key}: {e}")));
            }
        }
        serde_json::from_value(Value::Object(body))
            .map_err(|e| Error::invalid(format!("body: {e}")))
    }

    /// The crawl request: this body's fields, the deployment's `policy` for everything else,
    /// validated against `guardrails` (an error names the field and the limit).
    pub fn into_request(
        self,
        policy: &CrawlPolicy,
        guardrails: &Guardrails,
    ) -> Result<CrawlRequest> {
        let url = self.url.ok_or_else(|| Error::invalid("url: is required"))?;
        // Beyond u32 saturates, so the guardrail message names the limit.
        let count = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        let mut b = CrawlRequest::builder(url)
            .allow_private_network(policy.allow_private_network)
            .respect_robots(policy.respect_robots)
            .max_crawl_delay(policy.max_crawl_delay)
            .concurrency(policy.concurrency)
            .rate(policy.rate)
            .user_agent(policy.user_agent.clone())
            .guardrails(*guardrails);
        if let Some(d) = self.max_depth {
            b = b.max_depth(count(d));
        }
        if let Some(p) = self.max_pages {
            b = b.max_pages(count(p));
        }
        if let Some(r) = self.render {
            b = b.render(r);
        }
        if let Some(p) = self.include {
            b = b.include(p);
        }
        if let Some(p) = self.exclude {
            b = b.exclude(p);
        }
        if let Some(m) = self.sitemap {
            b = b.sitemap(m);
        }
        if let Some(on) = self.linked_documents {
            b = b.linked_documents(on);
        }
        b.build()
    }
}

impl From<&CrawlRequest> for StartCrawl {
    /// The caller's part of a request (what a runner forwards to a worker that applies its own
    /// policy).
    fn from(r: &CrawlRequest) -> Self {
        StartCrawl {
            url: Some(r.url.to_string()),
            max_depth: Some(u64::from(r.max_depth)),
            max_pages: Some(u64::from(r.max_pages)),
            render: Some(r.render),
            include: (!r.include.is_empty()).then(|| r.include.clone()),
            exclude: (!r.exclude.is_empty()).then(|| r.exclude.clone()),
            sitemap: Some(r.sitemap),
            linked_documents: r.linked_documents.then_some(true),
        }
    }
}

/// What the deployment decides for every crawl it runs, whatever the caller asks: set by the
/// host (serve's flags, the Lambda's `KB_CRAWL_POLICY`), never by a request body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
#[serde(default, deny_unknown_fields, rename_all = "camelCase")]
pub struct CrawlPolicy {
    /// Let crawls reach private, loopback and link-local hosts. Default false.
    pub allow_private_network: bool,
    /// Obey robots.txt. Default true.
    pub respect_robots: bool,
    /// Upper bound for a robots.txt `Crawl-delay`, in seconds. Default 10.
    #[serde(with = "crate::request::secs")]
    pub max_crawl_delay: Duration,
    /// Pages in flight at once. Default 4.
    pub concurrency: usize,
    /// Requests per second per host (`null`: unlimited, if the guardrails allow). Default 2.
    pub rate: Option<f64>,
    /// User agent sent and matched against robots.txt.
    pub user_agent: String,
}

impl Default for CrawlPolicy {
    fn default() -> Self {
        CrawlPolicy {
            allow_private_network: false,
            respect_robots: true,
            max_crawl_delay: Duration::from_secs(10),
            concurrency: 4,
            rate: Some(2.0),
            user_agent: DEFAULT_USER_AGENT.to_owned(),
        }
    }
}

impl CrawlPolicy {
    /// This policy, letting crawls reach private hosts or not.
    #[must_use]
    pub fn with_allow_private_network(mut self, allow: bool) -> Self {
        self.allow_private_network = allow;
        self
    }

    /// This policy with another per-host rate (`None`: unlimited).
    #[must_use]
    pub fn with_rate(mut self, rate: Option<f64>) -> Self {
        self.rate = rate;
        self
    }

    /// This policy with another concurrency.
    #[must_use]
    pub fn with_concurrency(mut self, c: usize) -> Self {
        self.concurrency = c;
        self
    }

    /// This policy obeying robots.txt or not.
    #[must_use]
    pub fn with_respect_robots(mut self, r: bool) -> Self {
        self.respect_robots = r;
        self
    }

    /// This policy with another `Crawl-delay` bound.
    #[must_use]
    pub fn with_max_crawl_delay(mut self, d: Duration) -> Self {
        self.max_crawl_delay = d;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn patterns_and_sitemap_mode_are_taken_and_a_bad_pattern_names_its_field() {
        let body = StartCrawl::from_object(object(json!({
            "url": "https://www.example.edu/registrar",
            "include": ["/registrar/**"],
            "exclude": ["**/print/**"],
            "sitemap": "off"
        })))
        .unwrap();
        let r = body
            .clone()
            .into_request(&CrawlPolicy::default(), &Guardrails::default())
            .unwrap();
        assert_eq!(r.include, vec!["/registrar/**".to_string()]);
        assert_eq!(r.exclude, vec!["**/print/**".to_string()]);
        assert_eq!(r.sitemap, SitemapMode::Off);
        let back = StartCrawl::from(&r);
        assert_eq!(
            (back.include, back.exclude, back.sitemap),
            (body.include, body.exclude, body.sitemap)
        );
        let bad = StartCrawl::from_object(object(json!({
            "url": "https://www.example.edu/",
            "exclude": ["/a/[z-a]"]
        })))
        .unwrap()
        .into_request(&CrawlPolicy::default(), &Guardrails::default())
        .unwrap_err();
        assert!(bad.to_string().contains("exclude"), "{bad}");
        let wrong = StartCrawl::from_object(object(
            json!({"url": "https://a.test/", "sitemap": "always"}),
        ))
        .unwrap_err();
        assert!(
            wrong.to_string().contains("sitemap: unknown variant"),
            "{wrong}"
        );
    }

    #[test]
    fn linked_documents_is_taken_from_the_body_and_named_when_wrong() {
        let body = StartCrawl::from_object(object(
            json!({"url": "https://a.test/", "linkedDocuments": true}),
        ))
        .unwrap();
        let r = body
            .into_request(&CrawlPolicy::default(), &Guardrails::default())
            .unwrap();
        assert!(r.linked_documents);
        let back = serde_json::to_value(StartCrawl::from(&r)).unwrap();
        assert_eq!(back["linkedDocuments"], json!(true));
        // Absent or false: off, and the forwarded body does not name it.
        let off = StartCrawl::new("https://a.test/")
            .into_request(&CrawlPolicy::default(), &Guardrails::default())
            .unwrap();
        assert!(!off.linked_documents);
        let back = serde_json::to_value(StartCrawl::from(&off)).unwrap();
        assert!(back.get("linkedDocuments").is_none(), "{back}");
        let e = StartCrawl::from_object(object(
            json!({"url": "https://a.test/", "linkedDocuments": "yes"}),
        ))
        .unwrap_err();
        assert!(e.message().starts_with("linkedDocuments:"), "{e}");
    }

    #[test]
    fn the_documented_body_is_enough() {
        let body = StartCrawl::from_object(object(
            json!({"url": "https://www.boisestate.edu/registrar", "maxDepth": 3, "maxPages": 100}),
        ))
        .unwrap();
        let r = body
            .into_request(&CrawlPolicy::default(), &Guardrails::default())
            .unwrap();
        assert_eq!((r.max_depth, r.max_pages, r.concurrency), (3, 100, 4));
        assert!(!r.allow_private_network && r.respect_robots);
        let r: StartCrawl = serde_json::from_value(json!({"url": "https://a.test/"})).unwrap();
        let r = r
            .into_request(&CrawlPolicy::default(), &Guardrails::default())
            .unwrap();
        assert_eq!((r.max_depth, r.max_pages), (2, 100));
    }

    #[test]
    fn policy_fields_in_a_body_are_refused_by_name() {
        for field in [
            "allowPrivateNetwork",
            "respectRobots",
            "maxCrawlDelay",
            "concurrency",
            "rate",
            "userAgent",
        ] {
            let body = object(json!({"url": "https://a.test/", field: true}));
            let e = StartCrawl::from_object(body.clone()).unwrap_err();
            assert!(
                e.message().starts_with(&format!("{field}: unknown field")),
                "{e}"
            );
            assert!(serde_json::from_value::<StartCrawl>(Value::Object(body)).is_err());
        }
    }

    #[test]
    fn the_policy_comes_from_the_deployment() {
        let policy = CrawlPolicy::default().with_allow_private_network(true);
        let r = StartCrawl::new("http://127.0.0.1/")
            .into_request(&policy, &Guardrails::default())
            .unwrap();
        assert!(r.allow_private_network);
        let round: StartCrawl =
            serde_json::from_value(serde_json::to_value(StartCrawl::from(&r)).unwrap()).unwrap();
        assert_eq!(round.url.as_deref(), Some("http://127.0.0.1/"));
    }
}

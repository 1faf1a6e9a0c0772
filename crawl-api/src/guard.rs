//! [`SiteGuard`]: refuses what a web page on another site can make a browser send to the job
//! API (simple cross-site POSTs, DNS rebinding), before the authorizer runs.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{CONTENT_TYPE, HOST, ORIGIN};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// The `Host` names the router answers for and the `Origin`s it accepts on unsafe methods.
///
/// - `Host` must be one of the allowed hosts (default: `localhost`, `127.0.0.1`, `[::1]` on any
///   port): a page that rebinds its own name to the server's address still sends its own name.
///   A request without `Host` (not a browser) passes.
/// - `POST`, `PUT`, `PATCH`, `DELETE` with an `Origin` header must come from the same origin
///   (the origin's host and port equal `Host`) or from an allowed origin; `Origin: null` is
///   refused. Without `Origin` (not a browser) they pass.
/// - A request with a body method must say `Content-Type: application/json` (415 otherwise):
///   the content types a page can send without a CORS preflight are all refused.
#[derive(Debug, Clone)]
pub struct SiteGuard {
    /// Allowed hosts, lowercase: `name` (any port) or `name:port`; `None` = any host.
    hosts: Option<Vec<String>>,
    /// Extra origins allowed on unsafe methods, lowercase, e.g. `https://app.example.edu`.
    origins: Vec<String>,
}

impl Default for SiteGuard {
    fn default() -> Self {
        SiteGuard {
            hosts: Some(vec!["localhost".into(), "127.0.0.1".into(), "[::1]".into()]),
            origins: Vec::new(),
        }
    }
}

/// Splits `name[:port]` (with `[v6]` brackets kept in the name), lowercased.
fn split_host(h: &str) -> (String, Option<&str>) {
    let h = h.trim();
    let (name, port) = if let Some(end) = h.strip_prefix('[').and_then(|r| r.find(']')) {
        let (n, rest) = h.split_at(end + 2);
        (n, rest.strip_prefix(':'))
    } else {
        match h.rsplit_once(':') {
            Some((n, p)) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => (n, Some(p)),
            _ => (h, None),
        }
    };
    (name.to_ascii_lowercase(), port)
}

impl SiteGuard {
    /// Answers only for these hosts: `name` (any port) or `name:port` (e.g. the public name
    /// a proxy forwards as `Host`). `"*"` allows any host.
    pub fn with_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let hosts: Vec<String> = hosts
            .into_iter()
            .map(|h| h.into().trim().to_ascii_lowercase())
            .collect();
        self.hosts = if hosts.iter().any(|h| h == "*") {
            None
        } else {
            Some(hosts)
        };
        self
    }

    /// Also accepts these origins (`scheme://host[:port]`) on unsafe methods, for a page
    /// served from another origin the host trusts.
    pub fn with_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.origins = origins
            .into_iter()
            .map(|o| o.into().trim().trim_end_matches('/').to_ascii_lowercase())
            .collect();
        self
    }

    fn host_allowed(&self, host: &str) -> bool {
        let Some(hosts) = &self.hosts else {
            return true;
        };
        let (name, port) = split_host(host);
        hosts.iter().any(|entry| {
            let (n, p) = split_host(entry);
            n == name && (p.is_none() || p == port)
        })
    }

    /// `Ok` when the request may go on; otherwise the answer to give.
    pub fn check(&self, method: &Method, headers: &HeaderMap) -> Result<(), ApiError> {
        let host = match headers.get(HOST).map(|h| h.to_str()) {
            None => None,
            Some(Ok(h)) => Some(h),
            Some(Err(_)) => return Err(ApiError::forbidden("Host: not a valid host name")),
        };
        if let Some(h) = host {
            if !self.host_allowed(h) {
                return Err(ApiError::forbidden(format!(
                    "Host: this server does not answer for '{h}' (configure the allowed hosts)"
                )));
            }
        }
        let unsafe_method = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
        if unsafe_method {
            if let Some(origin) = headers.get(ORIGIN) {
                let origin = origin
                    .to_str()
                    .unwrap_or("null")
                    .trim()
                    .trim_end_matches('/')
                    .to_ascii_lowercase();
                let authority = origin.split_once("://").map(|(_, a)| a);
                let same = matches!((authority, host), (Some(a), Some(h)) if a == h.trim().to_ascii_lowercase());
                if !same && !self.origins.contains(&origin) {
                    return Err(ApiError::forbidden(format!(
                        "Origin: cross-site requests from '{origin}' are refused"
                    )));
                }
            }
        }
        if matches!(*method, Method::POST | Method::PUT | Method::PATCH) {
            let media = headers
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split(';').next())
                .map(|v| v.trim().to_ascii_lowercase());
            if media.as_deref() != Some("application/json") {
                return Err(ApiError::new(
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    None,
                    "Content-Type: the body must be application/json",
                ));
            }
        }
        Ok(())
    }
}

/// The middleware: runs [`SiteGuard::check`] before the route.
pub(crate) async fn guard(State(g): State<Arc<SiteGuard>>, req: Request, next: Next) -> Response {
    match g.check(req.method(), req.headers()) {
        Ok(()) => next.run(req).await,
        Err(e) => e.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_match_by_name_and_optional_port() {
        let g = SiteGuard::default();
        assert!(g.host_allowed("127.0.0.1:8080"));
        assert!(g.host_allowed("LOCALHOST"));
        assert!(g.host_allowed("[::1]:3000"));
        assert!(!g.host_allowed("evil.test:8080"));
        assert!(!g.host_allowed("127.0.0.1.evil.test"));
        let g = SiteGuard::default().with_hosts(["kb.example.edu:443", "api.example.edu"]);
        assert!(g.host_allowed("kb.example.edu:443"));
        assert!(!g.host_allowed("kb.example.edu:8443"));
        assert!(g.host_allowed("api.example.edu:1"));
        assert!(!g.host_allowed("127.0.0.1"));
        assert!(SiteGuard::default()
            .with_hosts(["*"])
            .host_allowed("anything"));
    }
}

use url::Url;

use crate::request::{CrawlRequest, WwwPolicy};

/// The domain lock of a crawl: the root's host (with or without `www.` when
/// [`WwwPolicy::Equivalent`]), its port, http or https, optionally under a path prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    host: String,
    www: WwwPolicy,
    port: Option<u16>,
    path_prefix: Option<String>,
}

impl Scope {
    /// The scope of `req`.
    pub fn of(req: &CrawlRequest) -> Self {
        Self::new(&req.url, req.www, req.path_prefix.clone())
    }

    /// A scope rooted at `root`.
    pub fn new(root: &Url, www: WwwPolicy, path_prefix: Option<String>) -> Self {
        let host = root.host_str().unwrap_or_default().to_ascii_lowercase();
        let host = host.trim_end_matches('.').to_owned();
        let host = match www {
            WwwPolicy::Equivalent => host.strip_prefix("www.").unwrap_or(&host).to_owned(),
            WwwPolicy::Exact => host,
        };
        Scope {
            host,
            www,
            port: root.port(),
            path_prefix,
        }
    }

    /// Whether `www.` is folded.
    pub fn folds_www(&self) -> bool {
        self.www == WwwPolicy::Equivalent
    }

    /// Whether `url` belongs to the crawl.
    pub fn contains(&self, url: &Url) -> bool {
        if url.scheme() != "http" && url.scheme() != "https" {
            return false;
        }
        let Some(h) = url.host_str() else {
            return false;
        };
        let h = h.trim_end_matches('.');
        let host_ok = match self.www {
            WwwPolicy::Equivalent => {
                h.eq_ignore_ascii_case(&self.host)
                    || h.strip_prefix("www.")
                        .is_some_and(|r| r.eq_ignore_ascii_case(&self.host))
            }
            WwwPolicy::Exact => h.eq_ignore_ascii_case(&self.host),
        };
        if !host_ok || url.port() != self.port {
            return false;
        }
        match &self.path_prefix {
            Some(p) => url.path().starts_with(p.as_str()),
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn domain_lock() {
        let s = Scope::new(&u("https://www.example.com/"), WwwPolicy::Equivalent, None);
        assert!(s.contains(&u("https://example.com/a")));
        assert!(s.contains(&u("http://www.example.com/b")));
        assert!(!s.contains(&u("https://sub.example.com/")));
        assert!(!s.contains(&u("https://example.com.evil.com/")));
        assert!(!s.contains(&u("https://example.com:8443/")));
        assert!(!s.contains(&u("ftp://example.com/")));
        let exact = Scope::new(
            &u("https://example.com/"),
            WwwPolicy::Exact,
            Some("/docs".into()),
        );
        assert!(!exact.contains(&u("https://www.example.com/docs")));
        assert!(exact.contains(&u("https://example.com/docs/a")));
        assert!(!exact.contains(&u("https://example.com/blog")));
        let port = Scope::new(&u("http://127.0.0.1:8080/"), WwwPolicy::Equivalent, None);
        assert!(port.contains(&u("http://127.0.0.1:8080/x")));
        assert!(!port.contains(&u("http://127.0.0.1:8081/x")));
    }
}

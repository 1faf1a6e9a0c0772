//! The one public error type of kb-crawl.

use std::borrow::Cow;
use std::fmt;

use url::Url;

/// What went wrong, in a form callers can match on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A request or configuration value was refused; the message names the field and limit.
    InvalidInput,
    /// The URL is outside the crawl's scope (other host, other scheme).
    OutOfScope,
    /// The network policy refused the host (private, loopback, metadata address...).
    PolicyRefused,
    /// robots.txt disallows the URL.
    RobotsDisallowed,
    /// robots.txt could not be fetched (5xx, unreachable): RFC 9309 says disallow all.
    RobotsUnreachable,
    /// Connection, DNS or protocol failure.
    Network,
    /// A connect, read or total deadline passed.
    Timeout,
    /// The server answered with a status that is not a page (4xx, 5xx).
    HttpStatus,
    /// The body was larger than the configured cap.
    TooLarge,
    /// The response is not HTML.
    NotHtml,
    /// Too many redirects, or a redirect loop.
    TooManyRedirects,
    /// The headless browser failed.
    RenderFailed,
    /// The page never settled before its render deadline.
    RenderTimeout,
    /// A storage backend failed.
    Storage,
    /// The job, document or key does not exist.
    NotFound,
    /// A conditional update lost (state changed under us).
    Conflict,
    /// The job was cancelled.
    Cancelled,
    /// The backend cannot do what was asked.
    Unsupported,
    /// A bug or an impossible state.
    Internal,
}

impl ErrorKind {
    /// Stable snake_case code used in summaries, logs and Lambda `errorType`s.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::OutOfScope => "out_of_scope",
            ErrorKind::PolicyRefused => "network_policy",
            ErrorKind::RobotsDisallowed => "robots_disallowed",
            ErrorKind::RobotsUnreachable => "robots_unreachable",
            ErrorKind::Network => "network_error",
            ErrorKind::Timeout => "timeout",
            ErrorKind::HttpStatus => "http_status",
            ErrorKind::TooLarge => "too_large",
            ErrorKind::NotHtml => "not_html",
            ErrorKind::TooManyRedirects => "too_many_redirects",
            ErrorKind::RenderFailed => "render_failed",
            ErrorKind::RenderTimeout => "render_timeout",
            ErrorKind::Storage => "storage",
            ErrorKind::NotFound => "not_found",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Internal => "internal",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The error of every kb-crawl operation: a kind, whether retrying may help, the URL and the
/// backend involved, and the underlying cause.
pub struct Error {
    kind: ErrorKind,
    temporary: bool,
    message: Cow<'static, str>,
    url: Option<Box<Url>>,
    backend: Option<Cow<'static, str>>,
    status: Option<u16>,
    source: Option<Source>,
}

/// Result alias used across kb-crawl.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A new error of `kind` with a human message. Temporary when the kind usually is
    /// (network, timeout, storage).
    pub fn new(kind: ErrorKind, message: impl Into<Cow<'static, str>>) -> Self {
        let temporary = matches!(
            kind,
            ErrorKind::Network | ErrorKind::Timeout | ErrorKind::Storage
        );
        Error {
            kind,
            temporary,
            message: message.into(),
            url: None,
            backend: None,
            status: None,
            source: None,
        }
    }

    /// Shorthand for an [`ErrorKind::InvalidInput`] error.
    pub fn invalid(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Whether retrying the same operation later may succeed.
    pub fn is_temporary(&self) -> bool {
        self.temporary
    }

    /// The URL being processed, when there is one.
    pub fn url(&self) -> Option<&Url> {
        self.url.as_deref()
    }

    /// The backend that failed, as its `Display` names it.
    pub fn backend(&self) -> Option<&str> {
        self.backend.as_deref()
    }

    /// The HTTP status, for [`ErrorKind::HttpStatus`].
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// The message without kind, URL or backend.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Sets whether the error is temporary.
    pub fn with_temporary(mut self, temporary: bool) -> Self {
        self.temporary = temporary;
        self
    }

    /// Attaches the URL being processed.
    pub fn with_url(mut self, url: &Url) -> Self {
        self.url = Some(Box::new(url.clone()));
        self
    }

    /// Attaches the backend's name.
    pub fn with_backend(mut self, backend: impl Into<Cow<'static, str>>) -> Self {
        self.backend = Some(backend.into());
        self
    }

    /// Attaches an HTTP status.
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// Attaches the underlying cause.
    pub fn with_source(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// The stable code that names this failure in summaries (`http_404`, `timeout`...).
    pub fn code(&self) -> Cow<'static, str> {
        match (self.kind, self.status) {
            (ErrorKind::HttpStatus, Some(s)) => Cow::Owned(format!("http_{s}")),
            (k, _) => Cow::Borrowed(k.code()),
        }
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("Error");
        d.field("kind", &self.kind)
            .field("temporary", &self.temporary)
            .field("message", &self.message);
        if let Some(u) = &self.url {
            d.field("url", &u.as_str());
        }
        if let Some(b) = &self.backend {
            d.field("backend", b);
        }
        if let Some(s) = self.status {
            d.field("status", &s);
        }
        if let Some(s) = &self.source {
            d.field("source", s);
        }
        d.finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code(), self.message)?;
        if let Some(u) = &self.url {
            write!(f, " (url: {u})")?;
        }
        if let Some(b) = &self.backend {
            write!(f, " [{b}]")?;
        }
        if let Some(s) = &self.source {
            write!(f, ": {s}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|s| s.as_ref() as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_kind_url_and_backend() {
        let url = Url::parse("https://example.com/a").unwrap();
        let e = Error::new(ErrorKind::HttpStatus, "server said no")
            .with_status(404)
            .with_url(&url)
            .with_backend("HttpFetcher");
        assert_eq!(e.code(), "http_404");
        assert!(!e.is_temporary());
        let s = e.to_string();
        assert!(
            s.contains("http_404")
                && s.contains("https://example.com/a")
                && s.contains("HttpFetcher"),
            "{s}"
        );
    }

    #[test]
    fn network_errors_are_temporary() {
        assert!(Error::new(ErrorKind::Network, "reset").is_temporary());
        assert!(!Error::invalid("bad").is_temporary());
    }
}

//! Retries with exponential backoff, full jitter and `Retry-After`.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use backon::{ExponentialBuilder, Retryable};
use url::Url;

use crate::error::{Error, Result};
use crate::job::JobId;
use crate::page::{FetchRequest, FetchResponse};
use crate::Fetcher;

/// Retries temporary errors ([`Error::is_temporary`]) and the statuses 429, 502, 503 and
/// 504, at most `max_attempts` attempts in all (default 3). Between attempts it waits the
/// `Retry-After` of the answer (seconds or HTTP date) when there is one — and gives up at
/// once, returning that answer, when it asks for more than `max_retry_after` (default
/// 30 s) — otherwise an exponential backoff (`base`, `2·base`, … up to `max_delay`) with
/// full jitter (a uniform wait between zero and the backoff). Non-temporary errors are
/// returned at once. After the last attempt the last answer or error is returned as is.
///
/// The schedule and the loop come from the `backon` crate; its own jitter is additive, so
/// full jitter is applied in its `adjust` hook, which also substitutes `Retry-After`.
pub struct RetryLayer {
    inner: Arc<dyn Fetcher>,
    max_attempts: usize,
    base: Duration,
    max_delay: Duration,
    max_retry_after: Duration,
}

impl fmt::Debug for RetryLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryLayer")
            .field("inner", &self.inner)
            .field("max_attempts", &self.max_attempts)
            .field("base", &self.base)
            .field("max_delay", &self.max_delay)
            .field("max_retry_after", &self.max_retry_after)
            .finish()
    }
}

impl fmt::Display for RetryLayer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RetryLayer({})", self.inner)
    }
}

/// One failed attempt: a retryable status or an error.
enum Failed {
    Status(FetchResponse),
    Error(Error),
}

impl Failed {
    fn retryable(&self) -> bool {
        match self {
            Failed::Status(_) => true,
            Failed::Error(e) => e.is_temporary(),
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            Failed::Status(r) => r
                .header("retry-after")
                .and_then(|v| parse_retry_after(v, SystemTime::now())),
            Failed::Error(_) => None,
        }
    }
}

impl RetryLayer {
    /// Wraps `inner` with the defaults: 3 attempts, backoff from 500 ms up to 10 s,
    /// `Retry-After` honoured up to 30 s.
    pub fn new(inner: Arc<dyn Fetcher>) -> Self {
        RetryLayer {
            inner,
            max_attempts: 3,
            base: Duration::from_millis(500),
            max_delay: Duration::from_secs(10),
            max_retry_after: Duration::from_secs(30),
        }
    }

    /// At most `n` attempts in all (1 = no retry).
    pub fn with_max_attempts(mut self, n: usize) -> Self {
        self.max_attempts = n.max(1);
        self
    }

    /// The first backoff and the largest one (before jitter).
    pub fn with_backoff(mut self, base: Duration, max: Duration) -> Self {
        self.base = base;
        self.max_delay = max.max(base);
        self
    }

    /// The longest `Retry-After` waited for; a longer one ends the retries.
    pub fn with_max_retry_after(mut self, cap: Duration) -> Self {
        self.max_retry_after = cap;
        self
    }
}

fn retryable_status(status: u16) -> bool {
    matches!(status, 429 | 502 | 503 | 504)
}

fn full_jitter(d: Duration) -> Duration {
    d.mul_f64(rand::random::<f64>())
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl Fetcher for RetryLayer {
    async fn fetch(&self, req: &FetchRequest) -> Result<FetchResponse> {
        let backoff = ExponentialBuilder::default()
            .with_min_delay(self.base)
            .with_max_delay(self.max_delay)
            .with_factor(2.0)
            .with_max_times(self.max_attempts - 1);
        let cap = self.max_retry_after;
        let attempt = || async {
            match self.inner.fetch(req).await {
                Ok(r) if retryable_status(r.status) => Err(Failed::Status(r)),
                Ok(r) => Ok(r),
                Err(e) => Err(Failed::Error(e)),
            }
        };
        let result = attempt
            .retry(backoff)
            .sleep(tokio::time::sleep)
            .when(Failed::retryable)
            .adjust(|failed, next| {
                // `next` is None once the attempts are used up: stop whatever the server says.
                let next = next?;
                match failed.retry_after() {
                    Some(ra) if ra > cap => None,
                    Some(ra) => Some(ra),
                    None => Some(full_jitter(next)),
                }
            })
            .await;
        match result {
            Ok(r) | Err(Failed::Status(r)) => Ok(r),
            Err(Failed::Error(e)) => Err(e),
        }
    }

    async fn check(&self, url: &Url, job: Option<&JobId>) -> Result<()> {
        self.inner.check(url, job).await
    }

    async fn pace(&self, url: &Url, job: Option<&JobId>) -> Result<()> {
        self.inner.pace(url, job).await
    }
}

/// Parses a `Retry-After` value: delay seconds or an HTTP date (a date in the past means
/// no wait). `None` when it is neither.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let v = value.trim();
    if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) {
        // Absurdly long digit strings saturate rather than fail.
        return Some(Duration::from_secs(v.parse::<u64>().unwrap_or(u64::MAX)));
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = httpdate::parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        assert_eq!(
            parse_retry_after("120", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:50:37 GMT", now),
            Some(Duration::from_secs(60))
        );
        // RFC 850 and asctime forms.
        assert_eq!(
            parse_retry_after("Sunday, 06-Nov-94 08:49:47 GMT", now),
            Some(Duration::from_secs(10))
        );
        assert_eq!(
            parse_retry_after("Sun Nov  6 08:49:57 1994", now),
            Some(Duration::from_secs(20))
        );
        assert_eq!(
            parse_retry_after("Sat, 05 Nov 1994 08:49:37 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-5", now), None);
        assert_eq!(parse_retry_after("", now), None);
        assert_eq!(
            parse_retry_after("99999999999999999999999", now),
            Some(Duration::from_secs(u64::MAX))
        );
    }

    #[test]
    fn full_jitter_stays_within_backoff() {
        for _ in 0..1000 {
            let d = full_jitter(Duration::from_secs(2));
            assert!(d <= Duration::from_secs(2));
        }
    }
}

//! Time source, injectable so TTL windows can be tested without waiting.

use std::fmt::Debug;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use time::OffsetDateTime;

/// A source of the current time.
pub trait Clock: Debug + Send + Sync + 'static {
    /// Now, in UTC.
    fn now(&self) -> OffsetDateTime;
}

/// Shared clock handle.
pub type DynClock = Arc<dyn Clock>;

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> OffsetDateTime {
        OffsetDateTime::now_utc()
    }
}

/// A clock that only moves when told to (for tests of TTL windows).
#[derive(Debug, Default)]
pub struct ManualClock {
    unix_ms: AtomicI64,
}

impl ManualClock {
    /// A clock standing at `t`.
    pub fn new(t: OffsetDateTime) -> Self {
        ManualClock {
            unix_ms: AtomicI64::new((t.unix_timestamp_nanos() / 1_000_000) as i64),
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, d: std::time::Duration) {
        self.unix_ms
            .fetch_add(d.as_millis() as i64, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> OffsetDateTime {
        let ms = self.unix_ms.load(Ordering::SeqCst);
        OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
            .unwrap_or(OffsetDateTime::UNIX_EPOCH)
    }
}

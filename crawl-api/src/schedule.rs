//! When a source's scheduled runs are due: [`check`] a [`Schedule`] and compute
//! [`next_after`] a time, and the embedded [`Scheduler`] that starts due runs.
//!
//! Cron expressions have five fields (minute hour day-of-month month day-of-week) and are
//! evaluated by `croner` in the schedule's IANA time zone (`chrono-tz`), so "03:00 in
//! America/Boise" stays 03:00 across daylight-saving changes.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use chrono_tz::Tz;
use crawl_core::{Error, ErrorKind, Result, Schedule, SourceRecord};
use time::OffsetDateTime;
use tokio_util::sync::CancellationToken;

use crate::state::ApiState;

/// Where a deployment keeps its sources' schedules when something other than the embedded
/// [`Scheduler`] fires them (serverless: one EventBridge Scheduler schedule per source). The
/// source routes call it as a source is created, edited and deleted.
///
/// # Contract
/// - `put` makes the schedule of `source` what its record says: created or replaced, and
///   removed when the record's schedule is [`Schedule::None`]. Idempotent.
/// - `delete` removes the schedule of the source, if any. Idempotent.
/// - A failure is an error; the route then answers it and the caller retries.
#[async_trait::async_trait]
pub trait ScheduleStore: std::fmt::Debug + std::fmt::Display + Send + Sync + 'static {
    /// Creates, replaces or (without a schedule) removes the schedule of `source`.
    async fn put(&self, source: &SourceRecord) -> Result<()>;
    /// Removes the schedule of `source`.
    async fn delete(&self, source: &crawl_core::SourceId) -> Result<()>;
}

/// Shared schedule-store handle.
pub type DynScheduleStore = Arc<dyn ScheduleStore>;

/// Keeps schedules only in the source records (the default): the embedded [`Scheduler`]
/// reads them there.
#[derive(Debug, Clone, Copy, Default)]
pub struct InRecordSchedules;

impl std::fmt::Display for InRecordSchedules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InRecordSchedules")
    }
}

#[async_trait::async_trait]
impl ScheduleStore for InRecordSchedules {
    async fn put(&self, _source: &SourceRecord) -> Result<()> {
        Ok(())
    }
    async fn delete(&self, _source: &crawl_core::SourceId) -> Result<()> {
        Ok(())
    }
}

/// Checks that the schedule's cron expression and time zone are ones [`next_after`] can
/// evaluate; the error names `schedule.cron` or `schedule.timeZone`.
pub fn check(schedule: &Schedule) -> Result<()> {
    let Some((expr, tz)) = schedule.cron() else {
        return Ok(());
    };
    parse(expr, tz).map(drop)
}

fn parse(expr: &str, tz: &str) -> Result<(croner::Cron, Tz)> {
    let zone = Tz::from_str(tz).map_err(|_| {
        Error::invalid(format!(
            "schedule.timeZone: '{}' is not an IANA time zone name (e.g. America/Boise, UTC)",
            tz.chars().take(64).collect::<String>()
        ))
    })?;
    let fields = expr.split_whitespace().count();
    if fields != 5 {
        return Err(Error::invalid(format!(
            "schedule.cron: '{}' has {fields} fields; a cron expression has 5 (minute hour \
             day-of-month month day-of-week)",
            expr.chars().take(80).collect::<String>()
        )));
    }
    let cron = croner::Cron::from_str(expr).map_err(|e| {
        Error::invalid(format!(
            "schedule.cron: '{}' is not a cron expression ({e})",
            expr.chars().take(80).collect::<String>()
        ))
    })?;
    Ok((cron, zone))
}

/// The first time strictly after `t` the schedule fires; `None` for no schedule (or a cron
/// expression that never fires again).
pub fn next_after(schedule: &Schedule, t: OffsetDateTime) -> Result<Option<OffsetDateTime>> {
    let Some((expr, tz)) = schedule.cron() else {
        return Ok(None);
    };
    let (cron, zone) = parse(expr, tz)?;
    let secs = t.unix_timestamp();
    let Some(utc) = Utc.timestamp_opt(secs, t.nanosecond()).single() else {
        return Err(Error::invalid("schedule: the time is out of range"));
    };
    let local = utc.with_timezone(&zone);
    match cron.find_next_occurrence(&local, false) {
        Ok(next) => OffsetDateTime::from_unix_timestamp(next.timestamp())
            .map(Some)
            .map_err(|e| Error::new(ErrorKind::Internal, format!("schedule: {e}"))),
        Err(_) => Ok(None),
    }
}

/// Starts the scheduled runs of the sources of an [`ApiState`]'s runner (the embedded
/// `serve` process).
///
/// Each [`tick`](Self::tick) starts a run of every source whose `next_sync_at` has passed and
/// moves `next_sync_at` to the schedule's next time after now. So a window missed while the
/// process was down runs once at start-up (not once per missed window), and at most one run
/// per source goes at a time (a source still running is retried at the next tick). The time
/// lives in the source record: a run started just before a crash is recognised after the
/// restart (its start is at or after the due time) and not started again.
#[derive(Debug, Clone)]
pub struct Scheduler {
    state: ApiState,
}

impl Scheduler {
    /// A scheduler over the state's runner, source store, policy and clock.
    pub fn new(state: ApiState) -> Self {
        Scheduler { state }
    }

    /// Starts the runs due now; returns the sources started.
    pub async fn tick(&self) -> Result<Vec<SourceRecord>> {
        let Some(sources) = self.state.runner.sources() else {
            return Ok(Vec::new());
        };
        let now = self.state.clock.now();
        let mut started = Vec::new();
        for source in sources.list_all_sources().await? {
            match self.due(&source, now).await {
                Ok(Some(s)) => started.push(s),
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(source = %source.id, error = %e, "scheduled run not started")
                }
            }
        }
        Ok(started)
    }

    async fn due(
        &self,
        source: &SourceRecord,
        now: OffsetDateTime,
    ) -> Result<Option<SourceRecord>> {
        let Some(due) = source.next_sync_at else {
            return Ok(None);
        };
        if due > now {
            return Ok(None);
        }
        let Some(sources) = self.state.runner.sources() else {
            return Ok(None);
        };
        let last = match &source.last_run {
            Some(id) => self.state.jobs.get(id).await?,
            None => None,
        };
        if let Some(r) = &last {
            if !r.status.is_final() {
                // A run is going (started by hand, or this window's before a restart): one at
                // a time; the window is served once it ends.
                if r.started_at >= due {
                    self.advance(source, now).await?;
                }
                return Ok(None);
            }
            if r.started_at >= due {
                // This window's run already started (before a crash that kept the old time).
                self.advance(source, now).await?;
                return Ok(None);
            }
        }
        let request = crate::sources::request_of(&self.state, source)?;
        let (fresh, _job) = match self.state.runner.start_sync(&source.tenant, request).await {
            Ok(x) => x,
            Err(e) if e.kind() == ErrorKind::Conflict => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut fresh = fresh;
        fresh.next_sync_at = next_after(&fresh.schedule, now)?;
        sources.put_source(&fresh).await?;
        Ok(Some(fresh))
    }

    async fn advance(&self, source: &SourceRecord, now: OffsetDateTime) -> Result<()> {
        let Some(sources) = self.state.runner.sources() else {
            return Ok(());
        };
        let mut s = source.clone();
        s.next_sync_at = next_after(&s.schedule, now)?;
        sources.put_source(&s).await
    }

    /// Ticks every `every` until `stop` is cancelled (the first tick at once, so missed
    /// windows run at start-up).
    pub fn spawn(self, every: Duration, stop: CancellationToken) -> tokio::task::JoinHandle<()> {
        let me = Arc::new(self);
        tokio::spawn(async move {
            loop {
                if let Err(e) = me.tick().await {
                    tracing::warn!(error = %e, "scheduler tick failed");
                }
                tokio::select! {
                    () = stop.cancelled() => return,
                    () = tokio::time::sleep(every) => {}
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> OffsetDateTime {
        OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).unwrap()
    }

    #[test]
    fn next_times_follow_the_zone_across_daylight_saving() {
        let daily = Schedule::Daily {
            time_zone: "America/Boise".into(),
        };
        // 03:00 MST (UTC-7) in winter, 03:00 MDT (UTC-6) in summer.
        assert_eq!(
            next_after(&daily, at("2026-01-10T12:00:00Z")).unwrap(),
            Some(at("2026-01-11T10:00:00Z"))
        );
        assert_eq!(
            next_after(&daily, at("2026-07-10T12:00:00Z")).unwrap(),
            Some(at("2026-07-11T09:00:00Z"))
        );
        let weekly = Schedule::Weekly {
            time_zone: "UTC".into(),
        };
        // 2026-12-01 is a Tuesday: the next Sunday 03:00 is the 6th.
        assert_eq!(
            next_after(&weekly, at("2026-12-01T14:00:00Z")).unwrap(),
            Some(at("2026-12-06T03:00:00Z"))
        );
        let cron = Schedule::Cron {
            expr: "30 6 * * 1-5".into(),
            time_zone: "Europe/Paris".into(),
        };
        // Friday 2026-12-04 07:00 Paris is past 06:30; next is Monday the 7th, 05:30 UTC.
        assert_eq!(
            next_after(&cron, at("2026-12-04T06:00:00Z")).unwrap(),
            Some(at("2026-12-07T05:30:00Z"))
        );
        assert_eq!(
            next_after(&Schedule::None, at("2026-12-04T06:00:00Z")).unwrap(),
            None
        );
        // Strictly after: a time on the schedule gives the following one.
        assert_eq!(
            next_after(&weekly, at("2026-12-06T03:00:00Z")).unwrap(),
            Some(at("2026-12-13T03:00:00Z"))
        );
    }

    #[test]
    fn a_bad_expression_or_zone_is_refused_naming_the_field() {
        for (s, field) in [
            (
                Schedule::Cron {
                    expr: "61 * * * *".into(),
                    time_zone: "UTC".into(),
                },
                "schedule.cron",
            ),
            (
                Schedule::Cron {
                    expr: "0 3 * * * *".into(),
                    time_zone: "UTC".into(),
                },
                "schedule.cron",
            ),
            (
                Schedule::Cron {
                    expr: "0 3 * *".into(),
                    time_zone: "UTC".into(),
                },
                "schedule.cron",
            ),
            (
                Schedule::Daily {
                    time_zone: "Mars/Olympus".into(),
                },
                "schedule.timeZone",
            ),
        ] {
            let e = check(&s).unwrap_err();
            assert!(e.message().starts_with(field), "{s:?}: {e}");
            assert_eq!(e.kind(), ErrorKind::InvalidInput);
        }
        check(&Schedule::None).unwrap();
        check(&Schedule::Daily {
            time_zone: "UTC".into(),
        })
        .unwrap();
    }
}

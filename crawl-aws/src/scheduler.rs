//! [`EventBridgeSchedules`]: one EventBridge Scheduler schedule per source, starting the
//! crawl's state machine with a scheduled-sync input, created, replaced and deleted with the
//! source (a [`crawl_api::ScheduleStore`]).

use std::fmt;

use async_trait::async_trait;
use aws_sdk_scheduler::config::Credentials;
use aws_sdk_scheduler::types::{FlexibleTimeWindow, FlexibleTimeWindowMode, ScheduleState, Target};
use crawl_core::{Error, ErrorKind, Result, Schedule, SourceId, SourceRecord};

use crate::config::Connection;

/// The input a scheduled execution starts with: the Init handler begins a run of the source
/// (as "Sync now" does) instead of a crawl of a body.
pub fn scheduled_input(source: &SourceRecord) -> serde_json::Value {
    serde_json::json!({
        "scheduledSync": {
            "sourceId": source.id.as_str(),
            "assistantId": source.tenant,
            // Filled in by EventBridge Scheduler as it fires: the run's job id is derived
            // from it, so a re-delivered firing starts no second run.
            "scheduledTime": "<aws.scheduler.scheduled-time>",
        }
    })
}

/// A five-field cron expression (minute hour day-of-month month day-of-week, days of the week
/// 0–7 with Sunday 0 or 7) as an EventBridge `cron(...)` expression: six fields with a year,
/// days of the week 1–7 with Sunday 1, and `?` in whichever of the two day fields is `*`.
/// Refused (naming `schedule.cron`) when both day fields are restricted: cron runs on either,
/// EventBridge cannot say that.
pub fn eventbridge_cron(expr: &str) -> Result<String> {
    let f: Vec<&str> = expr.split_whitespace().collect();
    let [minute, hour, dom, month, dow] = f[..] else {
        return Err(Error::invalid(format!(
            "schedule.cron: '{expr}' does not have 5 fields"
        )));
    };
    let (dom, dow) = match (dom, dow) {
        (d, "*") => (d.to_owned(), "?".to_owned()),
        ("*", w) => ("?".to_owned(), shift_weekdays(w)?),
        _ => {
            return Err(Error::invalid(format!(
                "schedule.cron: '{expr}' restricts both the day of the month and the day of \
                 the week; EventBridge Scheduler runs on one of them (use * for the other)"
            )))
        }
    };
    Ok(format!("cron({minute} {hour} {dom} {month} {dow} *)"))
}

/// Days of the week from cron's 0–7 (Sunday 0 or 7) to EventBridge's 1–7 (Sunday 1); names
/// (`MON-FRI`) are the same in both.
fn shift_weekdays(field: &str) -> Result<String> {
    let day = |t: &str| -> Result<String> {
        match t.parse::<u8>() {
            Ok(n @ 0..=6) => Ok((n + 1).to_string()),
            Ok(7) => Ok("1".to_owned()),
            Ok(_) => Err(Error::invalid(format!(
                "schedule.cron: day of the week '{t}' is not 0 to 7"
            ))),
            Err(_) => Ok(t.to_owned()),
        }
    };
    let mut out = Vec::new();
    for part in field.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => (r, Some(s)),
            None => (part, None),
        };
        let range = match range.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (day(a)?, day(b)?);
                // Sunday as 7 ending a range (5-7) is EventBridge's 6-1: split it.
                if b == "1" && a != "1" {
                    format!("{a}-7,1")
                } else {
                    format!("{a}-{b}")
                }
            }
            None if range == "*" => "*".to_owned(),
            None => day(range)?,
        };
        out.push(match step {
            Some(s) => format!("{range}/{s}"),
            None => range,
        });
    }
    Ok(out.join(","))
}

/// One EventBridge Scheduler schedule per source (named after the source id, in one schedule
/// group), targeting the crawl's state machine with [`scheduled_input`] through a role that
/// may only start that state machine.
#[derive(Clone)]
pub struct EventBridgeSchedules {
    client: aws_sdk_scheduler::Client,
    group: String,
    state_machine_arn: String,
    role_arn: String,
}

impl fmt::Debug for EventBridgeSchedules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventBridgeSchedules")
            .field("group", &self.group)
            .field("state_machine_arn", &self.state_machine_arn)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for EventBridgeSchedules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EventBridgeSchedules({})", self.group)
    }
}

fn sched_err(op: &str, e: impl fmt::Display) -> Error {
    Error::new(
        ErrorKind::Storage,
        format!("EventBridge Scheduler {op}: {e}"),
    )
    .with_temporary(true)
    .with_backend("EventBridgeSchedules")
}

impl EventBridgeSchedules {
    /// Schedules in `group` starting `state_machine_arn` as `role_arn`. `endpoint_url`
    /// overrides the endpoint (a local stand-in; static test credentials are then used).
    pub async fn new(
        group: impl Into<String>,
        state_machine_arn: impl Into<String>,
        role_arn: impl Into<String>,
        endpoint_url: Option<String>,
    ) -> Result<Self> {
        let local = endpoint_url.is_some();
        let conn = Connection {
            endpoint_url,
            ..Connection::default()
        };
        let sdk = conn.load().await;
        let mut cfg = aws_sdk_scheduler::config::Builder::from(&sdk);
        if local {
            cfg = cfg.credentials_provider(Credentials::new(
                "testing", "testing", None, None, "kb-crawl",
            ));
        }
        Ok(EventBridgeSchedules {
            client: aws_sdk_scheduler::Client::from_conf(cfg.build()),
            group: group.into(),
            state_machine_arn: state_machine_arn.into(),
            role_arn: role_arn.into(),
        })
    }

    /// From `KB_CRAWL_SCHEDULE_GROUP` (default `default`), `KB_CRAWL_STATE_MACHINE_ARN`,
    /// `KB_CRAWL_SCHEDULER_ROLE_ARN` and `KB_CRAWL_AWS_ENDPOINT`; `None` without a role (no
    /// serverless schedules configured).
    pub async fn from_env() -> Result<Option<Self>> {
        let env = crate::config::env;
        let Some(role) = env("KB_CRAWL_SCHEDULER_ROLE_ARN") else {
            return Ok(None);
        };
        let arn = env("KB_CRAWL_STATE_MACHINE_ARN").ok_or_else(|| {
            Error::invalid("KB_CRAWL_STATE_MACHINE_ARN: required with KB_CRAWL_SCHEDULER_ROLE_ARN")
        })?;
        let group = env("KB_CRAWL_SCHEDULE_GROUP").unwrap_or_else(|| "default".into());
        Ok(Some(
            Self::new(group, arn, role, env("KB_CRAWL_AWS_ENDPOINT")).await?,
        ))
    }

    /// The schedule's name for a source.
    pub fn name_of(source: &SourceId) -> String {
        source.as_str().to_owned()
    }

    /// The client (tests read schedules back with it).
    pub fn client(&self) -> &aws_sdk_scheduler::Client {
        &self.client
    }

    /// The schedule group.
    pub fn group(&self) -> &str {
        &self.group
    }

    fn expression(schedule: &Schedule) -> Result<Option<(String, String)>> {
        let Some((expr, tz)) = schedule.cron() else {
            return Ok(None);
        };
        crawl_api::schedule::check(schedule)?;
        Ok(Some((eventbridge_cron(expr)?, tz.to_owned())))
    }
}

#[async_trait]
impl crawl_api::ScheduleStore for EventBridgeSchedules {
    async fn put(&self, source: &SourceRecord) -> Result<()> {
        let Some((expression, tz)) = Self::expression(&source.schedule)? else {
            return crawl_api::ScheduleStore::delete(self, &source.id).await;
        };
        let input = scheduled_input(source).to_string();
        let target = Target::builder()
            .arn(&self.state_machine_arn)
            .role_arn(&self.role_arn)
            .input(input)
            .build()
            .map_err(|e| sched_err("Target", e))?;
        let window = FlexibleTimeWindow::builder()
            .mode(FlexibleTimeWindowMode::Off)
            .build()
            .map_err(|e| sched_err("FlexibleTimeWindow", e))?;
        let name = Self::name_of(&source.id);
        let updated = self
            .client
            .update_schedule()
            .name(&name)
            .group_name(&self.group)
            .schedule_expression(&expression)
            .schedule_expression_timezone(&tz)
            .flexible_time_window(window.clone())
            .target(target.clone())
            .state(ScheduleState::Enabled)
            .send()
            .await;
        match updated {
            Ok(_) => Ok(()),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_resource_not_found_exception()) =>
            {
                self.client
                    .create_schedule()
                    .name(&name)
                    .group_name(&self.group)
                    .schedule_expression(&expression)
                    .schedule_expression_timezone(&tz)
                    .flexible_time_window(window)
                    .target(target)
                    .state(ScheduleState::Enabled)
                    .description(format!("kb-crawl sync of {}", source.root))
                    .send()
                    .await
                    .map(drop)
                    .map_err(|e| {
                        sched_err(
                            "CreateSchedule",
                            aws_sdk_scheduler::error::DisplayErrorContext(&e),
                        )
                    })
            }
            Err(e) => Err(sched_err(
                "UpdateSchedule",
                aws_sdk_scheduler::error::DisplayErrorContext(&e),
            )),
        }
    }

    async fn delete(&self, source: &SourceId) -> Result<()> {
        let deleted = self
            .client
            .delete_schedule()
            .name(Self::name_of(source))
            .group_name(&self.group)
            .send()
            .await;
        match deleted {
            Ok(_) => Ok(()),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_resource_not_found_exception()) =>
            {
                Ok(())
            }
            Err(e) => Err(sched_err(
                "DeleteSchedule",
                aws_sdk_scheduler::error::DisplayErrorContext(&e),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cron_expressions_become_eventbridge_ones() {
        for (cron, eb) in [
            ("0 3 * * *", "cron(0 3 * * ? *)"),
            ("0 3 * * 0", "cron(0 3 ? * 1 *)"),
            ("30 6 * * 1-5", "cron(30 6 ? * 2-6 *)"),
            ("0 9 * * MON-FRI", "cron(0 9 ? * MON-FRI *)"),
            ("0 9 * * 5-7", "cron(0 9 ? * 6-7,1 *)"),
            ("0 9 * * 0,3", "cron(0 9 ? * 1,4 *)"),
            ("*/15 * 1 * *", "cron(*/15 * 1 * ? *)"),
        ] {
            assert_eq!(eventbridge_cron(cron).unwrap(), eb, "{cron}");
        }
        for bad in ["0 3 1 * 1", "0 3 * *", "0 3 * * 9"] {
            let e = eventbridge_cron(bad).unwrap_err();
            assert!(e.message().starts_with("schedule.cron"), "{bad}: {e}");
        }
    }
}

//! The job API's limits: running jobs (per assistant and runner-wide), retention of finished
//! job records, and the list's page cursor.

use std::collections::HashMap;
use std::time::Duration;

use crawl_core::{ErrorKind, JobId, JobRecord, JobStore, Result};
use time::OffsetDateTime;

/// Default cap on running jobs across all assistants.
pub const DEFAULT_MAX_RUNNING_TOTAL: usize = 20;

/// Largest page of `GET /assistants/{id}/crawls` (and the default `limit`).
pub const MAX_PAGE: usize = 100;

/// Which finished job records the API keeps. A dropped record leaves the job's documents (in
/// the sink and the knowledge base) where they are: retention bounds the job history, not the
/// knowledge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retention {
    /// Finished jobs that ended longer ago than this are dropped. Default 90 days.
    pub max_age: Option<Duration>,
    /// Only this many finished jobs per assistant are kept (the newest). Default 100.
    pub max_per_assistant: Option<usize>,
    /// How often a start triggers a sweep of every assistant's records (in the background).
    /// Default 60 s. A list request applies retention to its assistant at once.
    pub sweep_every: Duration,
}

impl Default for Retention {
    fn default() -> Self {
        Retention {
            max_age: Some(Duration::from_secs(90 * 24 * 3600)),
            max_per_assistant: Some(100),
            sweep_every: Duration::from_secs(60),
        }
    }
}

impl Retention {
    /// Keeps every record.
    pub fn keep_all() -> Self {
        Retention {
            max_age: None,
            max_per_assistant: None,
            ..Retention::default()
        }
    }

    /// This retention with another age limit.
    #[must_use]
    pub fn with_max_age(mut self, age: Option<Duration>) -> Self {
        self.max_age = age;
        self
    }

    /// This retention with another per-assistant count.
    #[must_use]
    pub fn with_max_per_assistant(mut self, n: Option<usize>) -> Self {
        self.max_per_assistant = n;
        self
    }

    /// Splits one assistant's records, newest first, into kept and dropped.
    pub(crate) fn split(
        &self,
        records: Vec<JobRecord>,
        now: OffsetDateTime,
    ) -> (Vec<JobRecord>, Vec<JobRecord>) {
        let oldest = self.max_age.and_then(|a| {
            time::Duration::try_from(a)
                .ok()
                .and_then(|a| now.checked_sub(a))
        });
        let mut finished = 0usize;
        let (mut kept, mut dropped) = (Vec::new(), Vec::new());
        for r in records {
            if !r.status.is_final() {
                kept.push(r);
                continue;
            }
            finished += 1;
            let ended = r.completed_at.unwrap_or(r.started_at);
            let too_old = oldest.is_some_and(|o| ended < o);
            let too_many = self.max_per_assistant.is_some_and(|n| finished > n);
            if too_old || too_many {
                dropped.push(r);
            } else {
                kept.push(r);
            }
        }
        (kept, dropped)
    }
}

/// Removes `records` from the job store (a concurrent DELETE may have got there first).
pub(crate) async fn drop_records(jobs: &dyn JobStore, records: &[JobRecord]) -> Result<()> {
    for r in records {
        match jobs.delete(&r.id).await {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// The jobs this API started that may still run (job → assistant): the running-job limits
/// check it instead of listing the job store, so a start costs the same however many
/// finished jobs the store holds.
#[derive(Debug, Default)]
pub(crate) struct RunningIndex {
    jobs: Option<HashMap<JobId, String>>,
}

impl RunningIndex {
    /// Forgets jobs that ended. The first call reads the store's running jobs once (jobs of a
    /// previous process, resumed).
    pub(crate) async fn refresh(&mut self, store: &dyn JobStore) -> Result<()> {
        if self.jobs.is_none() {
            let seeded = store
                .list(None)
                .await?
                .into_iter()
                .filter(|r| !r.status.is_final())
                .map(|r| (r.id, r.assistant_id.unwrap_or_default()))
                .collect();
            self.jobs = Some(seeded);
            return Ok(());
        }
        let Some(map) = &mut self.jobs else {
            return Ok(());
        };
        let mut ended = Vec::new();
        for id in map.keys() {
            match store.get(id).await? {
                Some(r) if !r.status.is_final() => {}
                _ => ended.push(id.clone()),
            }
        }
        for id in ended {
            map.remove(&id);
        }
        Ok(())
    }

    /// Running jobs of `assistant`, and in all.
    pub(crate) fn counts(&self, assistant: &str) -> (usize, usize) {
        let Some(m) = &self.jobs else { return (0, 0) };
        (m.values().filter(|a| *a == assistant).count(), m.len())
    }

    pub(crate) fn insert(&mut self, job: JobId, assistant: String) {
        self.jobs
            .get_or_insert_with(HashMap::new)
            .insert(job, assistant);
    }
}

/// The list's cursor: the last job of a page (its start time and id), hex-encoded.
pub(crate) fn encode_cursor(r: &JobRecord) -> String {
    hex::encode(format!("{}.{}", r.started_at.unix_timestamp_nanos(), r.id))
}

/// `(started_at, id)` of the cursor's job, or `None` when it is not one of ours.
pub(crate) fn decode_cursor(token: &str) -> Option<(OffsetDateTime, String)> {
    let text = String::from_utf8(hex::decode(token).ok()?).ok()?;
    let (ns, id) = text.split_once('.')?;
    let t = OffsetDateTime::from_unix_timestamp_nanos(ns.parse().ok()?).ok()?;
    Some((t, id.to_owned()))
}

/// Newest first, ties by id: the order pages are cut in.
pub(crate) fn sort_newest_first(v: &mut [JobRecord]) {
    v.sort_by(|a, b| {
        b.started_at
            .cmp(&a.started_at)
            .then_with(|| a.id.as_str().cmp(b.id.as_str()))
    });
}

/// Whether `r` comes after the cursor in [`sort_newest_first`] order.
pub(crate) fn after(r: &JobRecord, cursor: &(OffsetDateTime, String)) -> bool {
    r.started_at < cursor.0 || (r.started_at == cursor.0 && r.id.as_str() > cursor.1.as_str())
}

//! [`LevelLedger`]: the serverless crawl's admissions, crash-safe and repeatable per level.
//!
//! The plan step admits a level's links (dedup records, the level's page reservation) and
//! then writes the level's list to S3. A plan run that dies anywhere (a crash, a timeout, a
//! failed PUT) is run again by Step Functions, and that run must end with the same list:
//! as many pages as were reserved, or `pages_processed` never reaches `pages_total`.
//!
//! Each dedup record written here carries the level it was claimed for: it is the page's
//! crash-safe record, and the only write a page costs. The level's pages are the first `n`
//! candidates, in candidate order, that are claimed for the level and not excluded; `n` is
//! written once per level, on the job item, by one conditional update that also adds it to
//! `pages_total` (within `max_pages`) and adds the level's exclusion counts. A re-run reads
//! `n` back and claims again (a record of this level reads as claimed, whoever wrote it), so
//! it lists the same pages: the candidates of a level are the same on a re-run (they come
//! from the previous level's reports and seen list, written before).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::time::Duration;

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{BuildError, ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    AttributeValue, KeysAndAttributes, Put, ReturnValuesOnConditionCheckFailure,
};
use aws_sdk_dynamodb::Client;
use crawl_core::clock::DynClock;
use crawl_core::{Candidate, Error, ErrorKind, FrontierEntry, JobId, PageOutcome, Result};
use futures::{StreamExt, TryStreamExt};

use super::dedup::{
    sort_key, BATCH_GET, EXPIRES as DEDUP_EXPIRES, KEY as DEDUP_KEY, PK as DEDUP_PK,
    SK as DEDUP_SK, UNPROCESSED_ROUNDS,
};
use super::jobs::{
    EXCLUDED as JOB_EXCLUDED, MAX_PAGES as JOB_MAX_PAGES, PK as JOB_PK, PROCESSED as JOB_PROCESSED,
    SKIPPED as JOB_SKIPPED, STORED as JOB_STORED, TOTAL as JOB_TOTAL,
};
use super::table::{get_n, n, s, Item};
use super::{DynamoDedup, DynamoJobStore};
use crate::error::AwsError;

/// The level a dedup record was claimed for (absent on records of other writers).
const LEVEL: &str = "level";
/// The job item's attribute holding how many pages level N reserved (`reserved_level_N`),
/// written once with the reservation: a re-run of the level finds it.
const LEVEL_RESERVED: &str = "reserved_level_";
/// The job item's attribute saying level N's outcomes were counted (`counted_level_N`,
/// how many pages it had).
const LEVEL_COUNTED: &str = "counted_level_";
/// Times a level's admission is decided again when its reservation's condition fails (the
/// budget moved, or a concurrent run of the level reserved first).
const RESERVE_ATTEMPTS: usize = 8;
/// Claims in flight at once.
const CLAIM_CONCURRENCY: usize = 16;
/// Candidates claimed one by one before the next reservations are decided.
const CHUNK: usize = 64;
/// Batch calls in flight at once once the budget is spent.
const BATCH_CONCURRENCY: usize = 4;

/// What [`LevelLedger::admit_level`] decided for a level.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct LevelAdmission {
    /// The level's pages, in candidate order: the first claimed, not excluded candidates,
    /// as many as the level reserved (by this run or an earlier one).
    pub(crate) admitted: Vec<FrontierEntry>,
    /// Candidates claimed for this level but not admitted, by reason (`max_pages` for
    /// those over the page budget).
    pub(crate) excluded: BTreeMap<String, u64>,
    /// The candidates this run claimed with a conditional put (admitted or not; a re-run
    /// past the budget claims by reading and lists fewer): a later level can leave them out
    /// before writing anything.
    pub(crate) claimed: Vec<String>,
}

/// Admissions and page counts of the serverless crawl over the dedup and job tables: each
/// step either happens whole or can be run again with the same result.
#[derive(Debug, Clone)]
pub(crate) struct LevelLedger {
    client: Client,
    dedup_table: String,
    jobs_table: String,
    name: String,
    clock: DynClock,
    ttl_secs: i64,
}

impl fmt::Display for LevelLedger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// One candidate after the claim round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Claim {
    /// Someone else's record: a URL seen before this level.
    Seen,
    /// Claimed for this level (now or by an earlier run).
    Ours,
}

/// What an existing dedup record means for a claim for `level`.
fn claim_of(old: &Item, level: u32) -> Claim {
    match get_n::<u32>(old, LEVEL) {
        Some(l) if l == level => Claim::Ours,
        _ => Claim::Seen,
    }
}

/// The job item's budget as one admission reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Budget {
    /// Whether the job item exists.
    exists: bool,
    /// `pages_total`.
    total: u64,
    /// `max_pages` (`u64::MAX` when the job has none).
    max: u64,
    /// The pages this level reserved, when an earlier run of it did.
    level: Option<u64>,
}

impl LevelLedger {
    /// A ledger over these two tables (reached through the dedup store's client: both
    /// tables live in one account and region).
    pub(crate) fn new(dedup: &DynamoDedup, jobs: &DynamoJobStore) -> Self {
        LevelLedger {
            client: dedup.client().clone(),
            dedup_table: dedup.table().to_owned(),
            jobs_table: jobs.table().to_owned(),
            name: format!("LevelLedger({}, {})", dedup.table(), jobs.table()),
            clock: dedup.clock(),
            ttl_secs: i64::try_from(dedup.ttl().as_secs()).unwrap_or(i64::MAX / 2),
        }
    }

    fn now(&self) -> i64 {
        self.clock.now().unix_timestamp()
    }

    fn sdk_err<E>(&self, op: &'static str, e: SdkError<E, HttpResponse>) -> Error
    where
        E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    {
        AwsError::sdk(op, e).into_core(self)
    }

    fn built<T>(&self, r: std::result::Result<T, BuildError>) -> Result<T> {
        r.map_err(|e| {
            AwsError::Malformed {
                what: "DynamoDB request".into(),
                detail: e.to_string(),
            }
            .into_core(self)
        })
    }

    /// A dedup record of `job` for `key`, fresh for the TTL window.
    fn dedup_put(&self, job: &JobId, key: &str, extra: &[(&str, AttributeValue)]) -> Result<Put> {
        let now = self.now();
        let mut b = Put::builder()
            .table_name(&self.dedup_table)
            .item(DEDUP_PK, s(job.as_str()))
            .item(DEDUP_SK, s(sort_key(key)))
            .item(DEDUP_KEY, s(key))
            .item(DEDUP_EXPIRES, n(now.saturating_add(self.ttl_secs)))
            .condition_expression("attribute_not_exists(#pk) OR #exp <= :now")
            .expression_attribute_names("#pk", DEDUP_PK)
            .expression_attribute_names("#exp", DEDUP_EXPIRES)
            .expression_attribute_values(":now", n(now));
        for (k, v) in extra {
            b = b.item(*k, v.clone());
        }
        self.built(b.build())
    }

    /// Claims `key` for `level`, or reads back who holds it.
    async fn claim(&self, job: &JobId, key: &str, level: u32) -> Result<Claim> {
        let put = self.dedup_put(job, key, &[(LEVEL, n(level))])?;
        let res = self
            .client
            .put_item()
            .table_name(&self.dedup_table)
            .set_item(Some(put.item().clone()))
            .set_condition_expression(Some(
                put.condition_expression().unwrap_or_default().to_owned(),
            ))
            .set_expression_attribute_names(put.expression_attribute_names().cloned())
            .set_expression_attribute_values(put.expression_attribute_values().cloned())
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        let old: Option<Item> = match res {
            Ok(_) => return Ok(Claim::Ours),
            Err(SdkError::ServiceError(se)) => match se.err() {
                PutItemError::ConditionalCheckFailedException(c) => c.item().cloned(),
                _ => return Err(self.sdk_err("PutItem", SdkError::ServiceError(se))),
            },
            Err(e) => return Err(self.sdk_err("PutItem", e)),
        };
        let old = match old {
            Some(i) => i,
            // A service that does not return the old item: read it.
            None => self
                .client
                .get_item()
                .table_name(&self.dedup_table)
                .key(DEDUP_PK, s(job.as_str()))
                .key(DEDUP_SK, s(sort_key(key)))
                .consistent_read(true)
                .send()
                .await
                .map_err(|e| self.sdk_err("GetItem", e))?
                .item()
                .cloned()
                .unwrap_or_default(),
        };
        Ok(claim_of(&old, level))
    }

    /// Claims each key with a conditional put, [`CLAIM_CONCURRENCY`] at once.
    async fn claim_each(&self, job: &JobId, level: u32, keys: Vec<String>) -> Result<Vec<Claim>> {
        // Owned futures: borrowing closures would make the handler's future not `Send`.
        futures::stream::iter(keys)
            .map(|key| {
                let (me, job) = (self.clone(), job.clone());
                async move { me.claim(&job, &key, level).await }
            })
            .buffered(CLAIM_CONCURRENCY)
            .try_collect()
            .await
    }

    /// The job's budget and what `level` reserved (one strongly consistent read).
    async fn budget(&self, job: &JobId, level: u32) -> Result<Budget> {
        let level_attr = format!("{LEVEL_RESERVED}{level}");
        let out = self
            .client
            .get_item()
            .table_name(&self.jobs_table)
            .key(JOB_PK, s(job.as_str()))
            .projection_expression("#pk, #t, #max, #lvl")
            .expression_attribute_names("#pk", JOB_PK)
            .expression_attribute_names("#t", JOB_TOTAL)
            .expression_attribute_names("#max", JOB_MAX_PAGES)
            .expression_attribute_names("#lvl", &level_attr)
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| self.sdk_err("GetItem", e))?;
        let item = out.item().cloned().unwrap_or_default();
        Ok(Budget {
            exists: out.item().is_some(),
            total: get_n(&item, JOB_TOTAL).unwrap_or(0),
            max: get_n(&item, JOB_MAX_PAGES).unwrap_or(u64::MAX),
            level: get_n(&item, &level_attr),
        })
    }

    /// Claims keys for `level` once the level has its pages: records are read in batches of
    /// [`BATCH_GET`], and nothing is written: none of them can be a page of the level, so
    /// a URL past the budget needs no record — it is only
    /// counted (once per level that links to it), and a page with thousands of links costs
    /// reads, not a write per link. A re-run of the level reads the same records and counts
    /// the same (the level's counts are added once, with its reservation).
    async fn claim_spent(&self, job: &JobId, level: u32, keys: Vec<String>) -> Result<Vec<Claim>> {
        let sort_keys: Vec<String> = keys.iter().map(|k| sort_key(k)).collect();
        let found: Vec<Item> =
            futures::stream::iter(sort_keys.chunks(BATCH_GET).map(<[String]>::to_vec))
                .map(|chunk| {
                    let (me, job) = (self.clone(), job.clone());
                    async move { me.get_batch(&job, chunk).await }
                })
                .buffered(BATCH_CONCURRENCY)
                .try_concat()
                .await?;
        let now = self.now();
        let by_sk: HashMap<&str, &Item> = found
            .iter()
            .filter(|i| get_n::<i64>(i, DEDUP_EXPIRES).is_some_and(|exp| exp > now))
            .filter_map(|i| Some((i.get(DEDUP_SK)?.as_s().ok()?.as_str(), i)))
            .collect();
        Ok(keys
            .iter()
            .zip(&sort_keys)
            .map(|(_, sk)| match by_sk.get(sk.as_str()) {
                Some(old) => claim_of(old, level),
                None => Claim::Ours,
            })
            .collect())
    }

    /// Reads the job's dedup records with these sort keys (those that exist).
    async fn get_batch(&self, job: &JobId, sort_keys: Vec<String>) -> Result<Vec<Item>> {
        let keys: Vec<Item> = sort_keys
            .into_iter()
            .map(|sk| {
                HashMap::from([
                    (DEDUP_PK.to_owned(), s(job.as_str())),
                    (DEDUP_SK.to_owned(), s(sk)),
                ])
            })
            .collect();
        let mut pending = Some(
            self.built(
                KeysAndAttributes::builder()
                    .set_keys(Some(keys))
                    .consistent_read(true)
                    .build(),
            )?,
        );
        let mut items = Vec::new();
        for round in 0..UNPROCESSED_ROUNDS {
            let Some(req) = pending.take() else { break };
            if round > 0 {
                tokio::time::sleep(Duration::from_millis(25 << round.min(6))).await;
            }
            let out = self
                .client
                .batch_get_item()
                .request_items(&self.dedup_table, req)
                .send()
                .await
                .map_err(|e| self.sdk_err("BatchGetItem", e))?;
            if let Some(found) = out.responses().and_then(|r| r.get(&self.dedup_table)) {
                items.extend(found.iter().cloned());
            }
            pending = out
                .unprocessed_keys()
                .and_then(|u| u.get(&self.dedup_table))
                .filter(|k| !k.keys().is_empty())
                .cloned();
        }
        match pending {
            None => Ok(items),
            Some(left) => Err(Error::new(
                ErrorKind::Storage,
                format!("BatchGetItem: {} keys left unprocessed", left.keys().len()),
            )
            .with_temporary(true)
            .with_backend(self.name.clone())),
        }
    }

    /// Reserves `level`'s pages and adds its exclusion counts, once: one conditional update
    /// of the job item that writes the level's page count, adds it to `pages_total` if that
    /// stays within `max_pages` and the level has no count yet, and adds `excluded` to the
    /// job's. `Ok(false)` when the condition failed (the level was reserved by another run,
    /// the budget moved, or the job is gone).
    async fn reserve_level(
        &self,
        job: &JobId,
        level: u32,
        pages: u64,
        budget: &Budget,
        excluded: &BTreeMap<String, u64>,
    ) -> Result<bool> {
        let mut update = self
            .client
            .update_item()
            .table_name(&self.jobs_table)
            .key(JOB_PK, s(job.as_str()))
            .condition_expression(
                "attribute_exists(#pk) AND attribute_not_exists(#lvl) AND #t <= :limit",
            )
            .expression_attribute_names("#pk", JOB_PK)
            .expression_attribute_names("#lvl", format!("{LEVEL_RESERVED}{level}"))
            .expression_attribute_names("#t", JOB_TOTAL)
            .expression_attribute_values(":k", n(pages))
            .expression_attribute_values(":limit", n(budget.max.saturating_sub(pages)));
        let mut sets = vec!["#lvl = :k".to_owned()];
        let counts = excluded.iter().map(|(r, c)| (r.as_str(), *c));
        update = add_counts(update, &mut sets, JOB_EXCLUDED, counts);
        self.update_if(update.update_expression(format!("SET {} ADD #t :k", sets.join(", "))))
            .await
    }

    /// Sends a conditional update: `Ok(false)` when its condition failed.
    async fn update_if(&self, update: UpdateItemFluentBuilder) -> Result<bool> {
        match update.send().await {
            Ok(_) => Ok(true),
            Err(SdkError::ServiceError(se))
                if matches!(
                    se.err(),
                    UpdateItemError::ConditionalCheckFailedException(_)
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(self.sdk_err("UpdateItem", e)),
        }
    }

    /// Decides `level` from `candidates` for `pages` pages: claims them in order, one
    /// conditional put each, until `pages` claimed, not excluded candidates are found (those
    /// are the level's pages), then claims the rest by reading only (the budget is spent for
    /// them: they need no record, they are counted `max_pages`). Writes no count.
    async fn decide(
        &self,
        job: &JobId,
        level: u32,
        candidates: &[Candidate],
        extra: &BTreeMap<String, u64>,
        pages: u64,
    ) -> Result<LevelAdmission> {
        let mut out = LevelAdmission {
            excluded: extra.clone(),
            ..LevelAdmission::default()
        };
        let mut free = 0u64;
        let mut at = 0;
        while at < candidates.len() {
            let need = pages.saturating_sub(free);
            // While pages are wanted, a chunk of at most `need` candidates that can be pages
            // is claimed one conditional put each; after, everything left in batches.
            let mut end = at;
            if need == 0 {
                end = candidates.len();
            } else {
                let mut open = 0u64;
                while end < candidates.len() && end - at < CHUNK && open < need {
                    open += u64::from(candidates[end].excluded.is_none());
                    end += 1;
                }
            }
            let chunk = &candidates[at..end];
            let keys: Vec<String> = chunk.iter().map(|c| c.key.clone()).collect();
            let claims = if need == 0 {
                self.claim_spent(job, level, keys).await?
            } else {
                let claims = self.claim_each(job, level, keys).await?;
                out.claimed.extend(
                    chunk
                        .iter()
                        .zip(&claims)
                        .filter(|(_, c)| **c == Claim::Ours)
                        .map(|(c, _)| c.key.clone()),
                );
                claims
            };
            for (c, claim) in chunk.iter().zip(claims) {
                if claim == Claim::Seen {
                    continue;
                }
                let reason = if let Some(r) = &c.excluded {
                    r.clone()
                } else if free < pages {
                    free += 1;
                    out.admitted.push(c.entry.clone());
                    continue;
                } else {
                    "max_pages".to_owned()
                };
                *out.excluded.entry(reason).or_default() += 1;
            }
            at = end;
        }
        Ok(out)
    }

    /// Admits `candidates` (all at depth `level`) for `level`: claims each new URL, in order
    /// the claimed ones become pages until the budget is spent (the rest count as
    /// `max_pages`, the excluded ones by their reason), and the level's page count and
    /// exclusion counts are written once (see the module's doc). Repeatable: a second run
    /// for the same level and candidates (after a crash anywhere in the first) returns the
    /// same admitted list and adds nothing to the counters twice.
    pub(crate) async fn admit_level(
        &self,
        job: &JobId,
        level: u32,
        candidates: Vec<Candidate>,
        mut extra: BTreeMap<String, u64>,
    ) -> Result<LevelAdmission> {
        let mut seen = HashSet::with_capacity(candidates.len());
        let candidates: Vec<Candidate> = candidates
            .into_iter()
            .filter(|c| seen.insert(c.key.clone()))
            .collect();
        extra.retain(|_, n| *n > 0);
        for _ in 0..RESERVE_ATTEMPTS {
            let budget = self.budget(job, level).await?;
            let pages = budget
                .level
                .unwrap_or_else(|| budget.max.saturating_sub(budget.total));
            let out = self.decide(job, level, &candidates, &extra, pages).await?;
            let admitted = out.admitted.len() as u64;
            match budget.level {
                // An earlier run reserved and counted the level: the same pages again.
                Some(reserved) if admitted == reserved => return Ok(out),
                Some(reserved) => {
                    return Err(Error::new(
                        ErrorKind::Storage,
                        format!(
                            "level {level} of job {job} reserved {reserved} pages, \
                             its candidates give {admitted}"
                        ),
                    )
                    .with_backend(self.name.clone()))
                }
                None if admitted == 0 && out.excluded.is_empty() => return Ok(out),
                None => {
                    if self
                        .reserve_level(job, level, admitted, &budget, &out.excluded)
                        .await?
                    {
                        return Ok(out);
                    }
                    if !budget.exists {
                        return Err(Error::new(
                            ErrorKind::NotFound,
                            format!("no job {job} to reserve pages on"),
                        )
                        .with_backend(self.name.clone()));
                    }
                }
            }
        }
        Err(Error::new(
            ErrorKind::Storage,
            format!("level {level} of job {job}: the budget kept moving under the plan step"),
        )
        .with_temporary(true)
        .with_backend(self.name.clone()))
    }

    /// Counts the pages of a level once: their outcomes are added to the job's counters by
    /// one conditional update of the job item that also writes the level's counted-once
    /// attribute (`counted_level_N`), so a page costs no write of its own, a level one write
    /// unit, and a re-run of the plan step counts nothing twice. `Ok(false)` when the level
    /// was counted before (or has no pages).
    pub(crate) async fn record_level_once(
        &self,
        job: &JobId,
        level: u32,
        outcomes: &[PageOutcome],
    ) -> Result<bool> {
        if outcomes.is_empty() {
            return Ok(false);
        }
        let stored = outcomes
            .iter()
            .filter(|o| matches!(o, PageOutcome::Stored))
            .count();
        let mut skipped: BTreeMap<&str, u64> = BTreeMap::new();
        for o in outcomes {
            if let PageOutcome::Skipped(r) = o {
                *skipped.entry(r.as_str()).or_default() += 1;
            }
        }
        let mut count = self
            .client
            .update_item()
            .table_name(&self.jobs_table)
            .key(JOB_PK, s(job.as_str()))
            .condition_expression("attribute_exists(#pk) AND attribute_not_exists(#done)")
            .expression_attribute_names("#pk", JOB_PK)
            .expression_attribute_names("#done", format!("{LEVEL_COUNTED}{level}"))
            .expression_attribute_names("#p", JOB_PROCESSED)
            .expression_attribute_names("#s", JOB_STORED)
            .expression_attribute_values(":p", n(outcomes.len()))
            .expression_attribute_values(":s", n(stored));
        let mut sets = vec!["#done = :p".to_owned()];
        count = add_counts(count, &mut sets, JOB_SKIPPED, skipped);
        let count = count.update_expression(format!("SET {} ADD #p :p, #s :s", sets.join(", ")));
        if self.update_if(count).await? {
            return Ok(true);
        }
        match self.budget(job, level).await?.exists {
            true => Ok(false),
            false => Err(Error::new(
                ErrorKind::NotFound,
                format!("no job {job} to count pages on"),
            )
            .with_backend(self.name.clone())),
        }
    }
}

/// Adds `counts` (reason → number) to the map attribute `map` of the item `update` writes:
/// one `SET` term a reason, pushed to `sets` (a reason the map lacks starts at 0).
fn add_counts<'a>(
    mut update: UpdateItemFluentBuilder,
    sets: &mut Vec<String>,
    map: &str,
    counts: impl IntoIterator<Item = (&'a str, u64)>,
) -> UpdateItemFluentBuilder {
    let mut any = false;
    for (i, (reason, count)) in counts.into_iter().enumerate() {
        sets.push(format!("#m.#r{i} = if_not_exists(#m.#r{i}, :zero) + :n{i}"));
        update = update
            .expression_attribute_names(format!("#r{i}"), reason)
            .expression_attribute_values(format!(":n{i}"), n(count));
        any = true;
    }
    if any {
        update = update
            .expression_attribute_names("#m", map)
            .expression_attribute_values(":zero", n(0));
    }
    update
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::Arc;

    use super::super::test_moto;
    use super::*;
    use crawl_core::{CrawlRequest, Guardrails, JobRecord, JobStore};
    use url::Url;

    async fn ledger(endpoint: &str, max_pages: u32) -> (LevelLedger, DynamoJobStore, JobId) {
        let dedup = test_moto::dedup(endpoint).await;
        let jobs = test_moto::jobs(endpoint).await;
        let job = new_job(&jobs, max_pages).await;
        (LevelLedger::new(&dedup, &jobs), jobs, job)
    }

    /// A new job of at most `max_pages` pages, its record in `jobs`.
    async fn new_job(jobs: &DynamoJobStore, max_pages: u32) -> JobId {
        let req = CrawlRequest::builder("http://127.0.0.1:9/")
            .max_pages(max_pages)
            .guardrails(Guardrails::lifted())
            .build()
            .unwrap();
        let job = JobId::new();
        let record = JobRecord::new(job.clone(), req, time::OffsetDateTime::now_utc());
        jobs.create(&record).await.unwrap();
        job
    }

    fn candidates(level: u32, paths: &[&str]) -> Vec<Candidate> {
        paths
            .iter()
            .map(|p| {
                let url = Url::parse(&format!("http://127.0.0.1:9/{p}")).unwrap();
                let excluded = p.starts_with("private").then(|| "robots_disallowed".into());
                Candidate::new(
                    format!("127.0.0.1:9/{p}"),
                    FrontierEntry::new(url, level),
                    excluded,
                )
            })
            .collect()
    }

    /// What a level decided (`claimed` says what this run wrote: a re-run may write less).
    fn decided(a: &LevelAdmission) -> (Vec<FrontierEntry>, BTreeMap<String, u64>) {
        (a.admitted.clone(), a.excluded.clone())
    }

    fn paths(a: &LevelAdmission) -> Vec<String> {
        a.admitted.iter().map(|e| e.url.path().to_owned()).collect()
    }

    #[tokio::test]
    async fn a_level_admitted_twice_gives_the_same_pages_and_counts_once() {
        let Some(ep) = test_moto::endpoint() else {
            return;
        };
        let (ledger, jobs, job) = ledger(&ep, 3).await;
        let level0 = ledger
            .admit_level(&job, 0, candidates(0, &["a"]), BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(paths(&level0), ["/a"]);
        let c = candidates(1, &["a", "b", "private", "c", "d", "e"]);
        let first = ledger
            .admit_level(&job, 1, c.clone(), BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(paths(&first), ["/b", "/c"]);
        let want: BTreeMap<String, u64> =
            [("max_pages".into(), 2), ("robots_disallowed".into(), 1)].into();
        assert_eq!(first.excluded, want);
        // A re-run (the first run's list was never written): same pages, nothing counted twice.
        let again = ledger
            .admit_level(&job, 1, c, BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(decided(&again), decided(&first));
        let p = jobs.get(&job).await.unwrap().unwrap().progress;
        assert_eq!(p.pages_total, 3);
        assert_eq!(p.excluded, want);
        // The next level sees the claimed ones as known; "d", past the budget, was never
        // claimed: it is counted again, once per level that links to it.
        let next = ledger
            .admit_level(&job, 2, candidates(2, &["b", "c", "d"]), BTreeMap::new())
            .await
            .unwrap();
        assert!(next.admitted.is_empty());
        assert_eq!(next.excluded, [("max_pages".into(), 1)].into());
    }

    #[tokio::test]
    async fn past_the_budget_urls_are_claimed_in_batches_with_the_same_results() {
        let Some(ep) = test_moto::endpoint() else {
            return;
        };
        let (ledger, jobs, job) = ledger(&ep, 3).await;
        ledger
            .admit_level(&job, 0, candidates(0, &["a"]), BTreeMap::new())
            .await
            .unwrap();
        // More than one chunk: the budget is spent in the first, the rest go in batches.
        let names: Vec<String> = (0..300).map(|i| format!("p{i}")).collect();
        let mut level1: Vec<&str> = vec!["a", "private-1"];
        level1.extend(names.iter().map(String::as_str));
        level1.push("private-2");
        let first = ledger
            .admit_level(&job, 1, candidates(1, &level1), BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(paths(&first), ["/p0", "/p1"]);
        let want: BTreeMap<String, u64> =
            [("max_pages".into(), 298), ("robots_disallowed".into(), 2)].into();
        assert_eq!(first.excluded, want);
        let again = ledger
            .admit_level(&job, 1, candidates(1, &level1), BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(decided(&again), decided(&first));
        // Spent from the start: claimed URLs are seen, the others (p5 was past the budget,
        // never claimed) only counted.
        let level2 = ledger
            .admit_level(
                &job,
                2,
                candidates(2, &["p5", "q1", "a", "q2", "private-1"]),
                BTreeMap::new(),
            )
            .await
            .unwrap();
        assert!(level2.admitted.is_empty());
        assert_eq!(level2.excluded, [("max_pages".into(), 3)].into());
        let p = jobs.get(&job).await.unwrap().unwrap().progress;
        assert_eq!(p.pages_total, 3);
        assert_eq!(p.excluded.get("max_pages"), Some(&301));
        assert_eq!(p.excluded.get("robots_disallowed"), Some(&2));
    }

    /// Dedup records of `job` (claims and markers).
    async fn records(ledger: &LevelLedger, job: &JobId) -> i32 {
        let out = ledger
            .client
            .query()
            .table_name(&ledger.dedup_table)
            .key_condition_expression("#pk = :pk")
            .expression_attribute_names("#pk", DEDUP_PK)
            .expression_attribute_values(":pk", s(job.as_str()))
            .select(aws_sdk_dynamodb::types::Select::Count)
            .consistent_read(true)
            .send()
            .await
            .unwrap();
        out.count()
    }

    #[tokio::test]
    async fn past_the_budget_a_level_writes_no_record_per_link() {
        let Some(ep) = test_moto::endpoint() else {
            return;
        };
        let (ledger, jobs, job) = ledger(&ep, 3).await;
        ledger
            .admit_level(&job, 0, candidates(0, &["a"]), BTreeMap::new())
            .await
            .unwrap();
        let names: Vec<String> = (0..2_000).map(|i| format!("p{i}")).collect();
        let level1: Vec<&str> = names.iter().map(String::as_str).collect();
        let extra: BTreeMap<String, u64> = [("links_per_page".into(), 40)].into();
        let first = ledger
            .admit_level(&job, 1, candidates(1, &level1), extra.clone())
            .await
            .unwrap();
        assert_eq!(paths(&first), ["/p0", "/p1"]);
        // Root and the level's two pages, claimed one by one: nothing for the 1,998 links
        // after (the level's counts are on the job item).
        let n = records(&ledger, &job).await;
        assert_eq!(n, 1 + 2, "{n} records");
        let again = ledger
            .admit_level(&job, 1, candidates(1, &level1), extra)
            .await
            .unwrap();
        assert_eq!(decided(&again), decided(&first));
        let names2: Vec<String> = (0..2_000).map(|i| format!("q{i}")).collect();
        let level2: Vec<&str> = names2.iter().map(String::as_str).collect();
        let second = ledger
            .admit_level(&job, 2, candidates(2, &level2), BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(second.excluded, [("max_pages".into(), 2_000)].into());
        assert_eq!(records(&ledger, &job).await, n, "no record at all");
        let p = jobs.get(&job).await.unwrap().unwrap().progress;
        assert_eq!(p.excluded.get("max_pages"), Some(&(1_998 + 2_000)));
        assert_eq!(p.excluded.get("links_per_page"), Some(&40));
    }

    #[tokio::test]
    async fn a_run_that_died_after_its_claims_is_completed_by_the_next() {
        let Some(ep) = test_moto::endpoint() else {
            return;
        };
        let (ledger, jobs, job) = ledger(&ep, 10).await;
        let c = candidates(1, &["a", "b", "c"]);
        // The dead run: every URL claimed, nothing reserved, counted or written.
        for cand in &c {
            assert_eq!(ledger.claim(&job, &cand.key, 1).await.unwrap(), Claim::Ours);
        }
        let retry = ledger
            .admit_level(&job, 1, c, BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(paths(&retry), ["/a", "/b", "/c"]);
        assert_eq!(
            jobs.get(&job).await.unwrap().unwrap().progress.pages_total,
            3
        );
    }

    /// A DynamoDB client's calls, seen before they are sent: counts the write units of
    /// the requests it lets through, and once `limit` writes have gone out fails every
    /// request after (the process died there).
    #[derive(Debug, Clone)]
    struct DieAfter {
        limit: usize,
        writes: Arc<AtomicUsize>,
        units: Arc<AtomicUsize>,
        dead: Arc<AtomicBool>,
    }

    impl aws_sdk_dynamodb::config::Intercept for DieAfter {
        fn name(&self) -> &'static str {
            "DieAfter"
        }

        fn read_before_transmit(
            &self,
            ctx: &aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef<'_>,
            _: &aws_sdk_dynamodb::config::RuntimeComponents,
            _: &mut aws_sdk_dynamodb::config::ConfigBag,
        ) -> std::result::Result<(), aws_sdk_dynamodb::error::BoxError> {
            let req = ctx.request();
            let op = req.headers().get("x-amz-target").unwrap_or_default();
            let op = op.rsplit('.').next().unwrap_or_default().to_owned();
            let body: serde_json::Value = req
                .body()
                .bytes()
                .and_then(|b| serde_json::from_slice(b).ok())
                .unwrap_or_default();
            let items = |v: &serde_json::Value| v.as_array().map_or(0, Vec::len);
            let units = match op.as_str() {
                "PutItem" | "UpdateItem" | "DeleteItem" => 1,
                "TransactWriteItems" => 2 * items(&body["TransactItems"]),
                "BatchWriteItem" => body["RequestItems"]
                    .as_object()
                    .map_or(0, |m| m.values().map(items).sum()),
                _ => 0,
            };
            if self.dead.load(Ordering::SeqCst) {
                return Err("the plan step died".into());
            }
            if units > 0 && self.writes.fetch_add(1, Ordering::SeqCst) >= self.limit {
                self.dead.store(true, Ordering::SeqCst);
                return Err("the plan step died".into());
            }
            self.units.fetch_add(units, Ordering::SeqCst);
            Ok(())
        }
    }

    /// `ledger` on a client that dies after `limit` writes.
    fn dying(ledger: &LevelLedger, limit: usize) -> (LevelLedger, DieAfter) {
        let die = DieAfter {
            limit,
            writes: Arc::default(),
            units: Arc::default(),
            dead: Arc::default(),
        };
        let config = ledger
            .client
            .config()
            .to_builder()
            .interceptor(die.clone())
            .build();
        let mut l = ledger.clone();
        l.client = Client::from_conf(config);
        (l, die)
    }

    /// A job of at most `max_pages` pages, its root admitted at level 0.
    async fn job_with_root(ledger: &LevelLedger, jobs: &DynamoJobStore, max_pages: u32) -> JobId {
        let job = new_job(jobs, max_pages).await;
        ledger
            .admit_level(&job, 0, candidates(0, &["a"]), BTreeMap::new())
            .await
            .unwrap();
        job
    }

    #[tokio::test]
    async fn a_level_whose_plan_run_dies_after_any_write_is_the_same_when_run_again() {
        let Some(ep) = test_moto::endpoint() else {
            return;
        };
        let (ledger, jobs, _) = ledger(&ep, 1).await;
        // Seen, excluded, admitted and over-budget candidates: 5 of the 9 new ones fit.
        let mut names: Vec<String> = ["a", "b", "private-1", "c", "d", "private-2", "e", "f"]
            .map(str::to_owned)
            .to_vec();
        names.extend((0..70).map(|i| format!("g{i}")));
        names.push("private-3".into());
        let level1: Vec<&str> = names.iter().map(String::as_str).collect();
        let c = candidates(1, &level1);
        let extra: BTreeMap<String, u64> = [("links_per_page".into(), 7)].into();
        let progress = |p: crawl_core::Progress| (p.pages_total, p.excluded);
        // The run that does not die: what every dead run followed by a re-run must give.
        let job = job_with_root(&ledger, &jobs, 6).await;
        let (counted, die) = dying(&ledger, usize::MAX);
        let want = counted
            .admit_level(&job, 1, c.clone(), extra.clone())
            .await
            .unwrap();
        assert_eq!(paths(&want), ["/b", "/c", "/d", "/e", "/f"]);
        let want_progress = progress(jobs.get(&job).await.unwrap().unwrap().progress);
        assert_eq!(want_progress.0, 6);
        assert_eq!(want_progress.1.get("max_pages"), Some(&70));
        assert_eq!(want_progress.1.get("robots_disallowed"), Some(&3));
        assert_eq!(want_progress.1.get("links_per_page"), Some(&7));
        let writes = die.writes.load(Ordering::SeqCst);
        assert!(writes >= 3, "{writes} writes");
        for k in 0..=writes {
            let job = job_with_root(&ledger, &jobs, 6).await;
            let (dead, _) = dying(&ledger, k);
            let first = dead.admit_level(&job, 1, c.clone(), extra.clone()).await;
            assert_eq!(
                first.is_err(),
                k < writes,
                "died after {k} writes: {first:?}"
            );
            for run in 0..2 {
                let again = ledger
                    .admit_level(&job, 1, c.clone(), extra.clone())
                    .await
                    .unwrap();
                assert_eq!(
                    decided(&again),
                    decided(&want),
                    "run {run} after {k} writes"
                );
                let p = progress(jobs.get(&job).await.unwrap().unwrap().progress);
                assert_eq!(p, want_progress, "run {run} after {k} writes");
            }
        }
    }

    #[tokio::test]
    async fn a_level_costs_a_write_unit_per_page_and_one_for_its_reservation() {
        let Some(ep) = test_moto::endpoint() else {
            return;
        };
        let (ledger, jobs, _) = ledger(&ep, 1).await;
        let job = job_with_root(&ledger, &jobs, 151).await;
        let names: Vec<String> = (0..400).map(|i| format!("p{i}")).collect();
        let level1: Vec<&str> = names.iter().map(String::as_str).collect();
        let (counted, die) = dying(&ledger, usize::MAX);
        let out = counted
            .admit_level(&job, 1, candidates(1, &level1), BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(out.admitted.len(), 150);
        assert_eq!(out.excluded, [("max_pages".into(), 250)].into());
        // Before: a claim per candidate of each chunk of 64 (192), and each page's flag in a
        // transaction (2 units), 500 in all. Now each page's claim and the level's update.
        let units = die.units.load(Ordering::SeqCst);
        assert!(units <= 150 + 1, "{units} write units for 150 pages");
    }

    #[tokio::test]
    async fn a_level_is_counted_once() {
        let Some(ep) = test_moto::endpoint() else {
            return;
        };
        let (ledger, jobs, job) = ledger(&ep, 10).await;
        ledger
            .admit_level(&job, 0, candidates(0, &["a", "b", "c"]), BTreeMap::new())
            .await
            .unwrap();
        let outcomes = [
            PageOutcome::Stored,
            PageOutcome::Skipped("http_404".into()),
            PageOutcome::Stored,
        ];
        assert!(ledger.record_level_once(&job, 0, &outcomes).await.unwrap());
        // A re-run of the plan step: nothing counted twice.
        assert!(!ledger.record_level_once(&job, 0, &outcomes).await.unwrap());
        assert!(!ledger.record_level_once(&job, 1, &[]).await.unwrap());
        let p = jobs.get(&job).await.unwrap().unwrap().progress;
        assert_eq!((p.pages_total, p.pages_processed, p.stored), (3, 3, 2));
        assert_eq!(p.skipped.get("http_404"), Some(&1));
    }

    #[tokio::test]
    async fn reservations_go_in_batches_and_stop_at_the_budget() {
        let Some(ep) = test_moto::endpoint() else {
            return;
        };
        let (ledger, jobs, job) = ledger(&ep, 150).await;
        let names: Vec<String> = (0..200).map(|i| format!("p{i}")).collect();
        let level0: Vec<&str> = names.iter().map(String::as_str).collect();
        let first = ledger
            .admit_level(&job, 0, candidates(0, &level0), BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(first.admitted.len(), 150);
        assert_eq!(paths(&first)[149], "/p149");
        assert_eq!(first.excluded, [("max_pages".into(), 50)].into());
        let again = ledger
            .admit_level(&job, 0, candidates(0, &level0), BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(decided(&again), decided(&first));
        let p = jobs.get(&job).await.unwrap().unwrap().progress;
        assert_eq!(p.pages_total, 150);
        assert_eq!(p.excluded.get("max_pages"), Some(&50));
    }
}

//! [`LevelLedger`]: the serverless crawl's admissions, crash-safe and repeatable per level.
//!
//! The plan step admits a level's links (dedup records, page reservations) and then writes
//! the level's list to S3. A plan run that dies between the two (a crash, a timeout, a
//! failed PUT) is run again by Step Functions, and that run must end with the same list:
//! a URL whose reservation was made must be in it, or `pages_processed` never reaches
//! `pages_total`. So each dedup record written here carries the level it was claimed for
//! and whether its page was reserved, and the reservation and that flag change in one
//! transaction. A later run claims nothing twice: it reads the records it finds back, keeps
//! those reserved for this level, and goes on where the dead run stopped.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::time::Duration;

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{BuildError, ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeValue, KeysAndAttributes, Put, ReturnValuesOnConditionCheckFailure, TransactWriteItem,
    Update,
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
/// Whether the record's page was reserved (BOOL).
const RESERVED: &str = "reserved";
/// Claims in flight at once.
const CLAIM_CONCURRENCY: usize = 16;
/// Candidates claimed one by one before the next reservations are decided.
const CHUNK: usize = 64;
/// Batch calls in flight at once once the budget is spent.
const BATCH_CONCURRENCY: usize = 4;
/// Records reserved per transaction (DynamoDB allows 100 items; one is the budget).
const RESERVE_BATCH: usize = 99;

/// What [`LevelLedger::admit_level`] decided for a level.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct LevelAdmission {
    /// The level's pages, in candidate order: every candidate reserved for this level,
    /// by this run or by an earlier one.
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
    /// Claimed for this level (now or by an earlier run); whether its page is reserved.
    Ours { reserved: bool },
}

/// What an existing dedup record means for a claim for `level`.
fn claim_of(old: &Item, level: u32) -> Claim {
    match get_n::<u32>(old, LEVEL) {
        Some(l) if l == level => Claim::Ours {
            reserved: matches!(old.get(RESERVED), Some(AttributeValue::Bool(true))),
        },
        _ => Claim::Seen,
    }
}

fn is_ccf(code: Option<&str>) -> bool {
    code == Some("ConditionalCheckFailed")
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
                what: "TransactWriteItems request".into(),
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

    /// Runs a transaction. `Ok(None)` when it applied, `Ok(Some(codes))` with one
    /// cancellation code per item (`None` or `ConditionalCheckFailed`) when a condition
    /// failed; any other cancellation (a conflicting transaction) is a temporary error.
    async fn transact(&self, items: Vec<TransactWriteItem>) -> Result<Option<Vec<Option<String>>>> {
        match self
            .client
            .transact_write_items()
            .set_transact_items(Some(items))
            .send()
            .await
        {
            Ok(_) => Ok(None),
            Err(SdkError::ServiceError(se)) => match se.err() {
                TransactWriteItemsError::TransactionCanceledException(tc) => {
                    let codes: Vec<Option<String>> = tc
                        .cancellation_reasons()
                        .iter()
                        .map(|r| r.code().filter(|c| *c != "None").map(str::to_owned))
                        .collect();
                    if codes.iter().flatten().all(|c| is_ccf(Some(c))) {
                        Ok(Some(codes))
                    } else {
                        Err(Error::new(
                            ErrorKind::Storage,
                            format!("TransactWriteItems cancelled: {codes:?}"),
                        )
                        .with_temporary(true)
                        .with_backend(self.name.clone()))
                    }
                }
                _ => Err(self.sdk_err("TransactWriteItems", SdkError::ServiceError(se))),
            },
            Err(e) => Err(self.sdk_err("TransactWriteItems", e)),
        }
    }

    /// Claims `key` for `level`, or reads back who holds it.
    async fn claim(&self, job: &JobId, key: &str, level: u32) -> Result<Claim> {
        let put = self.dedup_put(
            job,
            key,
            &[(LEVEL, n(level)), (RESERVED, AttributeValue::Bool(false))],
        )?;
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
            Ok(_) => return Ok(Claim::Ours { reserved: false }),
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

    /// The job's `pages_total` and `max_pages` (`u64::MAX` when it has none).
    async fn budget(&self, job: &JobId) -> Result<(u64, u64)> {
        let out = self
            .client
            .get_item()
            .table_name(&self.jobs_table)
            .key(JOB_PK, s(job.as_str()))
            .projection_expression("#t, #max")
            .expression_attribute_names("#t", JOB_TOTAL)
            .expression_attribute_names("#max", JOB_MAX_PAGES)
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| self.sdk_err("GetItem", e))?;
        let item = out.item().cloned().unwrap_or_default();
        Ok((
            get_n(&item, JOB_TOTAL).unwrap_or(0),
            get_n(&item, JOB_MAX_PAGES).unwrap_or(u64::MAX),
        ))
    }

    /// Claims keys for `level` once the budget is spent: records are read in batches of
    /// [`BATCH_GET`], and nothing is written: no page can be reserved any more
    /// (`pages_total` only grows), so a URL past the budget needs no record — it is only
    /// counted (once per level that links to it), and a page with thousands of links costs
    /// reads, not a write per link. A re-run of the level reads the same records and counts
    /// the same (the level's counts are added once, see `count_excluded_once`).
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
                None => Claim::Ours { reserved: false },
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

    /// Reserves pages of the job's budget for claimed, unreserved records of `level`, in
    /// order: transactions of up to [`RESERVE_BATCH`] records' flags and one budget update
    /// (`pages_total += k` if it stays within `max_pages`), so a page costs its flag's two
    /// write units, not a transaction of its own. Returns how many of `keys` (a prefix) are
    /// reserved now; `budget` is the job's (`pages_total`, `max_pages`), kept current.
    async fn reserve_many(
        &self,
        job: &JobId,
        level: u32,
        keys: &[String],
        budget: &mut (u64, u64),
    ) -> Result<usize> {
        let mut done = 0;
        while done < keys.len() {
            let room = usize::try_from(budget.1.saturating_sub(budget.0)).unwrap_or(usize::MAX);
            let k = (keys.len() - done).min(RESERVE_BATCH).min(room);
            if k == 0 {
                break;
            }
            let mut items = Vec::with_capacity(k + 1);
            for key in &keys[done..done + k] {
                let flag = Update::builder()
                    .table_name(&self.dedup_table)
                    .key(DEDUP_PK, s(job.as_str()))
                    .key(DEDUP_SK, s(sort_key(key)))
                    .update_expression("SET #res = :t")
                    .condition_expression("#lvl = :lvl AND #res = :f")
                    .expression_attribute_names("#res", RESERVED)
                    .expression_attribute_names("#lvl", LEVEL)
                    .expression_attribute_values(":t", AttributeValue::Bool(true))
                    .expression_attribute_values(":f", AttributeValue::Bool(false))
                    .expression_attribute_values(":lvl", n(level))
                    .build();
                items.push(
                    TransactWriteItem::builder()
                        .update(self.built(flag)?)
                        .build(),
                );
            }
            let limit = budget.1.saturating_sub(k as u64);
            let add = Update::builder()
                .table_name(&self.jobs_table)
                .key(JOB_PK, s(job.as_str()))
                .update_expression("ADD #t :k")
                .condition_expression("attribute_exists(#pk) AND #t <= :limit")
                .expression_attribute_names("#pk", JOB_PK)
                .expression_attribute_names("#t", JOB_TOTAL)
                .expression_attribute_values(":k", n(k))
                .expression_attribute_values(":limit", n(limit))
                .build();
            items.push(
                TransactWriteItem::builder()
                    .update(self.built(add)?)
                    .build(),
            );
            match self.transact(items).await? {
                None => {
                    budget.0 += k as u64;
                    done += k;
                }
                // The budget moved under us (another writer): read it again and retry.
                Some(codes) if codes.last().is_some_and(|c| is_ccf(c.as_deref())) => {
                    let now = self.budget(job).await?;
                    if now == *budget {
                        return Err(Error::new(
                            ErrorKind::NotFound,
                            format!("no job {job} to reserve pages on"),
                        )
                        .with_backend(self.name.clone()));
                    }
                    *budget = now;
                }
                Some(codes) => {
                    return Err(Error::new(
                        ErrorKind::Storage,
                        format!("reservation flags changed under the plan step: {codes:?}"),
                    )
                    .with_temporary(true)
                    .with_backend(self.name.clone()))
                }
            }
        }
        Ok(done)
    }

    /// Admits `candidates` (all at depth `level`) for `level`: claims each new URL, then in
    /// order counts the excluded ones and reserves a page for the others until the budget
    /// is spent (the rest count as `max_pages`). Repeatable: a second run for the same level
    /// and candidates (after a crash anywhere in the first) returns the same admitted list
    /// and adds nothing to the counters twice.
    pub(crate) async fn admit_level(
        &self,
        job: &JobId,
        level: u32,
        candidates: Vec<Candidate>,
        extra: BTreeMap<String, u64>,
    ) -> Result<LevelAdmission> {
        let mut seen = HashSet::with_capacity(candidates.len());
        let candidates: Vec<Candidate> = candidates
            .into_iter()
            .filter(|c| seen.insert(c.key.clone()))
            .collect();
        let mut out = LevelAdmission {
            excluded: extra,
            ..LevelAdmission::default()
        };
        out.excluded.retain(|_, n| *n > 0);
        let mut budget = self.budget(job).await?;
        let mut spent = budget.0 >= budget.1;
        let mut rest = candidates.into_iter().peekable();
        while rest.peek().is_some() {
            // While pages can still be reserved, claim a chunk one conditional put per URL;
            // once the budget is spent, claim everything left in batches.
            let chunk: Vec<Candidate> = if spent {
                rest.by_ref().collect()
            } else {
                rest.by_ref().take(CHUNK).collect()
            };
            let keys: Vec<String> = chunk.iter().map(|c| c.key.clone()).collect();
            let claims = if spent {
                self.claim_spent(job, level, keys).await?
            } else {
                let claims = self.claim_each(job, level, keys).await?;
                out.claimed.extend(
                    chunk
                        .iter()
                        .zip(&claims)
                        .filter(|(_, c)| matches!(c, Claim::Ours { .. }))
                        .map(|(c, _)| c.key.clone()),
                );
                claims
            };
            // The chunk's claimed, unreserved, not excluded records get their pages in one go
            // (in order, as many as the budget has left).
            let waiting: Vec<String> = chunk
                .iter()
                .zip(&claims)
                .filter(|(c, claim)| {
                    c.excluded.is_none() && **claim == Claim::Ours { reserved: false }
                })
                .map(|(c, _)| c.key.clone())
                .collect();
            let granted = if spent {
                0
            } else {
                self.reserve_many(job, level, &waiting, &mut budget).await?
            };
            let mut waited = 0;
            for (c, claim) in chunk.into_iter().zip(claims) {
                let Claim::Ours { reserved } = claim else {
                    continue;
                };
                let reason = if let Some(r) = c.excluded {
                    Some(r)
                } else if reserved {
                    out.admitted.push(c.entry);
                    None
                } else {
                    waited += 1;
                    if waited <= granted {
                        out.admitted.push(c.entry);
                        None
                    } else {
                        spent = true;
                        Some("max_pages".to_owned())
                    }
                };
                if let Some(r) = reason {
                    *out.excluded.entry(r).or_default() += 1;
                }
            }
        }
        self.count_excluded_once(job, level, &out.excluded).await?;
        Ok(out)
    }

    /// Adds a level's exclusion counts to the job, once per level (a marker record in the
    /// dedup table, written in the same transaction).
    async fn count_excluded_once(
        &self,
        job: &JobId,
        level: u32,
        counts: &BTreeMap<String, u64>,
    ) -> Result<()> {
        if counts.is_empty() {
            return Ok(());
        }
        let marker = self.dedup_put(job, &format!("\u{1}excluded-counted\u{1}{level}"), &[])?;
        let mut update = Update::builder()
            .table_name(&self.jobs_table)
            .key(JOB_PK, s(job.as_str()))
            .condition_expression("attribute_exists(#pk)")
            .expression_attribute_names("#pk", JOB_PK)
            .expression_attribute_names("#m", JOB_EXCLUDED)
            .expression_attribute_values(":zero", n(0));
        let mut sets = Vec::with_capacity(counts.len());
        for (i, (reason, count)) in counts.iter().enumerate() {
            sets.push(format!("#m.#r{i} = if_not_exists(#m.#r{i}, :zero) + :n{i}"));
            update = update
                .expression_attribute_names(format!("#r{i}"), reason)
                .expression_attribute_values(format!(":n{i}"), n(count));
        }
        let update = self.built(
            update
                .update_expression(format!("SET {}", sets.join(", ")))
                .build(),
        )?;
        let items = vec![
            TransactWriteItem::builder().put(marker).build(),
            TransactWriteItem::builder().update(update).build(),
        ];
        match self.transact(items).await? {
            None => Ok(()),
            Some(codes) if is_ccf(codes.first().and_then(|c| c.as_deref())) => Ok(()),
            Some(codes) => Err(Error::new(
                ErrorKind::NotFound,
                format!("no job {job} to count exclusions on ({codes:?})"),
            )
            .with_backend(self.name.clone())),
        }
    }

    /// Counts the pages of a level once: their outcomes are added to the job's counters in
    /// one transaction with the level's counted-once marker, so a page costs no write of its
    /// own and a re-run of the plan step counts nothing twice. `Ok(false)` when the level was
    /// counted before (or has no pages).
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
        let mark = self.dedup_put(job, &format!("\u{1}level-done\u{1}{level}"), &[])?;
        let mut count = Update::builder()
            .table_name(&self.jobs_table)
            .key(JOB_PK, s(job.as_str()))
            .condition_expression("attribute_exists(#pk)")
            .expression_attribute_names("#pk", JOB_PK)
            .expression_attribute_names("#p", JOB_PROCESSED)
            .expression_attribute_names("#s", JOB_STORED)
            .expression_attribute_values(":p", n(outcomes.len()))
            .expression_attribute_values(":s", n(stored));
        let mut expr = "ADD #p :p, #s :s".to_owned();
        if !skipped.is_empty() {
            count = count
                .expression_attribute_names("#m", JOB_SKIPPED)
                .expression_attribute_values(":zero", n(0));
            let mut sets = Vec::with_capacity(skipped.len());
            for (i, (reason, c)) in skipped.iter().enumerate() {
                sets.push(format!("#m.#r{i} = if_not_exists(#m.#r{i}, :zero) + :n{i}"));
                count = count
                    .expression_attribute_names(format!("#r{i}"), *reason)
                    .expression_attribute_values(format!(":n{i}"), n(c));
            }
            expr = format!("{expr} SET {}", sets.join(", "));
        }
        let count = self.built(count.update_expression(expr).build())?;
        let items = vec![
            TransactWriteItem::builder().put(mark).build(),
            TransactWriteItem::builder().update(count).build(),
        ];
        match self.transact(items).await? {
            None => Ok(true),
            Some(codes) if is_ccf(codes.first().and_then(|c| c.as_deref())) => Ok(false),
            Some(codes) => Err(Error::new(
                ErrorKind::NotFound,
                format!("no job {job} to count pages on ({codes:?})"),
            )
            .with_backend(self.name.clone())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_moto;
    use super::*;
    use crawl_core::{CrawlRequest, Guardrails, JobRecord, JobStore};
    use url::Url;

    async fn ledger(endpoint: &str, max_pages: u32) -> (LevelLedger, DynamoJobStore, JobId) {
        let dedup = test_moto::dedup(endpoint).await;
        let jobs = test_moto::jobs(endpoint).await;
        let req = CrawlRequest::builder("http://127.0.0.1:9/")
            .max_pages(max_pages)
            .guardrails(Guardrails::lifted())
            .build()
            .unwrap();
        let job = JobId::new();
        let record = JobRecord::new(job.clone(), req, time::OffsetDateTime::now_utc());
        jobs.create(&record).await.unwrap();
        (LevelLedger::new(&dedup, &jobs), jobs, job)
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
        // The next level sees all of them as already known.
        let next = ledger
            .admit_level(&job, 2, candidates(2, &["b", "c", "d"]), BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(decided(&next), decided(&LevelAdmission::default()));
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
        // Spent from the start: known URLs are seen, new ones only counted.
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
        assert_eq!(level2.excluded, [("max_pages".into(), 2)].into());
        let p = jobs.get(&job).await.unwrap().unwrap().progress;
        assert_eq!(p.pages_total, 3);
        assert_eq!(p.excluded.get("max_pages"), Some(&300));
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
        // Root, the first chunk claimed one by one while pages could still be reserved,
        // and the level's counted-once marker: nothing for the 1,936 links after.
        let n = records(&ledger, &job).await;
        assert_eq!(n, 1 + CHUNK as i32 + 1, "{n} records");
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
        assert_eq!(
            records(&ledger, &job).await,
            n + 1,
            "only the level's marker"
        );
        let p = jobs.get(&job).await.unwrap().unwrap().progress;
        assert_eq!(p.excluded.get("max_pages"), Some(&(1_998 + 2_000)));
        assert_eq!(p.excluded.get("links_per_page"), Some(&40));
    }

    #[tokio::test]
    async fn a_run_that_died_after_some_reservations_is_completed_by_the_next() {
        let Some(ep) = test_moto::endpoint() else {
            return;
        };
        let (ledger, jobs, job) = ledger(&ep, 10).await;
        let c = candidates(1, &["a", "b", "c"]);
        // The dead run: every URL claimed, only "b" reserved, nothing counted or written.
        for cand in &c {
            assert_eq!(
                ledger.claim(&job, &cand.key, 1).await.unwrap(),
                Claim::Ours { reserved: false }
            );
        }
        let mut budget = ledger.budget(&job).await.unwrap();
        assert_eq!(
            ledger
                .reserve_many(&job, 1, &[c[1].key.clone()], &mut budget)
                .await
                .unwrap(),
            1
        );
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

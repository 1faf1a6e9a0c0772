//! [`DynamoJobStore`]: job records with conditional transitions and exact counters.

use std::collections::HashMap;
use std::fmt;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::Client;
use crawl_core::clock::DynClock;
use crawl_core::{
    Capabilities, CrawlRequest, Error, ErrorKind, IngestionClaim, IngestionState, JobId, JobRecord,
    JobStatus, JobStore, PageOutcome, Result,
};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::builder::{from_env, DynamoBuilder, Parts};
use super::table::{self, get_counts, get_n, get_s, n, s, Item, TableSpec};
use crate::error::AwsError;

pub(super) const PK: &str = "pk";
const STATUS: &str = "status";
const ASSISTANT: &str = "assistant_id";
const REQUEST: &str = "request";
pub(super) const MAX_PAGES: &str = "max_pages";
const FAILURE: &str = "failure";
const STARTED_AT: &str = "started_at";
/// Start time as 20 zero-padded digits of epoch nanoseconds: sorts as text.
const STARTED_NS: &str = "started_ns";
const COMPLETED_AT: &str = "completed_at";
pub(super) const TOTAL: &str = "pages_total";
pub(super) const PROCESSED: &str = "pages_processed";
pub(super) const STORED: &str = "stored";
pub(super) const SKIPPED: &str = "skipped";
pub(super) const EXCLUDED: &str = "excluded";
/// The diff counters of a run of a source (a map: added, changed, unchanged, removed).
const CHANGES: &str = "changes";
/// When the job's documents were handed to the ingestor (RFC 3339), once.
const INGESTED_AT: &str = "ingested_at";
/// Epoch seconds until which one finalise run holds the ingestion hand-off.
const INGEST_LEASE: &str = "ingest_lease_until";
/// The hand-off's state: `pending` (absent), `delivered` or `failed`.
const INGEST_STATE: &str = "ingestion";
/// Why the last hand-off failed.
const INGEST_REASON: &str = "ingestion_reason";
/// Hand-offs started.
const INGEST_ATTEMPTS: &str = "ingestion_attempts";
/// Index of jobs by assistant, newest last.
pub const ASSISTANT_INDEX: &str = "assistant-index";

/// A [`JobStore`] in DynamoDB, shared by every process of a crawl.
///
/// One item per job (partition key `pk` = job id) with `status`, the request as JSON,
/// `max_pages`, timestamps, `failure`, counters (`pages_total`, `pages_processed`,
/// `stored`) and the `skipped` and `excluded` maps of reason → count. Every change is one
/// conditional `UpdateItem`: `reserve_page` adds to `pages_total` only while it is below
/// `max_pages`, `record_page` adds to `pages_processed` only while it is below
/// `pages_total`, and `finish` applies only to a `RUNNING` job. A global secondary index
/// ([`ASSISTANT_INDEX`], on `assistant_id` and `started_ns`) serves `list` by assistant.
#[derive(Debug, Clone)]
pub struct DynamoJobStore {
    client: Client,
    table: String,
    name: String,
    clock: DynClock,
}

impl fmt::Display for DynamoJobStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

fn rfc3339(t: OffsetDateTime) -> String {
    t.format(&Rfc3339).unwrap_or_default()
}

fn counts(m: &std::collections::BTreeMap<String, u64>) -> AttributeValue {
    AttributeValue::M(m.iter().map(|(k, v)| (k.clone(), n(v))).collect())
}

impl DynamoJobStore {
    /// A builder.
    pub fn builder() -> DynamoBuilder<DynamoJobStore> {
        DynamoBuilder::default()
    }

    /// A store configured from the environment: table `KB_CRAWL_JOBS_TABLE` (required),
    /// `KB_CRAWL_AWS_ENDPOINT` for a local stand-in, credentials and region from the SDK's
    /// usual chain.
    pub async fn from_env() -> Result<DynamoJobStore> {
        from_env::<DynamoJobStore>("KB_CRAWL_JOBS_TABLE")
            .build()
            .await
    }

    pub(super) fn from_parts(p: Parts) -> Self {
        DynamoJobStore {
            client: p.client,
            table: p.table,
            name: p.name,
            clock: p.clock,
        }
    }

    /// The table name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// Creates the table (`pk`, on-demand, index [`ASSISTANT_INDEX`]) unless it exists.
    pub async fn create_table_if_missing(&self) -> Result<()> {
        let spec = TableSpec {
            pk: PK,
            sk: None,
            ttl_attribute: None,
            gsi: Some((ASSISTANT_INDEX, ASSISTANT, STARTED_NS)),
        };
        table::create_if_missing(&self.client, &self.table, &spec)
            .await
            .map_err(|e| e.into_core(self))
    }

    fn err(&self, e: AwsError, job: &JobId) -> Error {
        let e = e.into_core(self);
        if e.kind() == ErrorKind::NotFound {
            return e;
        }
        Error::new(e.kind(), format!("job {job}: {}", e.message()))
            .with_temporary(e.is_temporary())
            .with_backend(self.name.clone())
            .with_source(e)
    }

    fn not_found(&self, job: &JobId) -> Error {
        Error::new(ErrorKind::NotFound, format!("no job {job}")).with_backend(self.name.clone())
    }

    fn malformed(&self, job: &str, detail: impl Into<String>) -> Error {
        AwsError::Malformed {
            what: format!("job item {job}"),
            detail: detail.into(),
        }
        .into_core(self)
    }

    fn item_of(&self, r: &JobRecord) -> Result<Item> {
        let request = serde_json::to_string(&r.request)
            .map_err(|e| self.malformed(r.id.as_str(), e.to_string()))?;
        let p = &r.progress;
        let mut item: Item = HashMap::from([
            (PK.to_owned(), s(r.id.as_str())),
            (STATUS.to_owned(), s(r.status.as_str())),
            (REQUEST.to_owned(), s(request)),
            (MAX_PAGES.to_owned(), n(r.request.max_pages)),
            (STARTED_AT.to_owned(), s(rfc3339(r.started_at))),
            (
                STARTED_NS.to_owned(),
                s(format!(
                    "{:020}",
                    r.started_at.unix_timestamp_nanos().max(0)
                )),
            ),
            (TOTAL.to_owned(), n(p.pages_total)),
            (PROCESSED.to_owned(), n(p.pages_processed)),
            (STORED.to_owned(), n(p.stored)),
            (SKIPPED.to_owned(), counts(&p.skipped)),
            (EXCLUDED.to_owned(), counts(&p.excluded)),
        ]);
        if let Some(a) = &r.assistant_id {
            item.insert(ASSISTANT.to_owned(), s(a));
        }
        if let Some(f) = &r.failure {
            item.insert(FAILURE.to_owned(), s(f));
        }
        if let Some(c) = r.completed_at {
            item.insert(COMPLETED_AT.to_owned(), s(rfc3339(c)));
        }
        Ok(item)
    }

    fn record_of(&self, item: &Item) -> Result<JobRecord> {
        let id_text = get_s(item, PK).unwrap_or_default();
        let bad = |d: &str| self.malformed(id_text, d);
        let id: JobId = id_text.parse().map_err(|_| bad("pk is not a job id"))?;
        let request: CrawlRequest = serde_json::from_str(get_s(item, REQUEST).unwrap_or("null"))
            .map_err(|e| bad(&format!("request: {e}")))?;
        let time = |name: &str| {
            get_s(item, name)
                .map(|t| {
                    OffsetDateTime::parse(t, &Rfc3339).map_err(|e| bad(&format!("{name}: {e}")))
                })
                .transpose()
        };
        let started_at = time(STARTED_AT)?.ok_or_else(|| bad("started_at missing"))?;
        let mut r = JobRecord::new(id, request, started_at);
        r.assistant_id = get_s(item, ASSISTANT).map(str::to_owned);
        r.status = match get_s(item, STATUS) {
            Some("RUNNING") => JobStatus::Running,
            Some("COMPLETED") => JobStatus::Completed,
            Some("FAILED") => JobStatus::Failed,
            other => return Err(bad(&format!("status {other:?}"))),
        };
        r.failure = get_s(item, FAILURE).map(str::to_owned);
        r.completed_at = time(COMPLETED_AT)?;
        r.progress.pages_total = get_n(item, TOTAL).unwrap_or(0);
        r.progress.pages_processed = get_n(item, PROCESSED).unwrap_or(0);
        r.progress.stored = get_n(item, STORED).unwrap_or(0);
        r.progress.skipped = get_counts(item, SKIPPED);
        r.progress.excluded = get_counts(item, EXCLUDED);
        let c = get_counts(item, CHANGES);
        let at = |k: &str| c.get(k).copied().unwrap_or(0);
        r.progress.changes = crawl_core::ChangeCounts::new(
            at("added"),
            at("changed"),
            at("unchanged"),
            at("removed"),
        );
        // `ingested_at` alone (an item written before the state was kept) means delivered.
        r.ingestion.state = match get_s(item, INGEST_STATE) {
            _ if item.contains_key(INGESTED_AT) => IngestionState::Delivered,
            Some("failed") => IngestionState::Failed,
            _ => IngestionState::Pending,
        };
        r.ingestion.reason = get_s(item, INGEST_REASON).map(str::to_owned);
        r.ingestion.attempts = get_n(item, INGEST_ATTEMPTS).unwrap_or(0);
        r.ingestion.lease_until = get_n(item, INGEST_LEASE);
        Ok(r)
    }

    /// The job's whole item, read consistently.
    async fn item(&self, job: &JobId) -> Result<Option<HashMap<String, AttributeValue>>> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .key(PK, s(job.as_str()))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| self.err(AwsError::sdk("GetItem", e), job))?;
        Ok(out.item)
    }

    async fn exists(&self, job: &JobId) -> Result<bool> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .key(PK, s(job.as_str()))
            .projection_expression("#pk")
            .expression_attribute_names("#pk", PK)
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| self.err(AwsError::sdk("GetItem", e), job))?;
        Ok(out.item().is_some())
    }

    /// Runs a conditional `UpdateItem` on the job's item. `Ok(true)` when it applied,
    /// `Ok(false)` when its condition failed on an existing job, `NotFound` when there is
    /// no such job. `update` gets the request with the key set.
    async fn update(
        &self,
        job: &JobId,
        update: impl FnOnce(
            aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder,
        ) -> aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder,
    ) -> Result<bool> {
        let req = self
            .client
            .update_item()
            .table_name(&self.table)
            .key(PK, s(job.as_str()))
            .expression_attribute_names("#pk", PK);
        match update(req).send().await {
            Ok(_) => Ok(true),
            Err(e) => {
                let e = AwsError::sdk("UpdateItem", e);
                if e.code() != Some("ConditionalCheckFailedException") {
                    return Err(self.err(e, job));
                }
                if self.exists(job).await? {
                    Ok(false)
                } else {
                    Err(self.not_found(job))
                }
            }
        }
    }
}

#[async_trait]
impl JobStore for DynamoJobStore {
    async fn create(&self, record: &JobRecord) -> Result<()> {
        let item = self.item_of(record)?;
        let res = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(#pk)")
            .expression_attribute_names("#pk", PK)
            .send()
            .await;
        match res {
            Ok(_) => Ok(()),
            Err(e) => {
                let e = AwsError::sdk("PutItem", e);
                if e.code() == Some("ConditionalCheckFailedException") {
                    Err(Error::new(
                        ErrorKind::Conflict,
                        format!("job {} already exists", record.id),
                    )
                    .with_backend(self.name.clone()))
                } else {
                    Err(self.err(e, &record.id))
                }
            }
        }
    }

    async fn get(&self, job: &JobId) -> Result<Option<JobRecord>> {
        self.item(job)
            .await?
            .map(|i| self.record_of(&i))
            .transpose()
    }

    async fn list(&self, assistant_id: Option<&str>) -> Result<Vec<JobRecord>> {
        let mut items: Vec<Item> = Vec::new();
        match assistant_id {
            Some(a) => {
                let mut pages = self
                    .client
                    .query()
                    .table_name(&self.table)
                    .index_name(ASSISTANT_INDEX)
                    .key_condition_expression("#a = :a")
                    .expression_attribute_names("#a", ASSISTANT)
                    .expression_attribute_values(":a", s(a))
                    .scan_index_forward(false)
                    .into_paginator()
                    .send();
                while let Some(p) = pages.next().await {
                    let p = p.map_err(|e| AwsError::sdk("Query", e).into_core(self))?;
                    items.extend(p.items().iter().cloned());
                }
            }
            None => {
                let mut pages = self
                    .client
                    .scan()
                    .table_name(&self.table)
                    .consistent_read(true)
                    .into_paginator()
                    .send();
                while let Some(p) = pages.next().await {
                    let p = p.map_err(|e| AwsError::sdk("Scan", e).into_core(self))?;
                    items.extend(p.items().iter().cloned());
                }
            }
        }
        let mut v = items
            .iter()
            .map(|i| self.record_of(i))
            .collect::<Result<Vec<_>>>()?;
        v.sort_by(|a, b| b.started_at.cmp(&a.started_at).then(a.id.cmp(&b.id)));
        Ok(v)
    }

    async fn reserve_page(&self, job: &JobId) -> Result<bool> {
        self.update(job, |r| {
            r.update_expression("ADD #t :one")
                .condition_expression("attribute_exists(#pk) AND #t < #max")
                .expression_attribute_names("#t", TOTAL)
                .expression_attribute_names("#max", MAX_PAGES)
                .expression_attribute_values(":one", n(1))
        })
        .await
    }

    async fn record_page(&self, job: &JobId, outcome: &PageOutcome) -> Result<()> {
        // Past pages_total the count is dropped, as the contract says.
        self.update(job, |r| {
            let r = r
                .condition_expression("attribute_exists(#pk) AND #p < #t")
                .expression_attribute_names("#p", PROCESSED)
                .expression_attribute_names("#t", TOTAL)
                .expression_attribute_values(":one", n(1));
            match outcome {
                PageOutcome::Stored => r
                    .update_expression("ADD #p :one, #s :one")
                    .expression_attribute_names("#s", STORED),
                PageOutcome::Skipped(reason) => r
                    .update_expression("ADD #p :one SET #m.#r = if_not_exists(#m.#r, :zero) + :one")
                    .expression_attribute_names("#m", SKIPPED)
                    .expression_attribute_names("#r", reason)
                    .expression_attribute_values(":zero", n(0)),
            }
        })
        .await
        .map(|_| ())
    }

    async fn record_excluded(&self, job: &JobId, reason: &str) -> Result<()> {
        let applied = self
            .update(job, |r| {
                r.update_expression("SET #m.#r = if_not_exists(#m.#r, :zero) + :one")
                    .condition_expression("attribute_exists(#pk)")
                    .expression_attribute_names("#m", EXCLUDED)
                    .expression_attribute_names("#r", reason)
                    .expression_attribute_values(":zero", n(0))
                    .expression_attribute_values(":one", n(1))
            })
            .await?;
        debug_assert!(applied);
        Ok(())
    }

    async fn record_excluded_counts(
        &self,
        job: &JobId,
        counts: &std::collections::BTreeMap<String, u64>,
    ) -> Result<()> {
        let counts: Vec<(&String, &u64)> = counts.iter().filter(|(_, c)| **c > 0).collect();
        if counts.is_empty() {
            return Ok(());
        }
        // One UpdateItem for all reasons: the counts change together.
        let sets: Vec<String> = (0..counts.len())
            .map(|i| format!("#m.#r{i} = if_not_exists(#m.#r{i}, :zero) + :n{i}"))
            .collect();
        self.update(job, |mut r| {
            r = r
                .update_expression(format!("SET {}", sets.join(", ")))
                .condition_expression("attribute_exists(#pk)")
                .expression_attribute_names("#m", EXCLUDED)
                .expression_attribute_values(":zero", n(0));
            for (i, (reason, c)) in counts.iter().enumerate() {
                r = r
                    .expression_attribute_names(format!("#r{i}"), reason.as_str())
                    .expression_attribute_values(format!(":n{i}"), n(**c));
            }
            r
        })
        .await?;
        Ok(())
    }

    async fn record_changes(&self, job: &JobId, changes: &crawl_core::ChangeCounts) -> Result<()> {
        let map = std::collections::BTreeMap::from([
            ("added".to_owned(), changes.added),
            ("changed".to_owned(), changes.changed),
            ("unchanged".to_owned(), changes.unchanged),
            ("removed".to_owned(), changes.removed),
        ]);
        self.update(job, |r| {
            r.update_expression("SET #c = :c")
                .condition_expression("attribute_exists(#pk)")
                .expression_attribute_names("#c", CHANGES)
                .expression_attribute_values(":c", counts(&map))
        })
        .await?;
        Ok(())
    }

    async fn finish(
        &self,
        job: &JobId,
        status: JobStatus,
        failure: Option<String>,
    ) -> Result<bool> {
        if !status.is_final() {
            return Err(Error::invalid("finish: status must be COMPLETED or FAILED")
                .with_backend(self.name.clone()));
        }
        let now = rfc3339(self.clock.now());
        self.update(job, |r| {
            let r = r
                .condition_expression("attribute_exists(#pk) AND #st = :running")
                .expression_attribute_names("#st", STATUS)
                .expression_attribute_names("#c", COMPLETED_AT)
                .expression_attribute_names("#f", FAILURE)
                .expression_attribute_values(":running", s(JobStatus::Running.as_str()))
                .expression_attribute_values(":final", s(status.as_str()))
                .expression_attribute_values(":now", s(now));
            match failure {
                Some(f) => r
                    .update_expression("SET #st = :final, #c = :now, #f = :f")
                    .expression_attribute_values(":f", s(f)),
                None => r.update_expression("SET #st = :final, #c = :now REMOVE #f"),
            }
        })
        .await
    }

    async fn begin_ingestion(
        &self,
        job: &JobId,
        lease: std::time::Duration,
    ) -> Result<IngestionClaim> {
        let now = self.clock.now().unix_timestamp();
        let until = now.saturating_add(i64::try_from(lease.as_secs()).unwrap_or(i64::MAX / 2));
        let applied = self
            .update(job, |r| {
                r.update_expression("SET #l = :until ADD #a :one")
                    .condition_expression(
                        "attribute_exists(#pk) AND #st = :completed AND attribute_not_exists(#i) \
                         AND (attribute_not_exists(#l) OR #l <= :now)",
                    )
                    .expression_attribute_names("#st", STATUS)
                    .expression_attribute_names("#i", INGESTED_AT)
                    .expression_attribute_names("#l", INGEST_LEASE)
                    .expression_attribute_names("#a", INGEST_ATTEMPTS)
                    .expression_attribute_values(":completed", s(JobStatus::Completed.as_str()))
                    .expression_attribute_values(":until", n(until))
                    .expression_attribute_values(":now", n(now))
                    .expression_attribute_values(":one", n(1))
            })
            .await?;
        let item = self.item(job).await?.ok_or_else(|| self.not_found(job))?;
        Ok(if applied {
            IngestionClaim::Mine {
                attempt: get_n(&item, INGEST_ATTEMPTS).unwrap_or(1),
            }
        } else if item.contains_key(INGESTED_AT) {
            IngestionClaim::Delivered
        } else if get_s(&item, STATUS) != Some(JobStatus::Completed.as_str()) {
            IngestionClaim::NotCompleted
        } else {
            IngestionClaim::Busy
        })
    }

    async fn end_ingestion(&self, job: &JobId, failure: Option<String>) -> Result<()> {
        let now = rfc3339(self.clock.now());
        // A delivered job stays delivered: the condition skips it.
        self.update(job, |r| {
            let r = r
                .condition_expression("attribute_exists(#pk) AND attribute_not_exists(#i)")
                .expression_attribute_names("#i", INGESTED_AT)
                .expression_attribute_names("#l", INGEST_LEASE)
                .expression_attribute_names("#s", INGEST_STATE)
                .expression_attribute_names("#r", INGEST_REASON);
            match failure {
                None => r
                    .update_expression("SET #i = :now, #s = :delivered REMOVE #l, #r")
                    .expression_attribute_values(":now", s(now))
                    .expression_attribute_values(":delivered", s("delivered")),
                Some(reason) => r
                    .update_expression("SET #s = :failed, #r = :reason REMOVE #l")
                    .expression_attribute_values(":failed", s("failed"))
                    .expression_attribute_values(":reason", s(reason)),
            }
        })
        .await
        .map(|_| ())
    }

    async fn delete(&self, job: &JobId) -> Result<()> {
        let res = self
            .client
            .delete_item()
            .table_name(&self.table)
            .key(PK, s(job.as_str()))
            .condition_expression("attribute_exists(#pk)")
            .expression_attribute_names("#pk", PK)
            .send()
            .await;
        match res {
            Ok(_) => Ok(()),
            Err(e) => {
                let e = AwsError::sdk("DeleteItem", e);
                if e.code() == Some("ConditionalCheckFailedException") {
                    Err(self.not_found(job))
                } else {
                    Err(self.err(e, job))
                }
            }
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::SHARED
    }
}

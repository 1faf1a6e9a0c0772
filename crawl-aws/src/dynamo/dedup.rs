//! [`DynamoDedup`]: one item per `(job, key)` with a TTL window enforced on insert.

use std::collections::HashSet;
use std::fmt;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, DeleteRequest, WriteRequest};
use aws_sdk_dynamodb::Client;
use crawl_core::clock::DynClock;
use crawl_core::{Capabilities, DedupStore, JobId, Result};
use futures::{StreamExt, TryStreamExt};
use sha2::{Digest, Sha256};

use super::builder::{from_env, DynamoBuilder, Parts};
use super::table::{self, get_n, n, s, TableSpec};
use crate::error::AwsError;

pub(super) const PK: &str = "pk";
pub(super) const SK: &str = "sk";
pub(super) const KEY: &str = "url_key";
pub(super) const EXPIRES: &str = "expires_at";
/// Keys longer than this are stored under their SHA-256 (DynamoDB sort keys hold 1,024 bytes).
const MAX_PLAIN_KEY: usize = 1000;
/// Conditional puts in flight for one `insert_many`.
const INSERT_CONCURRENCY: usize = 16;
/// Writes per BatchWriteItem (the service's maximum).
pub(super) const BATCH: usize = 25;
/// Keys per BatchGetItem (the service's maximum).
#[cfg_attr(not(feature = "aws-lambda"), allow(dead_code))] // Used by the level ledger.
pub(super) const BATCH_GET: usize = 100;
/// Rounds of retrying a batch's unprocessed items.
pub(super) const UNPROCESSED_ROUNDS: u32 = 8;

/// A [`DedupStore`] in DynamoDB, shared by every process of a crawl.
///
/// Table layout: partition key `pk` = job id, sort key `sk` = the URL key (or
/// `sha256:{hex}` of it when longer than 1,000 bytes, the key itself then kept in
/// `url_key`), and `expires_at` (epoch seconds, the table's TTL attribute). An insert is a
/// conditional `PutItem` with `attribute_not_exists(pk) OR expires_at <= :now`, so exactly
/// one caller wins per key and window, and a key past its TTL counts as absent even before
/// DynamoDB's TTL sweeper removes it.
#[derive(Debug, Clone)]
pub struct DynamoDedup {
    client: Client,
    table: String,
    name: String,
    clock: DynClock,
    ttl: Duration,
}

impl fmt::Display for DynamoDedup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

pub(super) fn sort_key(key: &str) -> String {
    if key.len() > MAX_PLAIN_KEY {
        format!("sha256:{}", hex::encode(Sha256::digest(key.as_bytes())))
    } else {
        key.to_owned()
    }
}

impl DynamoDedup {
    /// A builder.
    pub fn builder() -> DynamoBuilder<DynamoDedup> {
        DynamoBuilder::default()
    }

    /// A store configured from the environment: table `KB_CRAWL_DEDUP_TABLE` (required),
    /// `KB_CRAWL_AWS_ENDPOINT` for a local stand-in, credentials and region from the SDK's
    /// usual chain.
    pub async fn from_env() -> Result<DynamoDedup> {
        from_env::<DynamoDedup>("KB_CRAWL_DEDUP_TABLE")
            .build()
            .await
    }

    pub(super) fn from_parts(p: Parts) -> Self {
        DynamoDedup {
            client: p.client,
            table: p.table,
            name: p.name,
            clock: p.clock,
            ttl: p.ttl,
        }
    }

    /// The SDK client (the host limiter shares the table).
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    /// The clock deciding what has expired.
    #[cfg_attr(not(feature = "aws-lambda"), allow(dead_code))] // Used by the level ledger.
    pub(super) fn clock(&self) -> DynClock {
        std::sync::Arc::clone(&self.clock)
    }

    /// How long a key stays present.
    #[cfg_attr(not(feature = "aws-lambda"), allow(dead_code))] // Used by the level ledger.
    pub(super) fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The table name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// Creates the table (`pk`, `sk`, on-demand, TTL on `expires_at`) unless it exists.
    pub async fn create_table_if_missing(&self) -> Result<()> {
        let spec = TableSpec {
            pk: PK,
            sk: Some(SK),
            ttl_attribute: Some(EXPIRES),
            gsi: None,
        };
        table::create_if_missing(&self.client, &self.table, &spec)
            .await
            .map_err(|e| e.into_core(self))
    }

    fn now_secs(&self) -> i64 {
        self.clock.now().unix_timestamp()
    }

    async fn put_if_absent(&self, job: &JobId, key: &str) -> Result<bool> {
        let now = self.now_secs();
        let ttl = i64::try_from(self.ttl.as_secs()).unwrap_or(i64::MAX / 2);
        let res = self
            .client
            .put_item()
            .table_name(&self.table)
            .item(PK, s(job.as_str()))
            .item(SK, s(sort_key(key)))
            .item(KEY, s(key))
            .item(EXPIRES, n(now.saturating_add(ttl)))
            .condition_expression("attribute_not_exists(#pk) OR #exp <= :now")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#exp", EXPIRES)
            .expression_attribute_values(":now", n(now))
            .send()
            .await;
        match res {
            Ok(_) => Ok(true),
            Err(e) => {
                let e = AwsError::sdk("PutItem", e);
                if e.code() == Some("ConditionalCheckFailedException") {
                    Ok(false)
                } else {
                    Err(e.into_core(self))
                }
            }
        }
    }

    async fn delete_batch(&self, keys: Vec<(String, String)>) -> Result<()> {
        let requests = keys
            .into_iter()
            .map(|(pk, sk)| {
                DeleteRequest::builder()
                    .key(PK, s(pk))
                    .key(SK, s(sk))
                    .build()
                    .map(|d| WriteRequest::builder().delete_request(d).build())
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                AwsError::Malformed {
                    what: "BatchWriteItem request".into(),
                    detail: e.to_string(),
                }
                .into_core(self)
            })?;
        self.write_batch(requests).await
    }

    /// Sends up to [`BATCH`] write requests in one BatchWriteItem, retrying unprocessed
    /// items with backoff.
    pub(super) async fn write_batch(&self, requests: Vec<WriteRequest>) -> Result<()> {
        table::write_batch(&self.client, &self.table, &self.name, requests).await
    }
}

#[async_trait]
impl DedupStore for DynamoDedup {
    async fn insert(&self, job: &JobId, key: &str) -> Result<bool> {
        self.put_if_absent(job, key).await
    }

    async fn insert_many(&self, job: &JobId, keys: &[String]) -> Result<Vec<bool>> {
        let mut seen = HashSet::with_capacity(keys.len());
        let firsts: Vec<bool> = keys.iter().map(|k| seen.insert(k.as_str())).collect();
        futures::stream::iter(keys.iter().cloned().zip(firsts))
            .map(|(k, first)| async move {
                if first {
                    self.put_if_absent(job, &k).await
                } else {
                    Ok(false)
                }
            })
            .buffered(INSERT_CONCURRENCY)
            .try_collect()
            .await
    }

    async fn contains(&self, job: &JobId, key: &str) -> Result<bool> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .key(PK, s(job.as_str()))
            .key(SK, s(sort_key(key)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| AwsError::sdk("GetItem", e).into_core(self))?;
        let now = self.now_secs();
        Ok(out
            .item()
            .and_then(|i| get_n::<i64>(i, EXPIRES))
            .is_some_and(|exp| exp > now))
    }

    async fn clear_job(&self, job: &JobId) -> Result<()> {
        let mut pages = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression("#pk = :job")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#sk", SK)
            .expression_attribute_values(":job", s(job.as_str()))
            .projection_expression("#pk, #sk")
            .consistent_read(true)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| AwsError::sdk("Query", e).into_core(self))?;
            let keys: Vec<(String, String)> = page
                .items()
                .iter()
                .filter_map(|i| match (i.get(PK), i.get(SK)) {
                    (Some(AttributeValue::S(p)), Some(AttributeValue::S(k))) => {
                        Some((p.clone(), k.clone()))
                    }
                    _ => None,
                })
                .collect();
            for chunk in keys.chunks(BATCH) {
                self.delete_batch(chunk.to_vec()).await?;
            }
        }
        Ok(())
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::SHARED
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_keys_are_hashed_to_fit_a_sort_key() {
        assert_eq!(sort_key("example.com/a"), "example.com/a");
        let long = format!("example.com/{}", "x".repeat(5000));
        let k = sort_key(&long);
        assert!(k.starts_with("sha256:") && k.len() < 100, "{k}");
        assert_ne!(k, sort_key(&format!("{long}y")));
    }
}

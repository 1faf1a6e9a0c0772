//! [`DynamoSourceStore`]: the sources of a knowledge base and the per-page state of each, in
//! one DynamoDB table shared by every Lambda of a sync.

use std::fmt;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{
    AttributeValue, DeleteRequest, PutRequest, ReturnValue, WriteRequest,
};
use aws_sdk_dynamodb::Client;
use crawl_core::{
    Capabilities, Error, PageBatch, PageState, Result, SourceId, SourceRecord, SourceStore,
};
use futures::{StreamExt, TryStreamExt};
use url::Url;

use super::builder::{from_env, DynamoBuilder, Parts};
use super::dedup::BATCH;
use super::table::{self, get_s, s, Item, TableSpec};
use crate::error::AwsError;

const PK: &str = "pk";
const SK: &str = "sk";
const DATA: &str = "data";
const TENANT: &str = "tenant";
const SRC: &str = "src";
/// Sort key of a source's own record.
const RECORD: &str = "SOURCE";
/// Sort-key prefix of a source's pages (followed by [`PageState::url_key`]).
const PAGE: &str = "PAGE#";
/// The sparse index of source records by tenant.
pub const TENANT_INDEX: &str = "tenant-index";
/// Deletes in flight for one `remove_pages`.
const REMOVE_CONCURRENCY: usize = 16;

/// A [`SourceStore`] in DynamoDB.
///
/// Table layout: partition key `pk` = source id; sort key `sk` = `SOURCE` for the source's
/// record (which also carries `tenant` and `src`, the keys of index [`TENANT_INDEX`]) and
/// `PAGE#{url key}` for each page; the record or page itself is JSON in `data`. A source's
/// pages are one partition, read in sort-key order.
#[derive(Debug, Clone)]
pub struct DynamoSourceStore {
    client: Client,
    table: String,
    name: String,
}

impl fmt::Display for DynamoSourceStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl DynamoBuilder<DynamoSourceStore> {
    /// Validates the settings and creates the client (no request is sent).
    pub async fn build(self) -> Result<DynamoSourceStore> {
        let p: Parts = self.parts("DynamoSourceStore").await?;
        Ok(DynamoSourceStore {
            client: p.client,
            table: p.table,
            name: p.name,
        })
    }
}

fn json_err(e: serde_json::Error) -> AwsError {
    AwsError::Malformed {
        what: "source item".into(),
        detail: e.to_string(),
    }
}

impl DynamoSourceStore {
    /// A builder.
    pub fn builder() -> DynamoBuilder<DynamoSourceStore> {
        DynamoBuilder::default()
    }

    /// A store configured from the environment: table `KB_CRAWL_SOURCES_TABLE` (required),
    /// `KB_CRAWL_AWS_ENDPOINT` for a local stand-in.
    pub async fn from_env() -> Result<DynamoSourceStore> {
        from_env::<DynamoSourceStore>("KB_CRAWL_SOURCES_TABLE")
            .build()
            .await
    }

    /// The table name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// Creates the table (`pk`, `sk`, on-demand, index [`TENANT_INDEX`]) unless it exists.
    pub async fn create_table_if_missing(&self) -> Result<()> {
        let spec = TableSpec {
            pk: PK,
            sk: Some(SK),
            ttl_attribute: None,
            gsi: Some((TENANT_INDEX, TENANT, SRC)),
        };
        table::create_if_missing(&self.client, &self.table, &spec)
            .await
            .map_err(|e| e.into_core(self))
    }

    fn core(&self, e: AwsError) -> Error {
        e.into_core(self)
    }

    fn decode<T: serde::de::DeserializeOwned>(&self, item: &Item) -> Result<T> {
        let data = get_s(item, DATA).ok_or_else(|| {
            self.core(AwsError::Malformed {
                what: "source item".into(),
                detail: format!("no '{DATA}' attribute"),
            })
        })?;
        serde_json::from_str(data).map_err(|e| self.core(json_err(e)))
    }

    async fn get_item(&self, pk: &str, sk: &str) -> Result<Option<Item>> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .key(PK, s(pk))
            .key(SK, s(sk))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| self.core(AwsError::sdk("GetItem", e)))?;
        Ok(out.item)
    }

    /// One Query page of the source's items with sort keys starting with `prefix`, after
    /// `start` (exclusive sort key), at most `limit`.
    async fn query(
        &self,
        id: &SourceId,
        prefix: &str,
        start: Option<String>,
        limit: i32,
    ) -> Result<(Vec<Item>, Option<String>)> {
        let mut req = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression("#pk = :pk AND begins_with(#sk, :prefix)")
            .expression_attribute_names("#pk", PK)
            .expression_attribute_names("#sk", SK)
            .expression_attribute_values(":pk", s(id.as_str()))
            .expression_attribute_values(":prefix", s(prefix))
            .consistent_read(true)
            .limit(limit);
        if let Some(sk) = start {
            req = req
                .exclusive_start_key(PK, s(id.as_str()))
                .exclusive_start_key(SK, s(sk));
        }
        let out = req
            .send()
            .await
            .map_err(|e| self.core(AwsError::sdk("Query", e)))?;
        let last = out
            .last_evaluated_key()
            .and_then(|k| k.get(SK))
            .and_then(|v| v.as_s().ok())
            .cloned();
        Ok((out.items.unwrap_or_default(), last))
    }

    fn put_request(&self, item: Item) -> Result<WriteRequest> {
        let put = PutRequest::builder()
            .set_item(Some(item))
            .build()
            .map_err(|e| {
                self.core(AwsError::Malformed {
                    what: "PutRequest".into(),
                    detail: e.to_string(),
                })
            })?;
        Ok(WriteRequest::builder().put_request(put).build())
    }

    fn delete_request(&self, pk: &str, sk: String) -> Result<WriteRequest> {
        let del = DeleteRequest::builder()
            .key(PK, s(pk))
            .key(SK, s(sk))
            .build()
            .map_err(|e| {
                self.core(AwsError::Malformed {
                    what: "DeleteRequest".into(),
                    detail: e.to_string(),
                })
            })?;
        Ok(WriteRequest::builder().delete_request(del).build())
    }
}

#[async_trait]
impl SourceStore for DynamoSourceStore {
    async fn put_source(&self, source: &SourceRecord) -> Result<()> {
        let data = serde_json::to_string(source).map_err(|e| self.core(json_err(e)))?;
        self.client
            .put_item()
            .table_name(&self.table)
            .item(PK, s(source.id.as_str()))
            .item(SK, s(RECORD))
            .item(TENANT, s(source.tenant.clone()))
            .item(SRC, s(source.id.as_str()))
            .item(DATA, s(data))
            .send()
            .await
            .map_err(|e| self.core(AwsError::sdk("PutItem", e)))?;
        Ok(())
    }

    async fn get_source(&self, id: &SourceId) -> Result<Option<SourceRecord>> {
        match self.get_item(id.as_str(), RECORD).await? {
            Some(item) => self.decode(&item).map(Some),
            None => Ok(None),
        }
    }

    async fn list_sources(&self, tenant: &str) -> Result<Vec<SourceRecord>> {
        let items: Vec<Item> = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(TENANT_INDEX)
            .key_condition_expression("#t = :t")
            .expression_attribute_names("#t", TENANT)
            .expression_attribute_values(":t", s(tenant))
            .into_paginator()
            .items()
            .send()
            .try_collect()
            .await
            .map_err(|e| self.core(AwsError::sdk("Query", e)))?;
        let mut out = items
            .iter()
            .map(|i| self.decode::<SourceRecord>(i))
            .collect::<Result<Vec<_>>>()?;
        out.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(out)
    }

    async fn delete_source(&self, id: &SourceId) -> Result<usize> {
        let mut pages = 0;
        let mut start = None;
        loop {
            let (items, last) = self.query(id, PAGE, start, 250).await?;
            let keys: Vec<String> = items
                .iter()
                .filter_map(|i| get_s(i, SK).map(str::to_owned))
                .collect();
            pages += keys.len();
            for chunk in keys.chunks(BATCH) {
                let reqs = chunk
                    .iter()
                    .map(|sk| self.delete_request(id.as_str(), sk.clone()))
                    .collect::<Result<Vec<_>>>()?;
                table::write_batch(&self.client, &self.table, &self.name, reqs).await?;
            }
            match last {
                Some(l) => start = Some(l),
                None => break,
            }
        }
        self.client
            .delete_item()
            .table_name(&self.table)
            .key(PK, s(id.as_str()))
            .key(SK, s(RECORD))
            .send()
            .await
            .map_err(|e| self.core(AwsError::sdk("DeleteItem", e)))?;
        Ok(pages)
    }

    async fn get_page(&self, id: &SourceId, url: &Url) -> Result<Option<PageState>> {
        let sk = format!("{PAGE}{}", PageState::url_key(url));
        match self.get_item(id.as_str(), &sk).await? {
            Some(item) => self.decode(&item).map(Some),
            None => Ok(None),
        }
    }

    async fn put_pages(&self, id: &SourceId, pages: &[PageState]) -> Result<()> {
        for chunk in pages.chunks(BATCH) {
            let mut reqs = Vec::with_capacity(chunk.len());
            for p in chunk {
                let data = serde_json::to_string(p).map_err(|e| self.core(json_err(e)))?;
                let mut item = Item::new();
                item.insert(PK.into(), s(id.as_str()));
                item.insert(
                    SK.into(),
                    s(format!("{PAGE}{}", PageState::url_key(&p.url))),
                );
                item.insert(DATA.into(), AttributeValue::S(data));
                reqs.push(self.put_request(item)?);
            }
            table::write_batch(&self.client, &self.table, &self.name, reqs).await?;
        }
        Ok(())
    }

    async fn remove_pages(&self, id: &SourceId, urls: &[Url]) -> Result<usize> {
        let keys: Vec<String> = urls
            .iter()
            .map(|u| format!("{PAGE}{}", PageState::url_key(u)))
            .collect();
        let removed: Vec<bool> = futures::stream::iter(keys.into_iter().map(|sk| async move {
            let out = self
                .client
                .delete_item()
                .table_name(&self.table)
                .key(PK, s(id.as_str()))
                .key(SK, s(sk))
                .return_values(ReturnValue::AllOld)
                .send()
                .await
                .map_err(|e| self.core(AwsError::sdk("DeleteItem", e)))?;
            Ok::<bool, Error>(out.attributes.is_some_and(|a| !a.is_empty()))
        }))
        .buffer_unordered(REMOVE_CONCURRENCY)
        .try_collect()
        .await?;
        Ok(removed.into_iter().filter(|r| *r).count())
    }

    async fn list_pages(
        &self,
        id: &SourceId,
        after: Option<&str>,
        limit: usize,
    ) -> Result<PageBatch> {
        let limit = limit.clamp(1, 1000);
        let mut start = after.map(|a| format!("{PAGE}{a}"));
        let mut pages: Vec<PageState> = Vec::with_capacity(limit);
        // One more than asked, to tell whether more follow (a Query page can end early at
        // 1 MB, so keep asking until that many arrived or the partition ended).
        let mut more = false;
        loop {
            let want = i32::try_from(limit + 1 - pages.len()).unwrap_or(i32::MAX);
            let (items, last) = self.query(id, PAGE, start.clone(), want).await?;
            for item in &items {
                if pages.len() == limit {
                    more = true;
                    break;
                }
                pages.push(self.decode(item)?);
            }
            if more || last.is_none() {
                break;
            }
            start = last;
        }
        Ok(PageBatch::ending(pages, more))
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::SHARED
    }
}

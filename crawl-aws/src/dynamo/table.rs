//! Attribute helpers and table creation shared by the DynamoDB backends.

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, GlobalSecondaryIndex, KeySchemaElement,
    KeyType, Projection, ProjectionType, ScalarAttributeType, TableStatus, TimeToLiveSpecification,
};
use aws_sdk_dynamodb::Client;

use crate::error::AwsError;

/// An item as the SDK returns it.
pub(super) type Item = HashMap<String, AttributeValue>;

/// A string attribute value.
pub(super) fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

/// A number attribute value.
pub(super) fn n(v: impl ToString) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// A string attribute, if present.
pub(super) fn get_s<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    item.get(name)
        .and_then(|v| v.as_s().ok())
        .map(String::as_str)
}

/// A number attribute as `u64`/`i64`, if present and well formed.
pub(super) fn get_n<T: std::str::FromStr>(item: &Item, name: &str) -> Option<T> {
    item.get(name)
        .and_then(|v| v.as_n().ok())
        .and_then(|n| n.parse().ok())
}

/// A map of counters (`{reason: n}`), empty when absent.
pub(super) fn get_counts(item: &Item, name: &str) -> std::collections::BTreeMap<String, u64> {
    item.get(name)
        .and_then(|v| v.as_m().ok())
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_n().ok()?.parse().ok()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// Table layout a backend needs.
pub(super) struct TableSpec<'a> {
    /// Partition key name (string).
    pub(super) pk: &'a str,
    /// Sort key name (string), if any.
    pub(super) sk: Option<&'a str>,
    /// TTL attribute, if any.
    pub(super) ttl_attribute: Option<&'a str>,
    /// A global secondary index: name, partition key, sort key (all strings).
    pub(super) gsi: Option<(&'a str, &'a str, &'a str)>,
}

fn build_err(e: aws_sdk_dynamodb::error::BuildError) -> AwsError {
    AwsError::Malformed {
        what: "CreateTable request".into(),
        detail: e.to_string(),
    }
}

fn key(name: &str, kind: KeyType) -> Result<KeySchemaElement, AwsError> {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(kind)
        .build()
        .map_err(build_err)
}

fn string_attr(name: &str) -> Result<AttributeDefinition, AwsError> {
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(ScalarAttributeType::S)
        .build()
        .map_err(build_err)
}

/// Creates the table (on-demand billing) unless it exists, waits until it is active, and
/// enables TTL on the TTL attribute.
pub(super) async fn create_if_missing(
    client: &Client,
    table: &str,
    spec: &TableSpec<'_>,
) -> Result<(), AwsError> {
    let mut attrs = vec![string_attr(spec.pk)?];
    let mut schema = vec![key(spec.pk, KeyType::Hash)?];
    if let Some(sk) = spec.sk {
        attrs.push(string_attr(sk)?);
        schema.push(key(sk, KeyType::Range)?);
    }
    let mut req = client
        .create_table()
        .table_name(table)
        .billing_mode(BillingMode::PayPerRequest)
        .set_key_schema(Some(schema));
    if let Some((name, hash, range)) = spec.gsi {
        attrs.push(string_attr(hash)?);
        attrs.push(string_attr(range)?);
        req = req.global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name(name)
                .key_schema(key(hash, KeyType::Hash)?)
                .key_schema(key(range, KeyType::Range)?)
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .build()
                .map_err(build_err)?,
        );
    }
    let created = match req.set_attribute_definitions(Some(attrs)).send().await {
        Ok(_) => true,
        Err(e) => {
            let e = AwsError::sdk("CreateTable", e);
            if e.code() != Some("ResourceInUseException") {
                return Err(e);
            }
            false
        }
    };
    for _ in 0..240 {
        let d = client
            .describe_table()
            .table_name(table)
            .send()
            .await
            .map_err(|e| AwsError::sdk("DescribeTable", e))?;
        if d.table().and_then(|t| t.table_status()) == Some(&TableStatus::Active) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    if let (true, Some(attr)) = (created, spec.ttl_attribute) {
        let ttl = TimeToLiveSpecification::builder()
            .enabled(true)
            .attribute_name(attr)
            .build()
            .map_err(build_err)?;
        client
            .update_time_to_live()
            .table_name(table)
            .time_to_live_specification(ttl)
            .send()
            .await
            .map_err(|e| AwsError::sdk("UpdateTimeToLive", e))?;
    }
    Ok(())
}

/// Sends up to 25 write requests in one BatchWriteItem on `table`, retrying unprocessed items
/// with backoff; `name` is the backend named in errors.
pub(super) async fn write_batch(
    client: &Client,
    table: &str,
    name: &str,
    mut requests: Vec<aws_sdk_dynamodb::types::WriteRequest>,
) -> crawl_core::Result<()> {
    for round in 0..super::dedup::UNPROCESSED_ROUNDS {
        if requests.is_empty() {
            return Ok(());
        }
        if round > 0 {
            tokio::time::sleep(Duration::from_millis(25 << round.min(6))).await;
        }
        let out = client
            .batch_write_item()
            .request_items(table, requests)
            .send()
            .await
            .map_err(|e| AwsError::sdk("BatchWriteItem", e).into_core(&name))?;
        requests = out
            .unprocessed_items()
            .and_then(|m| m.get(table))
            .cloned()
            .unwrap_or_default();
    }
    if requests.is_empty() {
        Ok(())
    } else {
        Err(crawl_core::Error::new(
            crawl_core::ErrorKind::Storage,
            format!("BatchWriteItem: {} writes left unprocessed", requests.len()),
        )
        .with_temporary(true)
        .with_backend(name.to_string()))
    }
}

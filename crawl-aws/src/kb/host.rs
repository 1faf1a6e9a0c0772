//! What an operator (or a test) asks of the host's side: its resources created on a local
//! stand-in, and an assistant's documents as the host's table lists them.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ScalarAttributeType,
};
use aws_sdk_s3vectors::types::{DataType, DistanceMetric};
use crawl_core::{Error, ErrorKind, Result};

use super::AgentCoreIngestor;
use crate::error::AwsError;

/// The host's embedding size (Titan text embeddings v2).
pub const HOST_DIMENSION: i32 = 1024;

/// One document row of an assistant, as the host's table holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostDocument {
    /// `documentId` (`DOC-` and 12 hex digits).
    pub document_id: String,
    /// `sourceFileId`: the page's canonical URL, for documents from a crawler.
    pub url: Option<String>,
    /// `status`: `uploading`, `chunking`, `embedding`, `complete`, `failed` or `deleting`.
    pub status: String,
    /// `s3Key`.
    pub s3_key: String,
    /// `chunkCount`, once the host set it.
    pub chunk_count: Option<u64>,
    /// `sourceAdapterKey` (`kb-crawl` for ours).
    pub adapter: Option<String>,
}

/// Error codes that mean "it exists already".
const EXISTS: &[&str] = &[
    "ResourceInUseException",
    "BucketAlreadyOwnedByYou",
    "BucketAlreadyExists",
    "ConflictException",
];

impl AgentCoreIngestor {
    /// Creates the host's assistants table (keys `PK`, `SK`), documents bucket, vector bucket
    /// and index (1,024 dimensions, cosine) when missing: for local stand-ins such as moto.
    /// A real deployment has them from the host's stack.
    pub async fn create_host_if_missing(&self) -> Result<()> {
        let i = &self.inner;
        let key = |name: &str, t: KeyType| {
            KeySchemaElement::builder()
                .attribute_name(name)
                .key_type(t)
                .build()
        };
        let attr = |name: &str| {
            AttributeDefinition::builder()
                .attribute_name(name)
                .attribute_type(ScalarAttributeType::S)
                .build()
        };
        let build =
            |e: aws_sdk_dynamodb::error::BuildError| Error::new(ErrorKind::Internal, e.to_string());
        let table = i
            .ddb
            .create_table()
            .table_name(&i.table)
            .key_schema(key("PK", KeyType::Hash).map_err(build)?)
            .key_schema(key("SK", KeyType::Range).map_err(build)?)
            .attribute_definitions(attr("PK").map_err(build)?)
            .attribute_definitions(attr("SK").map_err(build)?)
            .billing_mode(BillingMode::PayPerRequest)
            .send()
            .await;
        self.tolerate_exists(
            table
                .map(|_| ())
                .map_err(|e| AwsError::sdk("CreateTable", e)),
        )?;
        let bucket = i.s3.create_bucket().bucket(&i.bucket).send().await;
        self.tolerate_exists(
            bucket
                .map(|_| ())
                .map_err(|e| AwsError::sdk("CreateBucket", e)),
        )?;
        let vb = i
            .vectors
            .create_vector_bucket()
            .vector_bucket_name(&i.vector_bucket)
            .send()
            .await;
        self.tolerate_exists(
            vb.map(|_| ())
                .map_err(|e| AwsError::sdk("CreateVectorBucket", e)),
        )?;
        let index = i
            .vectors
            .create_index()
            .vector_bucket_name(&i.vector_bucket)
            .index_name(&i.vector_index)
            .data_type(DataType::Float32)
            .dimension(HOST_DIMENSION)
            .distance_metric(DistanceMetric::Cosine)
            .send()
            .await;
        self.tolerate_exists(
            index
                .map(|_| ())
                .map_err(|e| AwsError::sdk("CreateIndex", e)),
        )
    }

    fn tolerate_exists(&self, r: std::result::Result<(), AwsError>) -> Result<()> {
        match r {
            Err(e) if !e.code().is_some_and(|c| EXISTS.contains(&c)) => Err(e.into_core(self)),
            _ => Ok(()),
        }
    }

    /// The document rows of `assistant`, ours and the host's own uploads alike.
    pub async fn documents(&self, assistant: &str) -> Result<Vec<HostDocument>> {
        super::contract::check_assistant(assistant)
            .map_err(|m| AwsError::Config(m).into_core(self))?;
        let s = |v: &str| AttributeValue::S(v.to_owned());
        let mut out = Vec::new();
        let mut start = None;
        loop {
            let page = self
                .inner
                .ddb
                .query()
                .table_name(&self.inner.table)
                .key_condition_expression("PK = :pk AND begins_with(SK, :doc)")
                .expression_attribute_values(":pk", s(&format!("AST#{assistant}")))
                .expression_attribute_values(":doc", s("DOC#"))
                .consistent_read(true)
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| AwsError::sdk("Query", e).into_core(self))?;
            for item in page.items() {
                let text = |k: &str| match item.get(k) {
                    Some(AttributeValue::S(v)) => Some(v.clone()),
                    _ => None,
                };
                out.push(HostDocument {
                    document_id: text("documentId").unwrap_or_default(),
                    url: text("sourceFileId"),
                    status: text("status").unwrap_or_default(),
                    s3_key: text("s3Key").unwrap_or_default(),
                    chunk_count: match item.get("chunkCount") {
                        Some(AttributeValue::N(n)) => n.parse().ok(),
                        _ => None,
                    },
                    adapter: text("sourceAdapterKey"),
                });
            }
            match page.last_evaluated_key {
                Some(k) if !k.is_empty() => start = Some(k),
                _ => break,
            }
        }
        Ok(out)
    }
}

//! [`AgentCoreIngestor`]: every crawled page an ordinary document of an assistant of the
//! host (agentcore-public-stack), exactly as the host's own uploads are.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_s3::primitives::ByteStream;
use crawl_core::linked::{self, LinkedType};
use crawl_core::{
    DiffSide, DynSink, Error, ErrorKind, Ingestor, JobRecord, Result, RunDiff, StoredDoc,
};
use futures::{stream, StreamExt};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;
use tracing::{info, warn};

use super::contract::{
    check_assistant, check_bucket, check_table, document_id, document_key, sanitize_filename,
    MAX_DOCUMENT_BYTES,
};
use super::{path_style, sdk_config, KbReport};
use crate::config::Connection;
use crate::error::AwsError;

/// The host's SSM parameter holding the documents bucket's name: `/{prefix}/` + this.
pub const SSM_DOCUMENTS_BUCKET: &str = "rag/documents-bucket-name";
/// The host's SSM parameter holding the assistants table's name: `/{prefix}/` + this.
pub const SSM_ASSISTANTS_TABLE: &str = "rag/assistants-table-name";

/// `sourceConnectorId` of every row: the host's own web crawler's.
const CONNECTOR: &str = "web";
/// `sourceAdapterKey` of every row: this crawler.
const ADAPTER: &str = "kb-crawl";
/// Our own attribute on a row: the job whose prefix holds the page (the source's first run),
/// so deleting that job removes exactly its documents.
const JOB_ATTR: &str = "kbCrawlJobId";
/// S3 user metadata on each object: the content hash it was written for, so a re-delivered
/// diff can tell an object it already wrote from an older version.
const HASH_META: &str = "content-hash";
/// S3 Vectors deletes at most this many keys per call.
const VECTOR_BATCH: usize = 500;
/// How long a `deleting` row may linger (its TTL) if a removal is cut short.
const DELETING_TTL_SECS: i64 = 3600;
/// Pages delivered at once.
const CONCURRENCY: usize = 8;

/// Configures an [`AgentCoreIngestor`]; `build` validates and connects.
#[derive(Debug, Clone, Default)]
pub struct AgentCoreIngestorBuilder {
    sink: Option<DynSink>,
    table: Option<String>,
    bucket: Option<String>,
    ssm_prefix: Option<String>,
    vector_bucket: Option<String>,
    vector_index: Option<String>,
    assistant: Option<String>,
    imported_by: Option<String>,
    conn: Connection,
}

impl AgentCoreIngestorBuilder {
    /// The crawler's sink, where the documents are read back from (required).
    pub fn sink(mut self, sink: DynSink) -> Self {
        self.sink = Some(sink);
        self
    }

    /// The host's assistants table (`{prefix}-rag-assistants`).
    pub fn assistants_table(mut self, name: impl Into<String>) -> Self {
        self.table = Some(name.into());
        self
    }

    /// The host's documents bucket (`{prefix}-rag-documents-{account}`).
    pub fn documents_bucket(mut self, name: impl Into<String>) -> Self {
        self.bucket = Some(name.into());
        self
    }

    /// Reads the table and bucket names not given from the host's SSM parameters
    /// `/{prefix}/rag/assistants-table-name` and `/{prefix}/rag/documents-bucket-name`.
    pub fn ssm_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.ssm_prefix = Some(prefix.into());
        self
    }

    /// The S3 Vectors bucket and index holding the host's vectors (required).
    pub fn vector_index(mut self, bucket: impl Into<String>, index: impl Into<String>) -> Self {
        self.vector_bucket = Some(bucket.into());
        self.vector_index = Some(index.into());
        self
    }

    /// The assistant whose knowledge base receives the pages; otherwise each job's
    /// `assistant_id`.
    pub fn assistant(mut self, id: impl Into<String>) -> Self {
        self.assistant = Some(id.into());
        self
    }

    /// The user recorded as `importedByUserId`, when the caller is known.
    pub fn imported_by(mut self, user: impl Into<String>) -> Self {
        self.imported_by = Some(user.into());
        self
    }

    /// Endpoint override for every service (a local stand-in such as moto).
    pub fn endpoint_url(mut self, url: impl Into<String>) -> Self {
        self.conn.endpoint_url = Some(url.into());
        self
    }

    /// Region (otherwise the SDK's provider chain decides).
    pub fn region(mut self, region: impl Into<String>) -> Self {
        self.conn.region = Some(region.into());
        self
    }

    /// Fixed credentials, for local stand-ins; real deployments use the provider chain.
    pub fn static_credentials(
        mut self,
        access_key_id: impl Into<String>,
        secret_access_key: impl Into<String>,
    ) -> Self {
        self.conn.static_credentials = Some((access_key_id.into(), secret_access_key.into()));
        self
    }

    /// Validates the settings, reads the SSM parameters when asked to, and creates the
    /// clients. Errors name the setting that is wrong.
    pub async fn build(self) -> Result<AgentCoreIngestor> {
        let fail = |m: String| AwsError::Config(m).into_core(&"AgentCoreIngestor");
        let sink = self
            .sink
            .ok_or_else(|| fail("sink: required (the crawler's sink)".into()))?;
        if let Some(a) = &self.assistant {
            check_assistant(a).map_err(fail)?;
        }
        let vector_bucket = self.vector_bucket.unwrap_or_default();
        let vector_index = self.vector_index.unwrap_or_default();
        check_bucket("vector bucket", &vector_bucket).map_err(fail)?;
        check_bucket("vector index", &vector_index).map_err(fail)?;
        let sdk = sdk_config(&self.conn).await;
        let (mut table, mut bucket) = (self.table, self.bucket);
        if table.is_none() || bucket.is_none() {
            let Some(prefix) = self.ssm_prefix.as_deref().map(|p| p.trim_matches('/')) else {
                let missing = if table.is_none() {
                    "assistants table"
                } else {
                    "documents bucket"
                };
                return Err(fail(format!(
                    "{missing}: required (or an SSM prefix to read it from)"
                )));
            };
            if prefix.is_empty() || prefix.contains(char::is_whitespace) {
                return Err(fail(format!("ssm prefix: '{prefix}' is not a prefix")));
            }
            let ssm = aws_sdk_ssm::Client::new(&sdk);
            if table.is_none() {
                table = Some(parameter(&ssm, &format!("/{prefix}/{SSM_ASSISTANTS_TABLE}")).await?);
            }
            if bucket.is_none() {
                bucket = Some(parameter(&ssm, &format!("/{prefix}/{SSM_DOCUMENTS_BUCKET}")).await?);
            }
        }
        let (table, bucket) = (table.unwrap_or_default(), bucket.unwrap_or_default());
        check_table("assistants table", &table).map_err(fail)?;
        check_bucket("documents bucket", &bucket).map_err(fail)?;
        let s3 = aws_sdk_s3::config::Builder::from(&sdk).force_path_style(path_style(&self.conn));
        let name = format!(
            "AgentCoreIngestor({table}, {bucket}, {vector_bucket}/{vector_index}{})",
            self.assistant
                .as_deref()
                .map(|a| format!(", assistant {a}"))
                .unwrap_or_default()
        );
        Ok(AgentCoreIngestor {
            inner: Arc::new(Inner {
                sink,
                ddb: aws_sdk_dynamodb::Client::new(&sdk),
                s3: aws_sdk_s3::Client::from_conf(s3.build()),
                vectors: aws_sdk_s3vectors::Client::new(&sdk),
                table,
                bucket,
                vector_bucket,
                vector_index,
                assistant: self.assistant,
                imported_by: self.imported_by,
                name,
                last: Mutex::new(KbReport::default()),
            }),
        })
    }
}

/// One SSM parameter's value.
async fn parameter(ssm: &aws_sdk_ssm::Client, name: &str) -> Result<String> {
    let out = ssm
        .get_parameter()
        .name(name)
        .send()
        .await
        .map_err(|e| AwsError::sdk("GetParameter", e).into_core(&format!("SSM({name})")))?;
    out.parameter()
        .and_then(|p| p.value())
        .map(str::to_owned)
        .ok_or_else(|| Error::invalid(format!("SSM parameter {name}: no value")))
}

/// Makes every crawled page an ordinary document of an assistant of the host
/// (agentcore-public-stack), as the host's own uploads are, and keeps them current across
/// runs of a source.
///
/// - **Added page**: the `DOC#` row first (`status="uploading"`, sizes, times, provenance
///   `sourceConnectorId="web"`, `sourceAdapterKey="kb-crawl"`, `sourceFileId` = canonical
///   URL, `sourceEtag` = content hash, `importedByUserId` when configured), then one object
///   at `assistants/{assistant}/documents/{document}/{filename}.md` (`text/markdown`). The
///   host's pipeline does the rest; the status is never written after that.
/// - **Linked documents** (a crawl with `linkedDocuments`): a PDF or DOCX the crawl passed
///   through goes up as itself, `{filename}.pdf` / `.docx` with its own `ContentType` and
///   row `contentType`, under the same rules (see [`Ingestor::accepted_types`]).
/// - **Changed page**: the same document, re-ingested in place. The row goes back to
///   `uploading` with the new hash and size first, so retrieval (which keeps only chunks of
///   `complete` rows) stops serving the old text at once; then the old vectors
///   `{document}#0..chunkCount-1` are deleted; then the object is overwritten, which
///   re-triggers the host's ingestion. We chose this over replacing the document (new id,
///   old one deleted) because the document id is derived from the assistant and the URL:
///   a page keeps one identity for its life, a re-delivered diff finds its own row
///   instead of adding a second, and no lookup by `sourceFileId` (a scan of the assistant's
///   rows) is needed. The price is that a changed page is missing from retrieval while the
///   host re-ingests it (minutes), never served stale.
/// - **Removed page**: the host's deletion order: row to `deleting` (with a TTL), vectors
///   deleted from the index, object deleted, row deleted.
/// - A page over 20 MB ([`MAX_DOCUMENT_BYTES`]) is skipped with a reason in the
///   [`KbReport`] and a warning; an earlier version of it is removed, so the assistant never
///   serves text the site no longer has.
/// - Nothing else is ever written under `assistants/` (the host takes every object there as
///   a document). Every write is idempotent: a re-delivered diff finds rows whose
///   `sourceEtag` and objects whose `content-hash` metadata already match, and writes
///   nothing.
#[derive(Debug, Clone)]
pub struct AgentCoreIngestor {
    pub(super) inner: Arc<Inner>,
}

#[derive(Debug)]
pub(super) struct Inner {
    pub(super) sink: DynSink,
    pub(super) ddb: aws_sdk_dynamodb::Client,
    pub(super) s3: aws_sdk_s3::Client,
    pub(super) vectors: aws_sdk_s3vectors::Client,
    pub(super) table: String,
    pub(super) bucket: String,
    pub(super) vector_bucket: String,
    pub(super) vector_index: String,
    pub(super) assistant: Option<String>,
    pub(super) imported_by: Option<String>,
    pub(super) name: String,
    pub(super) last: Mutex<KbReport>,
}

impl fmt::Display for AgentCoreIngestor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.name)
    }
}

/// The fields of a document row this ingestor reads back.
#[derive(Debug)]
pub(super) struct Row {
    etag: Option<String>,
    s3_key: Option<String>,
    chunk_count: u64,
    job: Option<String>,
    document: String,
}

/// How one upsert ended.
enum Upsert {
    Written,
    Current,
    Skipped(String),
}

impl AgentCoreIngestor {
    /// A builder.
    pub fn builder() -> AgentCoreIngestorBuilder {
        AgentCoreIngestorBuilder::default()
    }

    /// The report of the latest delivery.
    pub fn last_report(&self) -> KbReport {
        self.inner
            .last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Delivers a run's diff and says what it did (what [`Ingestor::on_completed`] does).
    pub async fn sync(&self, job: &JobRecord, diff: &RunDiff<'_>) -> Result<KbReport> {
        let assistant = self.assistant_of(job)?;
        let home = job
            .request
            .sync
            .as_ref()
            .map_or(&job.id, |s| &s.documents)
            .to_string();
        let (assistant, home) = (assistant.as_str(), home.as_str());
        let mut report = KbReport::default();
        let mut first_error = None;
        // A page of the diff at a time, each page's documents CONCURRENCY at a time.
        let mut pages = diff.pages(DiffSide::Upserts);
        while let Some(docs) = pages.next_page().await? {
            let writes: Vec<_> = docs
                .iter()
                .map(|d| async move { (d, self.upsert(assistant, home, d).await) })
                .collect();
            let upserts: Vec<_> = stream::iter(writes)
                .buffer_unordered(CONCURRENCY)
                .collect()
                .await;
            for (doc, r) in upserts {
                match r {
                    Ok(Upsert::Written) => report.written += 1,
                    Ok(Upsert::Current) => report.already_current += 1,
                    Ok(Upsert::Skipped(reason)) => {
                        warn!(url = %doc.url, %reason, "{self}: page skipped");
                        report.skipped.push((doc.url.to_string(), reason));
                    }
                    Err(e) => {
                        warn!(url = %doc.url, error = %e, "{self}: delivering the page failed");
                        first_error.get_or_insert(e);
                    }
                }
            }
        }
        let mut pages = diff.pages(DiffSide::Deletions);
        while let Some(docs) = pages.next_page().await? {
            let removals: Vec<_> = docs
                .iter()
                .map(|d| async move { (d, self.remove_page(assistant, d).await) })
                .collect();
            let deletions: Vec<_> = stream::iter(removals)
                .buffer_unordered(CONCURRENCY)
                .collect()
                .await;
            for (doc, r) in deletions {
                match r {
                    Ok(true) => report.deleted += 1,
                    Ok(false) => {}
                    Err(e) => {
                        warn!(url = %doc.url, error = %e, "{self}: removing the page failed");
                        first_error.get_or_insert(e);
                    }
                }
            }
        }
        *self
            .inner
            .last
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = report.clone();
        info!(
            written = report.written,
            current = report.already_current,
            deleted = report.deleted,
            skipped = report.skipped.len(),
            "{self}: run delivered"
        );
        match first_error {
            Some(e) => Err(e),
            None => Ok(report),
        }
    }

    fn assistant_of(&self, job: &JobRecord) -> Result<String> {
        let a = self
            .inner
            .assistant
            .clone()
            .or_else(|| job.assistant_id.clone())
            .ok_or_else(|| {
                self.config_error(format!(
                    "assistant: job {} has no assistant id and none is configured",
                    job.id
                ))
            })?;
        check_assistant(&a).map_err(|m| self.config_error(m))?;
        Ok(a)
    }

    fn config_error(&self, m: String) -> Error {
        AwsError::Config(m).into_core(self)
    }

    fn sdk_error<E>(
        &self,
        op: &'static str,
        e: aws_sdk_s3::error::SdkError<E, aws_sdk_s3::config::http::HttpResponse>,
    ) -> Error
    where
        E: aws_sdk_s3::error::ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    {
        AwsError::sdk(op, e).into_core(self)
    }

    async fn upsert(&self, assistant: &str, home: &str, doc: &StoredDoc) -> Result<Upsert> {
        let bytes = self.inner.sink.get(&doc.key).await?.ok_or_else(|| {
            Error::new(
                ErrorKind::NotFound,
                format!("document {} is not in {}", doc.key, self.inner.sink),
            )
        })?;
        if bytes.len() > MAX_DOCUMENT_BYTES {
            self.remove_page(assistant, doc).await?;
            return Ok(Upsert::Skipped(format!(
                "too_large: {} bytes, over the host's {MAX_DOCUMENT_BYTES}-byte (20 MB) document limit",
                bytes.len()
            )));
        }
        let document = document_id(assistant, doc.url.as_str());
        let leaf = doc.key.rsplit('/').next().unwrap_or_default();
        // A linked document goes to the host as itself: its own extension and type.
        let (extension, content_type) = match LinkedType::sniff(&bytes) {
            Some(t) => (t.extension(), t.content_type()),
            None => ("md", "text/markdown"),
        };
        let filename = sanitize_filename(leaf, extension);
        let key = document_key(assistant, &document, &filename);
        let now = now();
        match self.row(assistant, &document).await? {
            None => {
                let mut item = HashMap::from([
                    ("PK".to_owned(), s(format!("AST#{assistant}"))),
                    ("SK".to_owned(), s(format!("DOC#{document}"))),
                    ("documentId".to_owned(), s(&document)),
                    ("assistantId".to_owned(), s(assistant)),
                    ("filename".to_owned(), s(&filename)),
                    ("contentType".to_owned(), s(content_type)),
                    ("sizeBytes".to_owned(), n(bytes.len() as u64)),
                    ("s3Key".to_owned(), s(&key)),
                    ("status".to_owned(), s("uploading")),
                    ("createdAt".to_owned(), s(&now)),
                    ("updatedAt".to_owned(), s(&now)),
                    ("sourceConnectorId".to_owned(), s(CONNECTOR)),
                    ("sourceAdapterKey".to_owned(), s(ADAPTER)),
                    ("sourceFileId".to_owned(), s(doc.url.as_str())),
                    ("sourceEtag".to_owned(), s(&doc.content_hash)),
                    (JOB_ATTR.to_owned(), s(home)),
                ]);
                if let Some(u) = &self.inner.imported_by {
                    item.insert("importedByUserId".to_owned(), s(u));
                }
                let put = self
                    .inner
                    .ddb
                    .put_item()
                    .table_name(&self.inner.table)
                    .set_item(Some(item))
                    .condition_expression("attribute_not_exists(PK)")
                    .send()
                    .await;
                if let Err(e) = put {
                    let e = AwsError::sdk("PutItem", e);
                    // A concurrent delivery wrote the row first: the object below is the same.
                    if e.code() != Some("ConditionalCheckFailedException") {
                        return Err(e.into_core(self));
                    }
                }
            }
            Some(row) => {
                if row.etag.as_deref() == Some(doc.content_hash.as_str())
                    && self.object_hash(&key).await?.as_deref() == Some(doc.content_hash.as_str())
                {
                    return Ok(Upsert::Current);
                }
                // Retrieval drops chunks of rows that are not complete: the old text stops
                // being served before its vectors go.
                self.inner
                    .ddb
                    .update_item()
                    .table_name(&self.inner.table)
                    .set_key(Some(row_key(assistant, &document)))
                    .update_expression(
                        "SET #st = :st, sizeBytes = :sz, sourceEtag = :et, updatedAt = :now, \
                         filename = :fn, s3Key = :key, sourceFileId = :url, contentType = :ct \
                         REMOVE errorMessage, #ttl",
                    )
                    .expression_attribute_names("#st", "status")
                    .expression_attribute_names("#ttl", "ttl")
                    .expression_attribute_values(":st", s("uploading"))
                    .expression_attribute_values(":sz", n(bytes.len() as u64))
                    .expression_attribute_values(":et", s(&doc.content_hash))
                    .expression_attribute_values(":now", s(&now))
                    .expression_attribute_values(":fn", s(&filename))
                    .expression_attribute_values(":key", s(&key))
                    .expression_attribute_values(":url", s(doc.url.as_str()))
                    .expression_attribute_values(":ct", s(content_type))
                    .condition_expression("attribute_exists(PK)")
                    .send()
                    .await
                    .map_err(|e| self.sdk_error("UpdateItem", e))?;
                self.delete_vectors(&document, row.chunk_count).await?;
                if let Some(old) = row.s3_key.filter(|k| *k != key) {
                    if owned_key(assistant, &document, &old) {
                        self.delete_object(&old).await?;
                    }
                }
            }
        }
        self.inner
            .s3
            .put_object()
            .bucket(&self.inner.bucket)
            .key(&key)
            .content_type(content_type)
            .metadata(HASH_META, &doc.content_hash)
            .body(ByteStream::from(bytes))
            .send()
            .await
            .map_err(|e| self.sdk_error("PutObject", e))?;
        Ok(Upsert::Written)
    }

    /// Removes the document of a page, if the knowledge base has one.
    async fn remove_page(&self, assistant: &str, doc: &StoredDoc) -> Result<bool> {
        let document = document_id(assistant, doc.url.as_str());
        match self.row(assistant, &document).await? {
            Some(row) => self.remove_row(assistant, row).await.map(|()| true),
            None => Ok(false),
        }
    }

    /// The host's deletion order: row to `deleting`, vectors, object, row.
    async fn remove_row(&self, assistant: &str, row: Row) -> Result<()> {
        let ttl = OffsetDateTime::now_utc().unix_timestamp() + DELETING_TTL_SECS;
        let marked = self
            .inner
            .ddb
            .update_item()
            .table_name(&self.inner.table)
            .set_key(Some(row_key(assistant, &row.document)))
            .update_expression("SET #st = :st, #ttl = :ttl, updatedAt = :now")
            .expression_attribute_names("#st", "status")
            .expression_attribute_names("#ttl", "ttl")
            .expression_attribute_values(":st", s("deleting"))
            .expression_attribute_values(":ttl", n(ttl.max(0) as u64))
            .expression_attribute_values(":now", s(now()))
            .condition_expression("attribute_exists(PK)")
            .send()
            .await;
        if let Err(e) = marked {
            let e = AwsError::sdk("UpdateItem", e);
            if e.code() == Some("ConditionalCheckFailedException") {
                return Ok(()); // Removed meanwhile.
            }
            return Err(e.into_core(self));
        }
        self.delete_vectors(&row.document, row.chunk_count).await?;
        if let Some(key) = row
            .s3_key
            .filter(|k| owned_key(assistant, &row.document, k))
        {
            self.delete_object(&key).await?;
        }
        self.inner
            .ddb
            .delete_item()
            .table_name(&self.inner.table)
            .set_key(Some(row_key(assistant, &row.document)))
            .send()
            .await
            .map_err(|e| self.sdk_error("DeleteItem", e))?;
        Ok(())
    }

    async fn row(&self, assistant: &str, document: &str) -> Result<Option<Row>> {
        let out = self
            .inner
            .ddb
            .get_item()
            .table_name(&self.inner.table)
            .set_key(Some(row_key(assistant, document)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| self.sdk_error("GetItem", e))?;
        Ok(out.item.map(|i| parse_row(&i, document)))
    }

    async fn object_hash(&self, key: &str) -> Result<Option<String>> {
        match self
            .inner
            .s3
            .head_object()
            .bucket(&self.inner.bucket)
            .key(key)
            .send()
            .await
        {
            Ok(out) => Ok(out.metadata().and_then(|m| m.get(HASH_META)).cloned()),
            Err(e) => {
                let e = self.sdk_error("HeadObject", e);
                if e.kind() == ErrorKind::NotFound {
                    Ok(None)
                } else {
                    Err(e)
                }
            }
        }
    }

    async fn delete_object(&self, key: &str) -> Result<()> {
        self.inner
            .s3
            .delete_object()
            .bucket(&self.inner.bucket)
            .key(key)
            .send()
            .await
            .map_err(|e| self.sdk_error("DeleteObject", e))?;
        Ok(())
    }

    /// Deletes vectors `{document}#0..count-1` (deleting a missing key is not an error).
    async fn delete_vectors(&self, document: &str, count: u64) -> Result<()> {
        let keys: Vec<String> = (0..count).map(|i| format!("{document}#{i}")).collect();
        for batch in keys.chunks(VECTOR_BATCH) {
            self.inner
                .vectors
                .delete_vectors()
                .vector_bucket_name(&self.inner.vector_bucket)
                .index_name(&self.inner.vector_index)
                .set_keys(Some(batch.to_vec()))
                .send()
                .await
                .map_err(|e| self.sdk_error("DeleteVectors", e))?;
        }
        Ok(())
    }

    /// The rows this ingestor wrote for the documents of `job`.
    async fn rows_of_job(&self, assistant: &str, job: &str) -> Result<Vec<Row>> {
        let mut rows = Vec::new();
        let mut start = None;
        loop {
            let out = self
                .inner
                .ddb
                .query()
                .table_name(&self.inner.table)
                .key_condition_expression("PK = :pk AND begins_with(SK, :doc)")
                .filter_expression("#job = :job AND sourceAdapterKey = :ad")
                .expression_attribute_names("#job", JOB_ATTR)
                .expression_attribute_values(":pk", s(format!("AST#{assistant}")))
                .expression_attribute_values(":doc", s("DOC#"))
                .expression_attribute_values(":job", s(job))
                .expression_attribute_values(":ad", s(ADAPTER))
                .consistent_read(true)
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| self.sdk_error("Query", e))?;
            for item in out.items() {
                if let Some(AttributeValue::S(sk)) = item.get("SK") {
                    let document = sk.trim_start_matches("DOC#").to_owned();
                    rows.push(parse_row(item, &document));
                }
            }
            match out.last_evaluated_key {
                Some(k) if !k.is_empty() => start = Some(k),
                _ => break,
            }
        }
        Ok(rows)
    }
}

#[async_trait]
impl Ingestor for AgentCoreIngestor {
    async fn on_completed(&self, job: &JobRecord, diff: &RunDiff<'_>) -> Result<()> {
        self.sync(job, diff).await.map(|_| ())
    }

    /// PDF and Word (DOCX): the host's pipeline (Docling) converts them itself.
    fn accepted_types(&self) -> &'static [&'static str] {
        &[linked::PDF, linked::DOCX]
    }

    /// Removes, in the host's deletion order, every document whose pages live under this
    /// job (the source's first run, or a crawl that is not a run of a source). Deleting a
    /// later run of a source removes nothing: its pages belong to the source.
    async fn on_deleted(&self, job: &JobRecord) -> Result<()> {
        let assistant = self.assistant_of(job)?;
        let rows = self.rows_of_job(&assistant, job.id.as_str()).await?;
        for row in rows
            .into_iter()
            .filter(|r| r.job.as_deref() == Some(job.id.as_str()))
        {
            self.remove_row(&assistant, row).await?;
        }
        Ok(())
    }
}

fn parse_row(item: &HashMap<String, AttributeValue>, document: &str) -> Row {
    let text = |k: &str| match item.get(k) {
        Some(AttributeValue::S(v)) => Some(v.clone()),
        _ => None,
    };
    let chunk_count = match item.get("chunkCount") {
        Some(AttributeValue::N(v)) => v.parse().unwrap_or(0),
        _ => 0,
    };
    Row {
        etag: text("sourceEtag"),
        s3_key: text("s3Key"),
        chunk_count,
        job: text(JOB_ATTR),
        document: document.to_owned(),
    }
}

/// Whether `key` is inside the document's own folder (never delete anything else).
fn owned_key(assistant: &str, document: &str, key: &str) -> bool {
    key.strip_prefix(&format!("assistants/{assistant}/documents/{document}/"))
        .is_some_and(|rest| !rest.is_empty() && !rest.contains('/'))
}

fn row_key(assistant: &str, document: &str) -> HashMap<String, AttributeValue> {
    HashMap::from([
        ("PK".to_owned(), s(format!("AST#{assistant}"))),
        ("SK".to_owned(), s(format!("DOC#{document}"))),
    ])
}

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn n(v: u64) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// ISO 8601 UTC ending in `Z`, as the host writes its times.
fn now() -> String {
    OffsetDateTime::now_utc()
        .format(&Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_keys_inside_the_documents_own_folder_are_deleted() {
        assert!(owned_key("a", "DOC-1", "assistants/a/documents/DOC-1/x.md"));
        assert!(!owned_key(
            "a",
            "DOC-1",
            "assistants/a/documents/DOC-2/x.md"
        ));
        assert!(!owned_key("a", "DOC-1", "assistants/a/documents/DOC-1/"));
        assert!(!owned_key(
            "a",
            "DOC-1",
            "assistants/a/documents/DOC-1/../x.md"
        ));
        assert!(!owned_key(
            "a",
            "DOC-1",
            "other/assistants/a/documents/DOC-1/x.md"
        ));
    }

    #[tokio::test]
    async fn build_names_the_missing_or_wrong_setting() {
        let sink: DynSink = Arc::new(crawl_core::memory::MemorySink::new());
        let e = AgentCoreIngestor::builder().build().await.unwrap_err();
        assert!(e.to_string().contains("sink:"), "{e}");
        let e = AgentCoreIngestor::builder()
            .sink(Arc::clone(&sink))
            .vector_index("vb-x", "Bad_Index")
            .build()
            .await
            .unwrap_err();
        assert!(e.to_string().contains("vector index:"), "{e}");
        let e = AgentCoreIngestor::builder()
            .sink(Arc::clone(&sink))
            .vector_index("vb-x", "idx")
            .documents_bucket("docs-bucket")
            .build()
            .await
            .unwrap_err();
        assert!(e.to_string().contains("assistants table:"), "{e}");
        let e = AgentCoreIngestor::builder()
            .sink(sink)
            .assistant("../x")
            .build()
            .await
            .unwrap_err();
        assert!(e.to_string().contains("assistant:"), "{e}");
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
    }
}

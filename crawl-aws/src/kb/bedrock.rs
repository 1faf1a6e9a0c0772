//! [`BedrockKbIngestor`]: an Amazon Bedrock Knowledge Bases S3 data source kept current,
//! and one `StartIngestionJob` per run with changes.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{Delete, ObjectIdentifier};
use crawl_core::linked::{self, LinkedType};
use crawl_core::{
    DiffSide, DynSink, Error, ErrorKind, Ingestor, JobRecord, Result, RunDiff, StoredDoc,
};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use time::format_description::well_known::Rfc3339;
use tracing::info;

use super::contract::{check_bucket, check_kb_id};
use super::{path_style, sdk_config, KbReport};
use crate::config::Connection;
use crate::error::AwsError;

/// The suffix Bedrock reads a document's metadata from: `<key>.metadata.json`.
pub const SIDECAR_SUFFIX: &str = ".metadata.json";
/// Bedrock's limit on one metadata file, in bytes.
pub const MAX_SIDECAR_BYTES: usize = 10 * 1024;
/// Bedrock's limit on one S3 data-source document, in bytes.
pub const MAX_BEDROCK_DOCUMENT_BYTES: usize = 50 * 1024 * 1024;
/// Longest title and URL kept in a sidecar, in bytes: with the other attributes the file
/// stays well under [`MAX_SIDECAR_BYTES`].
const MAX_ATTRIBUTE_BYTES: usize = 2048;

/// Configures a [`BedrockKbIngestor`]; `build` validates and connects.
#[derive(Debug, Clone, Default)]
pub struct BedrockKbIngestorBuilder {
    sink: Option<DynSink>,
    bucket: Option<String>,
    prefix: String,
    kb: Option<String>,
    ds: Option<String>,
    bedrock_endpoint: Option<String>,
    conn: Connection,
}

impl BedrockKbIngestorBuilder {
    /// The crawler's sink, where the documents are read back from (required).
    pub fn sink(mut self, sink: DynSink) -> Self {
        self.sink = Some(sink);
        self
    }

    /// The data source's bucket (required).
    pub fn bucket(mut self, bucket: impl Into<String>) -> Self {
        self.bucket = Some(bucket.into());
        self
    }

    /// The data source's key prefix (the inclusion prefix configured in Bedrock).
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The knowledge base and data source to start ingestion jobs for (required).
    pub fn knowledge_base(mut self, kb: impl Into<String>, ds: impl Into<String>) -> Self {
        self.kb = Some(kb.into());
        self.ds = Some(ds.into());
        self
    }

    /// Endpoint override for every service (a local stand-in such as moto).
    pub fn endpoint_url(mut self, url: impl Into<String>) -> Self {
        self.conn.endpoint_url = Some(url.into());
        self
    }

    /// Endpoint override for Bedrock's agent API alone (a local recorder in tests).
    pub fn bedrock_endpoint_url(mut self, url: impl Into<String>) -> Self {
        self.bedrock_endpoint = Some(url.into());
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

    /// Validates the settings and creates the clients (no request is sent).
    pub async fn build(self) -> Result<BedrockKbIngestor> {
        let fail = |m: String| AwsError::Config(m).into_core(&"BedrockKbIngestor");
        let sink = self
            .sink
            .ok_or_else(|| fail("sink: required (the crawler's sink)".into()))?;
        let bucket = self.bucket.unwrap_or_default();
        check_bucket("bucket", &bucket).map_err(fail)?;
        let prefix = self.prefix.trim_matches('/').to_owned();
        if !prefix.is_empty()
            && prefix
                .split('/')
                .any(|s| s.is_empty() || s == "." || s == ".." || s.chars().any(char::is_control))
        {
            return Err(fail(format!(
                "prefix: '{prefix}' has an empty, '.', '..' or control-character segment"
            )));
        }
        let kb = self.kb.unwrap_or_default();
        let ds = self.ds.unwrap_or_default();
        check_kb_id("kb", &kb).map_err(fail)?;
        check_kb_id("ds", &ds).map_err(fail)?;
        let sdk = sdk_config(&self.conn).await;
        let s3 = aws_sdk_s3::config::Builder::from(&sdk).force_path_style(path_style(&self.conn));
        let mut agent = aws_sdk_bedrockagent::config::Builder::from(&sdk);
        if let Some(e) = &self.bedrock_endpoint {
            agent = agent.endpoint_url(e);
        }
        let name = if prefix.is_empty() {
            format!("BedrockKbIngestor({bucket}, kb {kb}, ds {ds})")
        } else {
            format!("BedrockKbIngestor({bucket}/{prefix}, kb {kb}, ds {ds})")
        };
        Ok(BedrockKbIngestor {
            inner: Arc::new(Inner {
                sink,
                s3: aws_sdk_s3::Client::from_conf(s3.build()),
                agent: aws_sdk_bedrockagent::Client::from_conf(agent.build()),
                bucket,
                prefix,
                kb,
                ds,
                name,
                last: Mutex::new(KbReport::default()),
            }),
        })
    }
}

/// Keeps an Amazon Bedrock Knowledge Bases S3 data source equal to a source's pages.
///
/// Each document lands at `{prefix}/{document key}` (`text/markdown`; a linked PDF or DOCX
/// keeps its own key extension and `ContentType`) with a sidecar
/// `{key}.metadata.json` whose `metadataAttributes` are `url`, `title`, `source_id`,
/// `crawled_at` and `content_hash` (strings; url and title cut to 2,048 bytes, so the file
/// stays under Bedrock's 10 KB). A removed page loses its document and its sidecar. After a
/// delivery that wrote or removed anything, one `StartIngestionJob` for the configured
/// knowledge base and data source, so Bedrock's incremental sync touches only what changed;
/// a run without changes starts none. The job's client token is derived from the run and
/// its diff, so a re-delivered diff does not start a second ingestion job.
#[derive(Debug, Clone)]
pub struct BedrockKbIngestor {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    sink: DynSink,
    s3: aws_sdk_s3::Client,
    agent: aws_sdk_bedrockagent::Client,
    bucket: String,
    prefix: String,
    kb: String,
    ds: String,
    name: String,
    last: Mutex<KbReport>,
}

impl fmt::Display for BedrockKbIngestor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.name)
    }
}

impl BedrockKbIngestor {
    /// A builder.
    pub fn builder() -> BedrockKbIngestorBuilder {
        BedrockKbIngestorBuilder::default()
    }

    /// The report of the latest delivery.
    pub fn last_report(&self) -> KbReport {
        self.inner
            .last
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The object key of a document key of the sink.
    pub fn object_key(&self, doc_key: &str) -> String {
        if self.inner.prefix.is_empty() {
            doc_key.to_owned()
        } else {
            format!("{}/{doc_key}", self.inner.prefix)
        }
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

    /// Delivers a run's diff and says what it did (what [`Ingestor::on_completed`] does).
    pub async fn sync(&self, job: &JobRecord, diff: &RunDiff<'_>) -> Result<KbReport> {
        let mut report = KbReport::default();
        let source = job
            .request
            .sync
            .as_ref()
            .map(|s| s.source.to_string())
            .unwrap_or_default();
        // A page of the diff at a time; the ingestion job's token is hashed on the way.
        let mut token = TokenHash::new(job);
        let mut pages = diff.pages(DiffSide::Upserts);
        while let Some(docs) = pages.next_page().await? {
            for doc in &docs {
                token.add(doc);
                match self.upsert(doc, &source, job).await? {
                    None => report.written += 1,
                    Some(reason) => report.skipped.push((doc.url.to_string(), reason)),
                }
            }
        }
        let mut pages = diff.pages(DiffSide::Deletions);
        while let Some(docs) = pages.next_page().await? {
            for doc in &docs {
                token.add(doc);
                self.delete_keys(std::slice::from_ref(&doc.key)).await?;
                report.deleted += 1;
            }
        }
        if report.written + report.deleted > 0 {
            let token = token.finish();
            report
                .ingestion_jobs
                .push(self.start_ingestion(&token).await?);
        }
        *self
            .inner
            .last
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = report.clone();
        info!(
            written = report.written,
            deleted = report.deleted,
            jobs = report.ingestion_jobs.len(),
            "{self}: run delivered"
        );
        Ok(report)
    }

    /// Writes one document and its sidecar; `Some(reason)` when it is skipped.
    async fn upsert(
        &self,
        doc: &StoredDoc,
        source: &str,
        job: &JobRecord,
    ) -> Result<Option<String>> {
        check_doc_key(&doc.key).map_err(|m| AwsError::Config(m).into_core(self))?;
        let bytes = self.inner.sink.get(&doc.key).await?.ok_or_else(|| {
            Error::new(
                ErrorKind::NotFound,
                format!("document {} is not in {}", doc.key, self.inner.sink),
            )
        })?;
        if bytes.len() > MAX_BEDROCK_DOCUMENT_BYTES {
            self.delete_keys(std::slice::from_ref(&doc.key)).await?;
            return Ok(Some(format!(
                "too_large: {} bytes, over Bedrock's {MAX_BEDROCK_DOCUMENT_BYTES}-byte (50 MB) file limit",
                bytes.len()
            )));
        }
        let crawled_at = job
            .completed_at
            .unwrap_or(job.started_at)
            .format(&Rfc3339)
            .unwrap_or_default();
        let sidecar = sidecar(doc, title_of(&bytes).as_deref(), source, &crawled_at);
        let key = self.object_key(&doc.key);
        // A linked document (its key already ends in .pdf / .docx) keeps its own type.
        let content_type = LinkedType::sniff(&bytes).map_or("text/markdown", |t| t.content_type());
        self.put(&key, content_type, bytes).await?;
        self.put(
            &format!("{key}{SIDECAR_SUFFIX}"),
            "application/json",
            sidecar,
        )
        .await?;
        Ok(None)
    }

    async fn put(&self, key: &str, content_type: &str, body: Vec<u8>) -> Result<()> {
        self.inner
            .s3
            .put_object()
            .bucket(&self.inner.bucket)
            .key(key)
            .content_type(content_type)
            .body(ByteStream::from(body))
            .send()
            .await
            .map_err(|e| self.sdk_error("PutObject", e))?;
        Ok(())
    }

    /// Deletes documents (sink keys) and their sidecars.
    async fn delete_keys(&self, doc_keys: &[String]) -> Result<()> {
        let mut objects = Vec::new();
        for k in doc_keys {
            check_doc_key(k).map_err(|m| AwsError::Config(m).into_core(self))?;
            let key = self.object_key(k);
            for key in [format!("{key}{SIDECAR_SUFFIX}"), key] {
                objects.push(
                    ObjectIdentifier::builder()
                        .key(key)
                        .build()
                        .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?,
                );
            }
        }
        for batch in objects.chunks(1000) {
            let delete = Delete::builder()
                .set_objects(Some(batch.to_vec()))
                .quiet(true)
                .build()
                .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
            self.inner
                .s3
                .delete_objects()
                .bucket(&self.inner.bucket)
                .delete(delete)
                .send()
                .await
                .map_err(|e| self.sdk_error("DeleteObjects", e))?;
        }
        Ok(())
    }

    async fn start_ingestion(&self, token: &str) -> Result<String> {
        let out = self
            .inner
            .agent
            .start_ingestion_job()
            .knowledge_base_id(&self.inner.kb)
            .data_source_id(&self.inner.ds)
            .client_token(token)
            .description("kb-crawl run")
            .send()
            .await
            .map_err(|e| self.sdk_error("StartIngestionJob", e))?;
        Ok(out
            .ingestion_job()
            .map(|j| j.ingestion_job_id().to_owned())
            .unwrap_or_default())
    }
}

#[async_trait]
impl Ingestor for BedrockKbIngestor {
    async fn on_completed(&self, job: &JobRecord, diff: &RunDiff<'_>) -> Result<()> {
        self.sync(job, diff).await.map(|_| ())
    }

    /// PDF and Word (DOCX): Bedrock parses both itself.
    fn accepted_types(&self) -> &'static [&'static str] {
        &[linked::PDF, linked::DOCX]
    }

    /// Removes every object under the job's folder (documents and sidecars), then starts an
    /// ingestion job so Bedrock drops them too. Deleting a later run of a source removes
    /// nothing: its pages live under the source's first run.
    async fn on_deleted(&self, job: &JobRecord) -> Result<()> {
        let folder = self.object_key(&format!("{}/", job.id));
        let mut keys = Vec::new();
        let mut pages = self
            .inner
            .s3
            .list_objects_v2()
            .bucket(&self.inner.bucket)
            .prefix(&folder)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| self.sdk_error("ListObjectsV2", e))?;
            keys.extend(
                page.contents()
                    .iter()
                    .filter_map(|o| o.key().map(str::to_owned)),
            );
        }
        if keys.is_empty() {
            return Ok(());
        }
        for batch in keys.chunks(1000) {
            let objects = batch
                .iter()
                .map(|k| ObjectIdentifier::builder().key(k).build())
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
            let delete = Delete::builder()
                .set_objects(Some(objects))
                .quiet(true)
                .build()
                .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
            self.inner
                .s3
                .delete_objects()
                .bucket(&self.inner.bucket)
                .delete(delete)
                .send()
                .await
                .map_err(|e| self.sdk_error("DeleteObjects", e))?;
        }
        self.start_ingestion(&format!("kb-crawl-delete-{}", job.id))
            .await
            .map(|_| ())
    }
}

/// A document key of the sink never climbs out of the prefix.
fn check_doc_key(key: &str) -> std::result::Result<(), String> {
    let ok = !key.is_empty()
        && !key.starts_with('/')
        && key
            .split('/')
            .all(|s| !s.is_empty() && s != "." && s != ".." && !s.chars().any(char::is_control));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "document key: '{}' has an empty, '.', '..' or control-character segment",
            key.chars().take(120).collect::<String>()
        ))
    }
}

/// StartIngestionJob's idempotency token: the same run and diff give the same token. Fed
/// the diff's upserts, then its deletions, in the diff's order.
struct TokenHash(Sha256);

impl TokenHash {
    fn new(job: &JobRecord) -> Self {
        let mut h = Sha256::new();
        h.update(job.id.as_str().as_bytes());
        TokenHash(h)
    }

    fn add(&mut self, d: &StoredDoc) {
        self.0.update([0u8]);
        self.0.update(d.url.as_str().as_bytes());
        self.0.update([0u8]);
        self.0.update(d.content_hash.as_bytes());
    }

    fn finish(self) -> String {
        format!("kb-crawl-{}", &hex::encode(self.0.finalize())[..40])
    }
}

/// The `title` of the document's front matter, if any.
fn title_of(file: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(file).ok()?;
    let body = text.strip_prefix("---\n")?;
    let end = body.find("\n---")?;
    body[..end].lines().find_map(|l| {
        let v = l.strip_prefix("title:")?.trim();
        serde_json::from_str::<String>(v)
            .ok()
            .or_else(|| Some(v.trim_matches('"').to_owned()))
    })
}

/// Cuts `s` to at most `max` bytes on a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The `<key>.metadata.json` of a document.
fn sidecar(doc: &StoredDoc, title: Option<&str>, source: &str, crawled_at: &str) -> Vec<u8> {
    let mut attrs = Map::new();
    attrs.insert(
        "url".into(),
        json!(cut(doc.url.as_str(), MAX_ATTRIBUTE_BYTES)),
    );
    if let Some(t) = title.filter(|t| !t.is_empty()) {
        attrs.insert("title".into(), json!(cut(t, MAX_ATTRIBUTE_BYTES)));
    }
    if !source.is_empty() {
        attrs.insert("source_id".into(), json!(source));
    }
    attrs.insert("crawled_at".into(), json!(crawled_at));
    attrs.insert("content_hash".into(), json!(cut(&doc.content_hash, 128)));
    serde_json::to_vec(&json!({ "metadataAttributes": Value::Object(attrs) })).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sidecars_stay_within_bedrocks_limits() {
        let url = format!("https://x.test/{}", "a".repeat(5000));
        let doc = StoredDoc::new(url.parse().unwrap(), "j/x.test/a.md".into(), "h".repeat(64));
        let title = "é".repeat(4000);
        let bytes = sidecar(
            &doc,
            Some(&title),
            "src-0123456789abcdef",
            "2026-12-01T14:00:00Z",
        );
        assert!(bytes.len() < MAX_SIDECAR_BYTES, "{} bytes", bytes.len());
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        let attrs = v["metadataAttributes"].as_object().unwrap();
        let mut keys: Vec<&str> = attrs.keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["content_hash", "crawled_at", "source_id", "title", "url"]
        );
        assert!(attrs.values().all(Value::is_string));
    }

    #[test]
    fn titles_come_from_the_front_matter() {
        let f = b"---\nurl: \"https://x.test/\"\ntitle: \"A \\\"quoted\\\" title\"\n---\n\n# A\n";
        assert_eq!(title_of(f).as_deref(), Some("A \"quoted\" title"));
        assert_eq!(title_of(b"# no front matter\ntitle: x"), None);
    }

    #[test]
    fn document_keys_never_climb_out_of_the_prefix() {
        assert!(check_doc_key("job-1/x.test/a.md").is_ok());
        for bad in ["", "/abs", "a/../b", "a//b", "./a", "a/\u{7}"] {
            let e = check_doc_key(bad).unwrap_err();
            assert!(e.starts_with("document key:"), "{e}");
        }
    }
}

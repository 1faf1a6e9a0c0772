//! [`S3Sink`]: documents (each its own manifest entry) and aux objects in one S3 bucket.

mod aux_stream;
mod builder;
mod index;
mod manifest;
mod meta;

use std::fmt;

use async_trait::async_trait;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{Delete, ObjectIdentifier};
use aws_sdk_s3::Client;
use crawl_core::keys::{aux_key, document_keys, job_prefix};
use crawl_core::{Capabilities, Document, Error, ErrorKind, JobId, Result, Sink, StoredDoc};
use futures::{StreamExt, TryStreamExt};

pub use builder::{S3SinkBuilder, MAX_PREFIX_BYTES};

use crate::error::AwsError;
use index::UrlIndex;
use meta::{aux_content_type, encode, is_document, MARKDOWN, MAX_KEY_BYTES, META_HASH, META_URL};

/// Parallel HeadObject requests when listing a job's documents.
const LIST_CONCURRENCY: usize = 16;
/// Attempts of a conditional write that S3 answered with a transient conflict (409).
const CONFLICT_ATTEMPTS: usize = 5;

/// Aux names starting with this are the serverless crawl's working state.
pub const WORKING_STATE_PREFIX: &str = "sfn-";
/// The S3 object tag (`key=value`) put on working-state aux objects; `deploy/template.yaml`'s
/// lifecycle rule expires them.
pub const WORKING_STATE_TAG: &str = "kb-crawl=working-state";

/// A [`Sink`] on S3: each document at `{prefix}/{job}/{domain}/{slug}.md` with content type
/// `text/markdown; charset=utf-8` and metadata `url` (the URL, which is ASCII once parsed;
/// any other byte would be percent-encoded) and `content-hash`.
///
/// Several processes may write the same job at once:
/// - the plain title key is claimed with a conditional `PutObject` (`If-None-Match: *`); a
///   writer that loses reads the holder's `url` metadata and falls back to the hashed key
///   unless the holder is its own URL, so two URLs never share a key;
/// - a document is its own manifest entry (its `url` and `content-hash` metadata): the
///   listing is the job's keys (ListObjectsV2) and one HeadObject a document, so a put is
///   one PutObject and concurrent puts never overwrite each other's entries;
///   [`S3Sink::write_manifest`] consolidates them into `{job}/manifest.json`.
#[derive(Debug, Clone)]
pub struct S3Sink {
    client: Client,
    bucket: String,
    /// Without surrounding slashes; empty for the bucket root.
    prefix: String,
    name: String,
    index: UrlIndex,
}

impl fmt::Display for S3Sink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// How a conditional claim of the plain key ended.
enum Claim {
    Won,
    HeldBy(Option<String>),
}

impl S3Sink {
    fn from_parts(client: Client, bucket: String, prefix: String) -> Self {
        let name = if prefix.is_empty() {
            format!("S3Sink({bucket})")
        } else {
            format!("S3Sink({bucket}/{prefix})")
        };
        S3Sink {
            client,
            bucket,
            prefix,
            name,
            index: UrlIndex::default(),
        }
    }

    /// The bucket.
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// The key prefix (no surrounding slashes; empty for the bucket root).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The underlying SDK client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The full S3 key of a key relative to the sink root.
    pub fn object_key(&self, key: &str) -> String {
        if self.prefix.is_empty() {
            key.to_owned()
        } else {
            format!("{}/{key}", self.prefix)
        }
    }

    fn err(&self, e: AwsError) -> Error {
        e.into_core(self)
    }

    /// Creates the bucket unless it exists (for tests and deployment scripts).
    pub async fn create_bucket_if_missing(&self) -> Result<()> {
        use aws_sdk_s3::types::{BucketLocationConstraint, CreateBucketConfiguration};
        let mut req = self.client.create_bucket().bucket(&self.bucket);
        let region = self.client.config().region().map(|r| r.as_ref().to_owned());
        if let Some(r) = region.filter(|r| r != "us-east-1") {
            req = req.create_bucket_configuration(
                CreateBucketConfiguration::builder()
                    .location_constraint(BucketLocationConstraint::from(r.as_str()))
                    .build(),
            );
        }
        match req.send().await {
            Ok(_) => Ok(()),
            Err(e) => {
                let e = AwsError::sdk("CreateBucket", e);
                match e.code() {
                    Some("BucketAlreadyOwnedByYou" | "BucketAlreadyExists") => Ok(()),
                    _ => Err(self.err(e)),
                }
            }
        }
    }

    async fn get_object(&self, full: &str) -> Result<Option<Vec<u8>>> {
        self.get_object_range(full, None).await
    }

    /// The object at `full`, or the bytes of `range` (an HTTP `Range`, e.g.
    /// `bytes=0-99`) of it; `None` when there is no such object. A range past the object's
    /// end (S3 answers 416 `InvalidRange`) is an empty read.
    pub(crate) async fn get_object_range(
        &self,
        full: &str,
        range: Option<String>,
    ) -> Result<Option<Vec<u8>>> {
        let out = match self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(full)
            .set_range(range.clone())
            .send()
            .await
        {
            Ok(o) => o,
            Err(e) => {
                let e = AwsError::sdk("GetObject", e);
                // A missing bucket is also a 404, but an error, not an absent key.
                return match (e.code(), e.status()) {
                    (Some("NoSuchKey"), _) | (None | Some("NotFound"), Some(404)) => Ok(None),
                    (Some("InvalidRange"), _) | (_, Some(416)) if range.is_some() => {
                        Ok(Some(Vec::new()))
                    }
                    _ => Err(self.err(e)),
                };
            }
        };
        let bytes = out.body.collect().await.map_err(|e| {
            self.err(AwsError::Body {
                op: "GetObject",
                source: Box::new(e),
            })
        })?;
        Ok(Some(bytes.into_bytes().to_vec()))
    }

    async fn put_document(&self, full: &str, doc: &Document, if_absent: bool) -> Result<Claim> {
        for attempt in 1..=CONFLICT_ATTEMPTS {
            let mut req = self
                .client
                .put_object()
                .bucket(&self.bucket)
                .key(full)
                .content_type(match &doc.linked {
                    Some(l) => l.kind.content_type(),
                    None => MARKDOWN,
                })
                .metadata(META_URL, encode(doc.meta.url.as_str()))
                .metadata(META_HASH, doc.content_hash())
                .body(ByteStream::from(doc.to_file_bytes()));
            if if_absent {
                req = req.if_none_match("*");
            }
            let e = match req.send().await {
                Ok(_) => return Ok(Claim::Won),
                Err(e) => AwsError::sdk("PutObject", e),
            };
            match (e.status(), e.code()) {
                (Some(412), _) | (_, Some("PreconditionFailed")) => {
                    return Ok(Claim::HeldBy(self.holder(full).await?));
                }
                (Some(409), _) if attempt < CONFLICT_ATTEMPTS => {
                    tokio::time::sleep(std::time::Duration::from_millis(20 * attempt as u64)).await;
                }
                _ => return Err(self.err(e).with_url(&doc.meta.url)),
            }
        }
        Err(
            Error::new(ErrorKind::Conflict, "PutObject: repeated conflicts")
                .with_backend(self.name.clone())
                .with_url(&doc.meta.url),
        )
    }

    /// The URL (metadata form) recorded on the object at `full`, if it exists and has one.
    async fn holder(&self, full: &str) -> Result<Option<String>> {
        match self
            .client
            .head_object()
            .bucket(&self.bucket)
            .key(full)
            .send()
            .await
        {
            Ok(o) => Ok(o.metadata().and_then(|m| m.get(META_URL)).cloned()),
            Err(e) => {
                let e = AwsError::sdk("HeadObject", e);
                match e.status() {
                    Some(404) => Ok(None),
                    _ => Err(self.err(e)),
                }
            }
        }
    }

    /// The document at `full` as its own listing entry: its `url` and `content-hash`
    /// metadata (one HeadObject). `None` when the object is gone or was not written by this
    /// sink (no such metadata).
    async fn entry_of(&self, full: &str) -> Result<Option<StoredDoc>> {
        let out = match self
            .client
            .head_object()
            .bucket(&self.bucket)
            .key(full)
            .send()
            .await
        {
            Ok(o) => o,
            Err(e) => {
                let e = AwsError::sdk("HeadObject", e);
                return match e.status() {
                    Some(404) => Ok(None),
                    _ => Err(self.err(e)),
                };
            }
        };
        let meta = out.metadata();
        let (Some(url), Some(hash)) = (
            meta.and_then(|m| m.get(META_URL)),
            meta.and_then(|m| m.get(META_HASH)),
        ) else {
            return Ok(None);
        };
        let url = url::Url::parse(url).map_err(|e| {
            self.err(AwsError::Malformed {
                what: format!("url metadata of {full}"),
                detail: e.to_string(),
            })
        })?;
        let rel = match self.prefix.is_empty() {
            true => full.to_owned(),
            false => full
                .strip_prefix(&format!("{}/", self.prefix))
                .unwrap_or(full)
                .to_owned(),
        };
        Ok(Some(StoredDoc::new(url, rel, hash.clone())))
    }

    /// Records where this sink just stored a document, in the URL index if it is `job`'s.
    fn index_put(&self, job: &JobId, stored: &StoredDoc) {
        self.index.insert(job, stored);
    }

    /// Every full key under `prefix`, page by page (ListObjectsV2, 1,000 keys a page).
    async fn for_each_page<F, Fut>(&self, prefix: &str, mut f: F) -> Result<()>
    where
        F: FnMut(Vec<String>) -> Fut,
        Fut: std::future::Future<Output = Result<()>>,
    {
        let mut pages = self
            .client
            .list_objects_v2()
            .bucket(&self.bucket)
            .prefix(prefix)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| self.err(AwsError::sdk("ListObjectsV2", e)))?;
            let keys: Vec<String> = page
                .contents()
                .iter()
                .filter_map(|o| o.key().map(str::to_owned))
                .collect();
            if !keys.is_empty() {
                f(keys).await?;
            }
        }
        Ok(())
    }

    async fn delete_batch(&self, keys: Vec<String>) -> Result<()> {
        let malformed = |e: aws_sdk_s3::error::BuildError| {
            self.err(AwsError::Malformed {
                what: "DeleteObjects request".into(),
                detail: e.to_string(),
            })
        };
        for chunk in keys.chunks(1000) {
            let objects = chunk
                .iter()
                .map(|k| ObjectIdentifier::builder().key(k).build())
                .collect::<Result<Vec<_>, _>>()
                .map_err(malformed)?;
            let delete = Delete::builder()
                .set_objects(Some(objects))
                .quiet(true)
                .build()
                .map_err(malformed)?;
            let out = self
                .client
                .delete_objects()
                .bucket(&self.bucket)
                .delete(delete)
                .send()
                .await
                .map_err(|e| self.err(AwsError::sdk("DeleteObjects", e)))?;
            if let Some(first) = out.errors().first() {
                return Err(Error::new(
                    ErrorKind::Storage,
                    format!(
                        "DeleteObjects: {} of {} keys not deleted, first {:?}: {}",
                        out.errors().len(),
                        chunk.len(),
                        first.key().unwrap_or_default(),
                        first.message().unwrap_or_default()
                    ),
                )
                .with_backend(self.name.clone()));
            }
        }
        Ok(())
    }

    /// The names of `job`'s auxiliary objects (see [`crawl_core::keys::aux_key`]) that start
    /// with `name_prefix`, in key order: one ListObjectsV2 request per 1,000 names.
    pub async fn list_aux(&self, job: &JobId, name_prefix: &str) -> Result<Vec<String>> {
        let dir = self.object_key(&format!("{job}/"));
        let prefix = format!("{dir}{name_prefix}");
        let mut names = Vec::new();
        self.for_each_page(&prefix, |keys| {
            names.extend(
                keys.into_iter()
                    .filter_map(|k| k.strip_prefix(&dir).map(str::to_owned)),
            );
            async { Ok(()) }
        })
        .await?;
        Ok(names)
    }

    fn check_key_len(&self, key: &str, doc: &Document) -> Result<()> {
        let full = self.object_key(key).len();
        if full > MAX_KEY_BYTES {
            return Err(Error::invalid(format!(
                "S3 key of {full} bytes exceeds {MAX_KEY_BYTES} (shorten the sink prefix)"
            ))
            .with_backend(self.name.clone())
            .with_url(&doc.meta.url));
        }
        Ok(())
    }
}

#[async_trait]
impl Sink for S3Sink {
    async fn put(&self, doc: &Document) -> Result<StoredDoc> {
        let (plain, hashed) = document_keys(doc);
        self.check_key_len(&hashed, doc)?;
        // The URL's key is found from the documents themselves: the plain key is claimed
        // (`If-None-Match: *`); held, its `url` metadata says whether by this URL (a re-put:
        // overwrite it) or another (the hashed key, which only this URL can take).
        let key = match self
            .put_document(&self.object_key(&plain), doc, true)
            .await?
        {
            Claim::Won => plain,
            Claim::HeldBy(Some(u)) if u == encode(doc.meta.url.as_str()) => {
                self.put_document(&self.object_key(&plain), doc, false)
                    .await?;
                plain
            }
            Claim::HeldBy(_) => {
                self.put_document(&self.object_key(&hashed), doc, false)
                    .await?;
                hashed
            }
        };
        let stored = StoredDoc::new(doc.meta.url.clone(), key, doc.content_hash());
        self.index_put(&doc.job, &stored);
        Ok(stored)
    }

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        self.get_object(&self.object_key(key)).await
    }

    /// In key order: one ListObjectsV2 request a page (at most 1,000 keys, `StartAfter`
    /// the cursor, which is the last key listed) over the job's prefix, keeping the
    /// documents (`{domain}/...` keys; aux objects and dot folders are not), and one
    /// HeadObject a document for its `url` and `content-hash` metadata: the documents are
    /// their own manifest entries. A page may hold fewer documents than keys listed.
    async fn list_page(
        &self,
        job: &JobId,
        after: Option<&str>,
        limit: usize,
    ) -> Result<crawl_core::DocPage> {
        let dir = self.object_key(&job_prefix(job));
        let mut req = self
            .client
            .list_objects_v2()
            .bucket(&self.bucket)
            .prefix(&dir)
            .max_keys(i32::try_from(limit.clamp(1, 1000)).unwrap_or(1000));
        if let Some(a) = after {
            if !a.starts_with(&dir) {
                return Err(Error::invalid(format!(
                    "after: '{a}' is not a cursor of job {job}'s listing"
                ))
                .with_backend(self.name.clone()));
            }
            req = req.start_after(a);
        }
        let page = req
            .send()
            .await
            .map_err(|e| self.err(AwsError::sdk("ListObjectsV2", e)))?;
        let keys: Vec<String> = page
            .contents()
            .iter()
            .filter_map(|o| o.key().map(str::to_owned))
            .collect();
        let next = match keys.last() {
            Some(last) if page.is_truncated().unwrap_or(false) => Some(last.clone()),
            _ => None,
        };
        let docs: Vec<Option<StoredDoc>> = futures::stream::iter(
            keys.into_iter()
                .filter(|k| k.strip_prefix(&dir).is_some_and(is_document)),
        )
        .map(|k| async move { self.entry_of(&k).await })
        .buffered(LIST_CONCURRENCY)
        .try_collect()
        .await?;
        Ok(crawl_core::DocPage::new(
            docs.into_iter().flatten().collect(),
            next,
        ))
    }

    async fn delete_job(&self, job: &JobId) -> Result<usize> {
        // The trailing slash keeps `job-1/` from matching `job-10/...`.
        let prefix = self.object_key(&job_prefix(job));
        let mut documents = 0;
        self.for_each_page(&prefix, |keys| {
            documents += keys
                .iter()
                .filter(|k| k.strip_prefix(&prefix).is_some_and(is_document))
                .count();
            self.delete_batch(keys)
        })
        .await?;
        Ok(documents)
    }

    async fn replace(&self, stored: &StoredDoc, doc: &Document) -> Result<StoredDoc> {
        if !stored.key.starts_with(&job_prefix(&doc.job)) || stored.url != doc.meta.url {
            return Err(Error::invalid(format!(
                "replace: key '{}' is not this document's key in job {}",
                stored.key, doc.job
            ))
            .with_backend(self.name.clone())
            .with_url(&doc.meta.url));
        }
        self.put_document(&self.object_key(&stored.key), doc, false)
            .await?;
        let out = StoredDoc::new(doc.meta.url.clone(), stored.key.clone(), doc.content_hash());
        self.index_put(&doc.job, &out);
        Ok(out)
    }

    async fn finish_job(&self, job: &JobId) -> Result<()> {
        self.write_manifest(job).await.map(|_| ())
    }

    /// Finds the URL's document through the job's URL index (`index::UrlIndex`): built from
    /// one listing of the job (a HeadObject a document) the first time this sink removes
    /// from the job, then kept up to date by this sink's own writes; a hit is checked
    /// against the object's metadata before it is deleted, and a stale index is rebuilt.
    async fn remove(&self, job: &JobId, url: &url::Url) -> Result<Option<StoredDoc>> {
        let mut found = Vec::new();
        if let Some(keys) = self.index.lookup(job, url) {
            for k in keys {
                match self.entry_of(&self.object_key(&k)).await? {
                    Some(d) if &d.url == url => found.push(d),
                    _ => {}
                }
            }
        }
        if found.is_empty() && self.index.stale(job) {
            // Every document, from the listing (one ListObjectsV2 a 1,000 keys, one
            // HeadObject a document).
            let docs = self.list(job).await?;
            found = docs.iter().filter(|d| &d.url == url).cloned().collect();
            self.index.rebuild(job, docs);
        }
        let Some(first) = found.first().cloned() else {
            return Ok(None);
        };
        // Every key the URL holds (two only if its title changed between puts).
        self.delete_batch(found.iter().map(|d| self.object_key(&d.key)).collect())
            .await?;
        self.index.forget(job, url);
        Ok(Some(first))
    }

    async fn delete_aux(&self, job: &JobId, name: &str) -> Result<()> {
        let key = aux_key(job, name).map_err(|e| e.with_backend(self.name.clone()))?;
        self.delete_batch(vec![self.object_key(&key)]).await
    }

    async fn put_aux(&self, job: &JobId, name: &str, bytes: Vec<u8>) -> Result<String> {
        let key = aux_key(job, name).map_err(|e| e.with_backend(self.name.clone()))?;
        let mut put = self
            .client
            .put_object()
            .bucket(&self.bucket)
            .key(self.object_key(&key))
            .content_type(aux_content_type(name));
        // The serverless crawl's working state (level lists, reports, robots snapshot): the
        // deployment's lifecycle rule expires objects with this tag.
        if name.starts_with(WORKING_STATE_PREFIX) {
            put = put.tagging(WORKING_STATE_TAG);
        }
        put.body(ByteStream::from(bytes))
            .send()
            .await
            .map_err(|e| self.err(AwsError::sdk("PutObject", e)))?;
        Ok(key)
    }

    /// One ranged `GetObject` (see `aux_stream`).
    async fn get_range(&self, key: &str, offset: u64, len: usize) -> Result<Option<Vec<u8>>> {
        self.read_range(key, offset, len).await
    }

    /// Streamed in 8 MiB parts of a multipart upload (see `aux_stream`).
    async fn aux_writer<'a>(
        &'a self,
        job: &JobId,
        name: &str,
    ) -> Result<crawl_core::DynAuxWriter<'a>> {
        self.stream_aux(job, name, aux_stream::AUX_PART_BYTES)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::SHARED
    }
}

/// A sink (prefix `kb`) on a new bucket `{stem}-…` of the moto at `KB_CRAWL_AWS_ENDPOINT`,
/// for this module's tests; `None` (said) when it is not set, a failure with
/// `KB_CRAWL_REQUIRE_SERVICES=1`.
#[cfg(test)]
async fn test_sink(stem: &str) -> Option<S3Sink> {
    let Ok(ep) = std::env::var("KB_CRAWL_AWS_ENDPOINT") else {
        assert!(
            std::env::var("KB_CRAWL_REQUIRE_SERVICES").as_deref() != Ok("1"),
            "KB_CRAWL_AWS_ENDPOINT not set but KB_CRAWL_REQUIRE_SERVICES=1"
        );
        println!("SKIPPED: KB_CRAWL_AWS_ENDPOINT not set (start moto with scripts/moto.sh)");
        return None;
    };
    let s = S3Sink::builder()
        .bucket(format!("{stem}-{}", &JobId::new().as_str()[4..]))
        .prefix("kb")
        .endpoint_url(ep)
        .region("us-east-1")
        .static_credentials("testing", "testing")
        .build()
        .await
        .unwrap();
    s.create_bucket_if_missing().await.unwrap();
    Some(s)
}

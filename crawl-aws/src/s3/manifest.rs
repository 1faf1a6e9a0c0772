//! `{job}/manifest.json` in bounded memory. The manifest is one URL-sorted object while the
//! entries list in digest order, so it is an external merge sort: each page of entries
//! ([`Sink::list_page`], 1,000 at a time) is sorted and written as a run object under
//! `{job}/.manifest-runs/`, the runs are merged reading each as a stream, and the merged
//! bytes go up as a multipart upload of 8 MiB parts (one `PutObject` when they are fewer).
//! Memory: one page of entries while writing the runs, then one entry and one read buffer
//! per run (a run per 1,000 documents) and one part.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};
use crawl_core::keys::{manifest_key, ManifestJsonWriter};
use crawl_core::{Error, ErrorKind, JobId, Result, Sink, StoredDoc, LIST_PAGE};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::S3Sink;
use crate::error::AwsError;

/// Where the sorted runs of a manifest being written live (a dot folder: not documents).
const RUN_DIR: &str = ".manifest-runs";
/// Bytes of each part of the manifest's multipart upload (S3's floor is 5 MiB).
pub(crate) const PART_BYTES: usize = 8 << 20;

/// The bytes [`ManifestJsonWriter`] has written and no part has taken yet.
#[derive(Clone, Default)]
struct Pending(Arc<Mutex<Vec<u8>>>);

impl Pending {
    fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Write for Pending {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A multipart upload begun once the manifest outgrows one part.
struct Upload {
    id: String,
    parts: Vec<CompletedPart>,
}

impl S3Sink {
    /// Writes `{job}/manifest.json` (url → key and content hash, a JSON object sorted by
    /// URL, the bytes [`crawl_core::keys::manifest_json`] writes) from the per-document
    /// entries, and returns its key. Call it once the job's writers are done; re-running it
    /// is harmless. Its memory does not grow with the job's documents, only with the
    /// number of sorted runs (one per 1,000 documents; see the module's notes).
    pub async fn write_manifest(&self, job: &JobId) -> Result<String> {
        self.write_manifest_with(job, LIST_PAGE, PART_BYTES).await
    }

    /// [`write_manifest`](Self::write_manifest) with `run` documents a sorted run and parts
    /// of `part` bytes (tests use small ones).
    pub(crate) async fn write_manifest_with(
        &self,
        job: &JobId,
        run: usize,
        part: usize,
    ) -> Result<String> {
        let runs = self.write_runs(job, run).await?;
        let key = manifest_key(job);
        let res = self.merge_runs(&runs, &self.object_key(&key), part).await;
        // The runs go whether or not the merge went through: a re-run writes them again.
        self.delete_batch(runs).await?;
        res?;
        Ok(key)
    }

    /// Sorts each page of the job's entries by URL and writes it as a run; returns the
    /// runs' full keys.
    async fn write_runs(&self, job: &JobId, run: usize) -> Result<Vec<String>> {
        let mut runs = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let page = self.list_page(job, after.as_deref(), run).await?;
            if !page.docs.is_empty() {
                let mut docs = page.docs;
                docs.sort_by(|a, b| a.url.as_str().cmp(b.url.as_str()));
                let mut body = Vec::new();
                for d in &docs {
                    serde_json::to_writer(&mut body, d).map_err(|e| {
                        Error::new(ErrorKind::Internal, format!("manifest run: {e}"))
                    })?;
                    body.push(b'\n');
                }
                let full = self.object_key(&format!("{job}/{RUN_DIR}/{:08}.jsonl", runs.len()));
                self.client
                    .put_object()
                    .bucket(&self.bucket)
                    .key(&full)
                    .content_type("application/x-ndjson")
                    .body(ByteStream::from(body))
                    .send()
                    .await
                    .map_err(|e| self.err(AwsError::sdk("PutObject", e)))?;
                runs.push(full);
            }
            match page.next {
                Some(n) => after = Some(n),
                None => return Ok(runs),
            }
        }
    }

    /// Merges the sorted runs into the manifest at `full`, uploaded in parts of `part`.
    async fn merge_runs(&self, runs: &[String], full: &str, part: usize) -> Result<()> {
        let mut readers = Vec::with_capacity(runs.len());
        for key in runs {
            let out = self
                .client
                .get_object()
                .bucket(&self.bucket)
                .key(key)
                .send()
                .await
                .map_err(|e| self.err(AwsError::sdk("GetObject", e)))?;
            readers.push(BufReader::new(out.body.into_async_read()).lines());
        }
        let mut heads: Vec<Option<StoredDoc>> = Vec::with_capacity(runs.len());
        let mut heap = BinaryHeap::new();
        for (i, r) in readers.iter_mut().enumerate() {
            let head = next_entry(r, &runs[i]).await?;
            if let Some(d) = &head {
                heap.push(Reverse((d.url.as_str().to_owned(), i)));
            }
            heads.push(head);
        }
        let pending = Pending::default();
        let mut writer = ManifestJsonWriter::new(pending.clone())?;
        let mut upload: Option<Upload> = None;
        let mut last_url: Option<String> = None;
        let res = async {
            while let Some(Reverse((url, i))) = heap.pop() {
                let Some(doc) = heads[i].take() else { continue };
                // One entry per URL (an entry's object is named by its URL's digest).
                if last_url.as_deref() != Some(url.as_str()) {
                    writer.entry(&doc)?;
                    last_url = Some(url);
                }
                let next = next_entry(&mut readers[i], &runs[i]).await?;
                if let Some(d) = &next {
                    heap.push(Reverse((d.url.as_str().to_owned(), i)));
                }
                heads[i] = next;
                if pending.len() >= part {
                    self.upload_part(full, &mut upload, pending.take()).await?;
                }
            }
            writer.finish()?;
            let rest = pending.take();
            match &mut upload {
                None => {
                    self.client
                        .put_object()
                        .bucket(&self.bucket)
                        .key(full)
                        .content_type("application/json")
                        .body(ByteStream::from(rest))
                        .send()
                        .await
                        .map_err(|e| self.err(AwsError::sdk("PutObject", e)))?;
                }
                Some(_) => {
                    self.upload_part(full, &mut upload, rest).await?;
                    if let Some(u) = upload.take() {
                        self.client
                            .complete_multipart_upload()
                            .bucket(&self.bucket)
                            .key(full)
                            .upload_id(&u.id)
                            .multipart_upload(
                                CompletedMultipartUpload::builder()
                                    .set_parts(Some(u.parts))
                                    .build(),
                            )
                            .send()
                            .await
                            .map_err(|e| self.err(AwsError::sdk("CompleteMultipartUpload", e)))?;
                    }
                }
            }
            Ok(())
        }
        .await;
        if res.is_err() {
            if let Some(u) = upload.take() {
                let _ = self
                    .client
                    .abort_multipart_upload()
                    .bucket(&self.bucket)
                    .key(full)
                    .upload_id(&u.id)
                    .send()
                    .await;
            }
        }
        res
    }

    /// Uploads `bytes` as the next part of the manifest, beginning the upload if need be.
    async fn upload_part(
        &self,
        full: &str,
        upload: &mut Option<Upload>,
        bytes: Vec<u8>,
    ) -> Result<()> {
        if upload.is_none() {
            let out = self
                .client
                .create_multipart_upload()
                .bucket(&self.bucket)
                .key(full)
                .content_type("application/json")
                .send()
                .await
                .map_err(|e| self.err(AwsError::sdk("CreateMultipartUpload", e)))?;
            let id = out.upload_id().unwrap_or_default().to_owned();
            *upload = Some(Upload {
                id,
                parts: Vec::new(),
            });
        }
        let Some(u) = upload.as_mut() else {
            return Ok(());
        };
        let number = i32::try_from(u.parts.len() + 1).unwrap_or(i32::MAX);
        let out = self
            .client
            .upload_part()
            .bucket(&self.bucket)
            .key(full)
            .upload_id(&u.id)
            .part_number(number)
            .body(ByteStream::from(bytes))
            .send()
            .await
            .map_err(|e| self.err(AwsError::sdk("UploadPart", e)))?;
        u.parts.push(
            CompletedPart::builder()
                .part_number(number)
                .set_e_tag(out.e_tag().map(str::to_owned))
                .build(),
        );
        Ok(())
    }
}

/// The next entry of a run, `None` at its end.
async fn next_entry<R>(lines: &mut tokio::io::Lines<R>, run: &str) -> Result<Option<StoredDoc>>
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    loop {
        let line = lines
            .next_line()
            .await
            .map_err(|e| Error::new(ErrorKind::Storage, format!("{run}: {e}")))?;
        match line {
            None => return Ok(None),
            Some(l) if l.trim().is_empty() => {}
            Some(l) => {
                return serde_json::from_str(&l).map(Some).map_err(|e| {
                    Error::new(ErrorKind::Storage, format!("{run}: malformed entry ({e})"))
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use futures::{StreamExt, TryStreamExt};

    use super::*;

    /// Against moto (skipped without `KB_CRAWL_AWS_ENDPOINT`): a manifest merged from
    /// several sorted runs and uploaded in several parts is the bytes of the manifest built
    /// whole, and leaves no run behind.
    #[tokio::test]
    async fn a_manifest_merged_from_runs_in_parts_is_the_whole_manifest() {
        let Some(s) = super::super::test_sink("kbc-manifest").await else {
            return;
        };
        let job = JobId::new();
        for i in 0..23 {
            let d = crawl_core::conformance::sample_doc(
                &job,
                &format!("https://x.test/{}/p{i}", i % 4),
                Some(&format!("P{i}")),
                &format!("# P{i}\n"),
            );
            s.put(&d).await.unwrap();
        }
        let want = crawl_core::keys::manifest_json(&s.list(&job).await.unwrap()).unwrap();
        // Runs of 5 and of 1 document, one object.
        for run in [5, 1, 1000] {
            let key = s.write_manifest_with(&job, run, PART_BYTES).await.unwrap();
            let got = s.get(&key).await.unwrap().unwrap();
            assert_eq!(got, want, "runs of {run}");
        }
        // More than one part: 1,400 documents of 4 KB URLs, S3's 5 MiB parts (moto enforces
        // the floor), each written straight at its key (one request, no key claim) to keep
        // the test fast.
        let big = JobId::new();
        let filler = "x".repeat(4000);
        let docs: Vec<crawl_core::Document> = (0..1400)
            .map(|i| {
                crawl_core::conformance::sample_doc(
                    &big,
                    &format!("https://x.test/{filler}/p{i}"),
                    Some(&format!("p{i}")),
                    "x\n",
                )
            })
            .collect();
        let s = &s;
        let entries: Vec<StoredDoc> = futures::stream::iter(&docs)
            .map(|d| async move {
                let key = crawl_core::keys::document_keys(d).0;
                s.put_document(&s.object_key(&key), d, false).await?;
                Ok::<_, Error>(StoredDoc::new(d.meta.url.clone(), key, d.content_hash()))
            })
            .buffer_unordered(16)
            .try_collect()
            .await
            .unwrap();
        let want = crawl_core::keys::manifest_json(&entries).unwrap();
        assert!(want.len() > 5 << 20, "{} bytes", want.len());
        let key = s.write_manifest_with(&big, 500, 5 << 20).await.unwrap();
        let got = s.get(&key).await.unwrap().unwrap();
        assert!(got == want, "the manifest of {} bytes differs", got.len());
        for j in [&job, &big] {
            let left = s
                .client
                .list_objects_v2()
                .bucket(&s.bucket)
                .prefix(s.object_key(&format!("{j}/{RUN_DIR}/")))
                .send()
                .await
                .unwrap();
            assert_eq!(left.key_count().unwrap_or(0), 0, "runs of {j} left behind");
        }
    }
}

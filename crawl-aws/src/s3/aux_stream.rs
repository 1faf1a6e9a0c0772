//! [`Sink::aux_writer`](crawl_core::Sink::aux_writer) for S3: an auxiliary object streamed in bounded memory. The bytes
//! gather into one part; a full part begins a multipart upload (8 MiB parts, as the
//! manifest's), `finish` completes it, or sends one `PutObject` when the object fits in a
//! part. S3 shows a multipart object only once it is completed, so a reader never sees part
//! of it; an unfinished upload is aborted (at once on an error, in the background when the
//! writer is dropped). Also the ranged read of an object ([`Sink::get_range`](crawl_core::Sink::get_range)), with
//! which a hand-off reads a run's `changes.jsonl` a window at a time.

use async_trait::async_trait;
use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};
use crawl_core::keys::aux_key;
use crawl_core::{AuxWriter, DynAuxWriter, JobId, Result};

use super::{aux_content_type, S3Sink, WORKING_STATE_PREFIX, WORKING_STATE_TAG};
use crate::error::AwsError;

/// Bytes of each part (S3's floor is 5 MiB for every part but the last).
pub(crate) const AUX_PART_BYTES: usize = 8 << 20;

impl S3Sink {
    /// [`Sink::aux_writer`](crawl_core::Sink::aux_writer) with parts of `part` bytes.
    pub(crate) fn stream_aux<'a>(
        &'a self,
        job: &JobId,
        name: &str,
        part: usize,
    ) -> Result<DynAuxWriter<'a>> {
        let key = aux_key(job, name).map_err(|e| e.with_backend(self.name.clone()))?;
        Ok(Box::new(S3AuxWriter {
            sink: self,
            object: self.object_key(&key),
            key,
            name: name.to_owned(),
            part,
            pending: Vec::new(),
            upload: None,
        }))
    }
}

impl S3Sink {
    /// [`Sink::get_range`](crawl_core::Sink::get_range): one ranged `GetObject`. A range
    /// past the object's end (S3 answers 416 `InvalidRange`) is an empty read.
    pub(crate) async fn read_range(
        &self,
        key: &str,
        offset: u64,
        len: usize,
    ) -> Result<Option<Vec<u8>>> {
        if len == 0 {
            return Ok(self
                .get_object(&self.object_key(key))
                .await?
                .map(|_| Vec::new()));
        }
        let last = offset.saturating_add(u64::try_from(len).unwrap_or(u64::MAX) - 1);
        self.get_object_range(
            &self.object_key(key),
            Some(format!("bytes={offset}-{last}")),
        )
        .await
    }
}

/// The writer [`S3Sink`] returns from `aux_writer`.
struct S3AuxWriter<'a> {
    sink: &'a S3Sink,
    /// The sink's key (returned) and the object's key in the bucket.
    key: String,
    object: String,
    name: String,
    part: usize,
    pending: Vec<u8>,
    /// The upload's id and its parts, once the object outgrew one part.
    upload: Option<(String, Vec<CompletedPart>)>,
}

impl S3AuxWriter<'_> {
    async fn send_part(&mut self) -> Result<()> {
        let s = self.sink;
        if self.upload.is_none() {
            let mut create = s
                .client
                .create_multipart_upload()
                .bucket(&s.bucket)
                .key(&self.object)
                .content_type(aux_content_type(&self.name));
            if self.name.starts_with(WORKING_STATE_PREFIX) {
                create = create.tagging(WORKING_STATE_TAG);
            }
            let out = create
                .send()
                .await
                .map_err(|e| s.err(AwsError::sdk("CreateMultipartUpload", e)))?;
            self.upload = Some((out.upload_id().unwrap_or_default().to_owned(), Vec::new()));
        }
        let bytes = std::mem::take(&mut self.pending);
        let Some((id, parts)) = self.upload.as_mut() else {
            return Ok(());
        };
        let number = i32::try_from(parts.len() + 1).unwrap_or(i32::MAX);
        let out = s
            .client
            .upload_part()
            .bucket(&s.bucket)
            .key(&self.object)
            .upload_id(id.as_str())
            .part_number(number)
            .body(ByteStream::from(bytes))
            .send()
            .await
            .map_err(|e| s.err(AwsError::sdk("UploadPart", e)))?;
        parts.push(
            CompletedPart::builder()
                .part_number(number)
                .set_e_tag(out.e_tag().map(str::to_owned))
                .build(),
        );
        Ok(())
    }

    async fn complete(&mut self) -> Result<()> {
        let s = self.sink;
        if self.upload.is_none() {
            let mut put = s
                .client
                .put_object()
                .bucket(&s.bucket)
                .key(&self.object)
                .content_type(aux_content_type(&self.name));
            if self.name.starts_with(WORKING_STATE_PREFIX) {
                put = put.tagging(WORKING_STATE_TAG);
            }
            put.body(ByteStream::from(std::mem::take(&mut self.pending)))
                .send()
                .await
                .map_err(|e| s.err(AwsError::sdk("PutObject", e)))?;
            return Ok(());
        }
        self.send_part().await?;
        let Some((id, parts)) = self.upload.take() else {
            return Ok(());
        };
        let done = s
            .client
            .complete_multipart_upload()
            .bucket(&s.bucket)
            .key(&self.object)
            .upload_id(id.as_str())
            .multipart_upload(
                CompletedMultipartUpload::builder()
                    .set_parts(Some(parts))
                    .build(),
            )
            .send()
            .await
            .map_err(|e| s.err(AwsError::sdk("CompleteMultipartUpload", e)));
        if done.is_err() {
            self.upload = Some((id, Vec::new()));
        }
        done.map(|_| ())
    }

    async fn abort(&mut self) {
        if let Some((id, _)) = self.upload.take() {
            let s = self.sink;
            let _ = s
                .client
                .abort_multipart_upload()
                .bucket(&s.bucket)
                .key(&self.object)
                .upload_id(id)
                .send()
                .await;
        }
    }
}

#[async_trait]
impl AuxWriter for S3AuxWriter<'_> {
    async fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.pending.extend_from_slice(bytes);
        if self.pending.len() >= self.part {
            if let Err(e) = self.send_part().await {
                self.abort().await;
                return Err(e);
            }
        }
        Ok(())
    }

    async fn finish(mut self: Box<Self>) -> Result<String> {
        match self.complete().await {
            Ok(()) => Ok(std::mem::take(&mut self.key)),
            Err(e) => {
                self.abort().await;
                Err(e)
            }
        }
    }
}

impl Drop for S3AuxWriter<'_> {
    fn drop(&mut self) {
        // Dropped unfinished: abort the upload in the background (its parts cost storage).
        if let (Some((id, _)), Ok(rt)) = (self.upload.take(), tokio::runtime::Handle::try_current())
        {
            let abort = self
                .sink
                .client
                .abort_multipart_upload()
                .bucket(&self.sink.bucket)
                .key(&self.object)
                .upload_id(id);
            rt.spawn(async move {
                let _ = abort.send().await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use crawl_core::Sink;

    use super::*;

    /// Against moto (skipped without `KB_CRAWL_AWS_ENDPOINT`): an object streamed past one
    /// part goes up as a multipart upload and reads back as the bytes written; an upload
    /// dropped unfinished leaves the previous object whole and no upload pending.
    #[tokio::test]
    async fn an_aux_object_bigger_than_a_part_is_a_multipart_upload_of_its_bytes() {
        let Some(s) = super::super::test_sink("kbc-auxstream").await else {
            return;
        };
        let job = JobId::new();
        let part = 5 << 20;
        let mut w = s.stream_aux(&job, "chunks.jsonl", part).unwrap();
        let mut want = Vec::new();
        for i in 0..12u8 {
            let piece = vec![b'a' + i; 1 << 20];
            w.write(&piece).await.unwrap();
            want.extend_from_slice(&piece);
        }
        let key = w.finish().await.unwrap();
        assert_eq!(s.get(&key).await.unwrap(), Some(want.clone()));

        let mut w = s.stream_aux(&job, "chunks.jsonl", part).unwrap();
        w.write(&vec![b'z'; 6 << 20]).await.unwrap();
        drop(w);
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        assert_eq!(s.get(&key).await.unwrap(), Some(want));
        let uploads = s
            .client
            .list_multipart_uploads()
            .bucket(&s.bucket)
            .send()
            .await
            .unwrap();
        assert!(uploads.uploads().is_empty(), "{:?}", uploads.uploads());
        s.delete_job(&job).await.unwrap();
    }
}

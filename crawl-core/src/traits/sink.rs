use std::fmt::{Debug, Display};
use std::sync::Arc;

use async_trait::async_trait;

use super::Capabilities;
use url::Url;

use crate::error::{Error, ErrorKind, Result};
use crate::job::JobId;
use crate::page::{Document, StoredDoc};

/// Stores documents as `{job-id}/{domain}/{page-title}.md` plus a per-job manifest.
///
/// # Contract
/// - `put` writes [`Document::to_file_bytes`] atomically (a reader never sees half a file) at
///   the first key of [`document_keys`](crate::keys::document_keys) not held by another URL
///   of the same job, else at the second; it returns where.
/// - `put` is idempotent: the same document put twice lands at the same key with the same
///   bytes, and the manifest lists it once.
/// - `get` returns the stored bytes of a key; `get_range` at most `len` of them from byte
///   `offset` (fewer at the object's end, none past it; `None` when there is no object),
///   reading no more of the object than that (the default reads it whole and slices).
/// - `list_page` pages through the job's documents in an order the backend chooses and keeps
///   (memory and filesystem: by URL; S3: by document key): starting right after
///   the cursor `after` (`None`: from the start), at most `limit` documents (at least one is
///   asked for: `0` counts as `1`), and `next`, the cursor of the following page, `None`
///   after the last. A page may hold fewer than `limit` documents (even none) while `next`
///   is set. A listing followed to its end returns every document of the job once, none
///   twice, whatever the page size; a document put or removed during the listing may or may
///   not appear. A cursor is opaque: only one this sink returned for this job may be given
///   back. The memory a page takes does not grow with the job.
/// - `list` (provided) follows `list_page` to the end: only for a caller that truly needs
///   every document at once.
/// - `delete_job` removes every object of the job and nothing of any other job; it is safe
///   to re-run and returns how many documents it removed.
/// - `remove` removes one URL's document and its manifest entry (nothing else of the job),
///   returns what was stored, and is safe to re-run (`None` the second time). A later `put`
///   of that URL may take its old key again.
/// - `delete_aux` removes one auxiliary object; a missing one is not an error.
/// - `aux_writer` streams an auxiliary object: the bytes of every
///   [`AuxWriter::write`] in order become the object at
///   [`finish`](AuxWriter::finish), atomically (no reader sees part of it; until then a
///   previous object of that name stays whole), the same object `put_aux` of those bytes
///   makes. A writer dropped before `finish` leaves no new object. The memory a writer
///   holds does not grow with the object (a bounded buffer: a filesystem sink writes to a
///   temp file, S3 uploads parts). The default gathers the bytes in memory and calls
///   `put_aux` at `finish`.
#[async_trait]
pub trait Sink: Debug + Display + Send + Sync + 'static {
    /// Stores one document.
    async fn put(&self, doc: &Document) -> Result<StoredDoc>;
    /// Bytes at `key` (relative to the sink root), if any.
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>>;
    /// At most `len` bytes of the object at `key` from byte `offset` (see the contract).
    async fn get_range(&self, key: &str, offset: u64, len: usize) -> Result<Option<Vec<u8>>> {
        Ok(self.get(key).await?.map(|b| {
            let start = usize::try_from(offset).unwrap_or(usize::MAX).min(b.len());
            let end = start.saturating_add(len).min(b.len());
            b[start..end].to_vec()
        }))
    }
    /// One page of the job's stored documents (see the contract).
    async fn list_page(&self, job: &JobId, after: Option<&str>, limit: usize) -> Result<DocPage>;

    /// Every stored document of the job, in [`list_page`](Self::list_page) order. Its memory
    /// grows with the job: a caller that can work page by page uses `list_page`.
    async fn list(&self, job: &JobId) -> Result<Vec<StoredDoc>> {
        let mut out = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let page = self.list_page(job, after.as_deref(), LIST_PAGE).await?;
            out.extend(page.docs);
            match page.next {
                Some(n) => after = Some(n),
                None => return Ok(out),
            }
        }
    }
    /// Removes the job's documents and manifest.
    async fn delete_job(&self, job: &JobId) -> Result<usize>;

    /// Overwrites the document at an existing key with new markdown (used by template
    /// stripping when a crawl finalises). The default re-puts the document.
    async fn replace(&self, stored: &StoredDoc, doc: &Document) -> Result<StoredDoc> {
        let _ = stored;
        self.put(doc).await
    }

    /// Removes the document `url` holds in `job`; returns it, `None` when there was none.
    /// The default refuses: a sink that keeps sources in sync implements it.
    async fn remove(&self, job: &JobId, url: &Url) -> Result<Option<StoredDoc>> {
        let _ = (job, url);
        Err(Error::new(
            ErrorKind::Unsupported,
            format!("{self} cannot remove one document"),
        ))
    }

    /// Removes the auxiliary object `name` of `job` (see [`put_aux`](Self::put_aux)).
    async fn delete_aux(&self, job: &JobId, name: &str) -> Result<()> {
        let _ = (job, name);
        Err(Error::new(
            ErrorKind::Unsupported,
            format!("{self} cannot delete an auxiliary object"),
        ))
    }

    /// Called once when a job's writers are done (the engine calls it as the job completes):
    /// a sink that keeps a summary manifest writes it here. Idempotent. The default does
    /// nothing.
    async fn finish_job(&self, job: &JobId) -> Result<()> {
        let _ = job;
        Ok(())
    }

    /// Writes an auxiliary object (site template, chunks) under the job's prefix.
    async fn put_aux(&self, job: &JobId, name: &str, bytes: Vec<u8>) -> Result<String>;

    /// A writer streaming the auxiliary object `name` of `job` (see the contract): for an
    /// object too large to hold in memory, such as `chunks.jsonl`. The name is checked
    /// here ([`aux_key`](crate::keys::aux_key)).
    async fn aux_writer<'a>(&'a self, job: &JobId, name: &str) -> Result<DynAuxWriter<'a>> {
        crate::keys::aux_key(job, name)?;
        Ok(Box::new(GatherAux {
            sink: self,
            job: job.clone(),
            name: name.to_owned(),
            bytes: Vec::new(),
        }))
    }

    /// What this sink can do.
    fn capabilities(&self) -> Capabilities {
        Capabilities::LOCAL
    }
}

/// Documents per [`Sink::list_page`] call when the engine or [`Sink::list`] pages through a
/// job (S3 lists at most 1,000 keys a request).
pub const LIST_PAGE: usize = 1000;

/// One page of [`Sink::list_page`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DocPage {
    /// Documents, in the sink's listing order.
    pub docs: Vec<StoredDoc>,
    /// Cursor of the next page; `None` after the last.
    pub next: Option<String>,
}

impl DocPage {
    /// A page of `docs` followed by `next`.
    pub fn new(docs: Vec<StoredDoc>, next: Option<String>) -> Self {
        DocPage { docs, next }
    }
}

/// Calls `each` with every page of `job`'s documents in `sink`, `limit` at a time, so a
/// pass over a job holds one page at a time.
pub async fn for_each_doc_page<F, Fut>(
    sink: &dyn Sink,
    job: &JobId,
    limit: usize,
    mut each: F,
) -> Result<()>
where
    F: FnMut(Vec<StoredDoc>) -> Fut + Send,
    Fut: std::future::Future<Output = Result<()>> + Send,
{
    let mut after: Option<String> = None;
    loop {
        let page = sink.list_page(job, after.as_deref(), limit).await?;
        each(page.docs).await?;
        match page.next {
            Some(n) => after = Some(n),
            None => return Ok(()),
        }
    }
}

/// Shared sink handle.
pub type DynSink = Arc<dyn Sink>;

/// Reads an object of a sink in blocks of whole lines, [`Sink::get_range`] a window at a
/// time, so a pass over a large JSON-lines object (a previous `chunks.jsonl`) never holds
/// it whole: a block is at most a window plus the line it ends inside.
#[derive(Debug)]
pub struct RangeLines<'a> {
    sink: &'a dyn Sink,
    key: String,
    window: usize,
    offset: u64,
    /// Bytes read that do not end a line yet.
    carry: Vec<u8>,
    done: bool,
}

impl<'a> RangeLines<'a> {
    /// The lines of the object at `key` of `sink`, read `window` bytes at a time.
    pub fn new(sink: &'a dyn Sink, key: impl Into<String>, window: usize) -> Self {
        Self::at(sink, key, window, 0)
    }

    /// As [`new`](Self::new), from byte `offset` (the start of a line) on.
    pub fn at(sink: &'a dyn Sink, key: impl Into<String>, window: usize, offset: u64) -> Self {
        RangeLines {
            sink,
            key: key.into(),
            window: window.max(1),
            offset,
            carry: Vec::new(),
            done: false,
        }
    }

    /// The next block of whole lines, each ending in a newline (but the object's last line
    /// when it has none); `None` after the last, or at once when there is no such object.
    /// An object that goes away while it is read is an error.
    pub async fn next_block(&mut self) -> Result<Option<Vec<u8>>> {
        while !self.done {
            let Some(window) = self
                .sink
                .get_range(&self.key, self.offset, self.window)
                .await?
            else {
                if self.offset == 0 {
                    self.done = true;
                    return Ok(None);
                }
                return Err(Error::new(
                    ErrorKind::NotFound,
                    format!(
                        "{} went away from {} while it was read",
                        self.key, self.sink
                    ),
                ));
            };
            if window.is_empty() {
                self.done = true;
                break;
            }
            self.offset += window.len() as u64;
            self.carry.extend_from_slice(&window);
            if let Some(end) = self.carry.iter().rposition(|b| *b == b'\n') {
                let rest = self.carry.split_off(end + 1);
                return Ok(Some(std::mem::replace(&mut self.carry, rest)));
            }
        }
        Ok((!self.carry.is_empty()).then(|| std::mem::take(&mut self.carry)))
    }
}

/// An auxiliary object being streamed into a sink ([`Sink::aux_writer`]).
#[async_trait]
pub trait AuxWriter: Send {
    /// Appends `bytes` to the object.
    async fn write(&mut self, bytes: &[u8]) -> Result<()>;
    /// Makes the object of every byte written, atomically; returns its key.
    async fn finish(self: Box<Self>) -> Result<String>;
}

/// A boxed [`AuxWriter`] borrowing its sink.
pub type DynAuxWriter<'a> = Box<dyn AuxWriter + 'a>;

/// The default [`Sink::aux_writer`]: the bytes gathered in memory, `put_aux` at the end.
struct GatherAux<'a, S: ?Sized> {
    sink: &'a S,
    job: JobId,
    name: String,
    bytes: Vec<u8>,
}

#[async_trait]
impl<S: Sink + ?Sized> AuxWriter for GatherAux<'_, S> {
    async fn write(&mut self, bytes: &[u8]) -> Result<()> {
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }
    async fn finish(self: Box<Self>) -> Result<String> {
        let GatherAux {
            sink,
            job,
            name,
            bytes,
        } = *self;
        sink.put_aux(&job, &name, bytes).await
    }
}

#[async_trait]
impl<T: Sink + ?Sized> Sink for Arc<T> {
    async fn put(&self, doc: &Document) -> Result<StoredDoc> {
        (**self).put(doc).await
    }
    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        (**self).get(key).await
    }
    async fn get_range(&self, key: &str, offset: u64, len: usize) -> Result<Option<Vec<u8>>> {
        (**self).get_range(key, offset, len).await
    }
    async fn list_page(&self, job: &JobId, after: Option<&str>, limit: usize) -> Result<DocPage> {
        (**self).list_page(job, after, limit).await
    }
    async fn list(&self, job: &JobId) -> Result<Vec<StoredDoc>> {
        (**self).list(job).await
    }
    async fn delete_job(&self, job: &JobId) -> Result<usize> {
        (**self).delete_job(job).await
    }
    async fn replace(&self, stored: &StoredDoc, doc: &Document) -> Result<StoredDoc> {
        (**self).replace(stored, doc).await
    }
    async fn finish_job(&self, job: &JobId) -> Result<()> {
        (**self).finish_job(job).await
    }
    async fn remove(&self, job: &JobId, url: &Url) -> Result<Option<StoredDoc>> {
        (**self).remove(job, url).await
    }
    async fn delete_aux(&self, job: &JobId, name: &str) -> Result<()> {
        (**self).delete_aux(job, name).await
    }
    async fn put_aux(&self, job: &JobId, name: &str, bytes: Vec<u8>) -> Result<String> {
        (**self).put_aux(job, name, bytes).await
    }
    async fn aux_writer<'a>(&'a self, job: &JobId, name: &str) -> Result<DynAuxWriter<'a>> {
        (**self).aux_writer(job, name).await
    }
    fn capabilities(&self) -> Capabilities {
        (**self).capabilities()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemorySink;

    /// Lines longer than a window, a window ending inside a line, a last line without its
    /// newline: every line comes back once, whole, in blocks of whole lines.
    #[tokio::test]
    async fn range_lines_gives_whole_lines_a_window_at_a_time() {
        let sink = MemorySink::new();
        let job = JobId::new();
        let text = "a\nbb\n".to_owned() + &"c".repeat(25) + "\nddd\n\neee";
        let key = sink
            .put_aux(&job, "x.jsonl", text.clone().into_bytes())
            .await
            .unwrap();
        for window in [1, 3, 7, 64] {
            let mut lines = RangeLines::new(&sink, key.clone(), window);
            let mut got = Vec::new();
            while let Some(block) = lines.next_block().await.unwrap() {
                assert!(
                    block.ends_with(b"\n") || block.ends_with(b"eee"),
                    "a block ends inside a line: {:?}",
                    String::from_utf8_lossy(&block)
                );
                assert!(block.len() <= window + 26, "{} bytes", block.len());
                got.extend_from_slice(&block);
            }
            assert_eq!(String::from_utf8(got).unwrap(), text, "window {window}");
            assert!(lines.next_block().await.unwrap().is_none());
        }
        let mut none = RangeLines::new(&sink, format!("{job}/missing.jsonl"), 8);
        assert!(none.next_block().await.unwrap().is_none());
    }
}

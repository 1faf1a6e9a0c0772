//! [`ChunkIngestor`]: heading-aware RAG chunks of a job's documents, as `chunks.jsonl`.

use std::fmt;

use async_trait::async_trait;
use crawl_core::{
    DiffSide, DynSink, Error, ErrorKind, Ingestor, JobRecord, RangeLines, Result, RunDiff,
    StoredDoc,
};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::split::{split_front_matter, split_markdown};

/// Name of the chunk file written under the job's prefix.
pub const CHUNKS_FILE: &str = "chunks.jsonl";

/// Bytes of chunk lines gathered before each write to the sink's aux writer.
const WRITE_BYTES: usize = 64 << 10;

/// Default chunk size target, in bytes of markdown.
pub const DEFAULT_MAX_CHUNK_CHARS: usize = 1500;

/// One line of `chunks.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Chunk {
    /// Hex SHA-256 of url, content hash and chunk index: re-ingesting an unchanged page gives
    /// the same ids (an idempotent upsert in a vector store).
    pub id: String,
    /// The page URL.
    pub url: String,
    /// The page title, when it has one.
    pub title: Option<String>,
    /// Headings above the chunk, outermost first.
    pub heading_path: Vec<String>,
    /// The chunk's markdown.
    pub text: String,
    /// Hex SHA-256 of the page's markdown body.
    pub content_hash: String,
}

/// The stable id of chunk `index` of a page.
pub fn chunk_id(url: &str, content_hash: &str, index: usize) -> String {
    let mut h = Sha256::new();
    h.update(url.as_bytes());
    h.update(b"\n");
    h.update(content_hash.as_bytes());
    h.update(b"\n");
    h.update(index.to_string().as_bytes());
    hex::encode(h.finalize())
}

/// Chunks of one stored document file.
pub fn chunk_document(doc: &StoredDoc, file: &str, max_chars: usize) -> Vec<Chunk> {
    let parts = split_front_matter(file);
    split_markdown(parts.body, max_chars)
        .into_iter()
        .enumerate()
        .map(|(i, p)| Chunk {
            id: chunk_id(doc.url.as_str(), &doc.content_hash, i),
            url: doc.url.to_string(),
            title: parts.title.clone(),
            heading_path: p.heading_path,
            text: p.text,
            content_hash: doc.content_hash.clone(),
        })
        .collect()
}

/// Reads each stored document back from the sink, splits it into heading-aware chunks
/// (headings, then ~1,500-byte pieces at paragraph boundaries, never inside a code block)
/// and writes them as JSON lines to `{job-id}/chunks.jsonl` with
/// [`Sink::aux_writer`](crawl_core::Sink::aux_writer), streamed a page of documents at a
/// time. For a run of a source the file is the
/// source's, beside its documents (`{documents-job}/chunks.jsonl`): each run replaces the
/// chunks of the pages it added or changed and drops those of the pages it removed, so the
/// file always holds the chunks of the source's current documents. Deleting the job's
/// objects removes the file, so [`on_deleted`](Ingestor::on_deleted) has nothing to do.
#[derive(Debug, Clone)]
pub struct ChunkIngestor {
    sink: DynSink,
    max_chars: usize,
}

impl ChunkIngestor {
    /// Chunks documents of `sink` (the crawler's sink).
    pub fn new(sink: DynSink) -> Self {
        ChunkIngestor {
            sink,
            max_chars: DEFAULT_MAX_CHUNK_CHARS,
        }
    }

    /// Sets the chunk size target in bytes (default 1,500).
    #[must_use]
    pub fn max_chars(mut self, n: usize) -> Self {
        self.max_chars = n.max(1);
        self
    }
}

impl fmt::Display for ChunkIngestor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChunkIngestor({}, {} chars)", self.sink, self.max_chars)
    }
}

/// The first 16 bytes of the SHA-256 of `url`: which pages a diff touches, held in 16 bytes
/// a page (a false match, which would drop an untouched page's chunks, has odds of about
/// one in 2^128 per pair).
fn url_digest(url: &str) -> [u8; 16] {
    let d = Sha256::digest(url.as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&d[..16]);
    out
}

/// The sorted digests of the URLs `diff` upserts or deletes.
async fn touched_digests(diff: &RunDiff<'_>) -> Result<Vec<[u8; 16]>> {
    let mut touched = Vec::new();
    for side in [DiffSide::Upserts, DiffSide::Deletions] {
        let mut pages = diff.pages(side);
        while let Some(docs) = pages.next_page().await? {
            touched.extend(docs.iter().map(|d| url_digest(d.url.as_str())));
        }
    }
    touched.sort_unstable();
    touched.dedup();
    Ok(touched)
}

#[async_trait]
impl Ingestor for ChunkIngestor {
    async fn on_completed(&self, job: &JobRecord, diff: &RunDiff<'_>) -> Result<()> {
        let home = job.request.sync.as_ref().map_or(&job.id, |s| &s.documents);
        // Streamed a page of documents at a time: the file is never whole in memory.
        let mut out = self.sink.aux_writer(home, CHUNKS_FILE).await?;
        let mut buf = Vec::new();
        // The chunks of pages this diff does not touch stay as they were: the previous file
        // is read a window at a time, and the pages the diff touches are held as 16-byte
        // digests of their URLs (the diff's size, not the site's).
        if job.request.sync.is_some() {
            let key = crawl_core::keys::aux_key(home, CHUNKS_FILE)?;
            let mut old = RangeLines::new(self.sink.as_ref(), key, WRITE_BYTES);
            let mut block = old.next_block().await?;
            let touched = if block.is_some() {
                touched_digests(diff).await?
            } else {
                Vec::new()
            };
            while let Some(lines) = block {
                for line in lines.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                    let keep = serde_json::from_slice::<Chunk>(line)
                        .is_ok_and(|c| touched.binary_search(&url_digest(&c.url)).is_err());
                    if keep {
                        buf.extend_from_slice(line);
                        buf.push(b'\n');
                    }
                    if buf.len() >= WRITE_BYTES {
                        out.write(&buf).await?;
                        buf.clear();
                    }
                }
                block = old.next_block().await?;
            }
        }
        let mut pages = diff.pages(DiffSide::Upserts);
        while let Some(docs) = pages.next_page().await? {
            for doc in &docs {
                let bytes = self.sink.get(&doc.key).await?.ok_or_else(|| {
                    Error::new(
                        ErrorKind::NotFound,
                        format!("chunking: document {} is not in {}", doc.key, self.sink),
                    )
                })?;
                let file = String::from_utf8_lossy(&bytes);
                for chunk in chunk_document(doc, &file, self.max_chars) {
                    serde_json::to_writer(&mut buf, &chunk)
                        .map_err(|e| Error::new(ErrorKind::Internal, format!("chunk JSON: {e}")))?;
                    buf.push(b'\n');
                }
                if buf.len() >= WRITE_BYTES {
                    out.write(&buf).await?;
                    buf.clear();
                }
            }
        }
        if !buf.is_empty() {
            out.write(&buf).await?;
        }
        out.finish().await?;
        Ok(())
    }

    async fn on_deleted(&self, _job: &JobRecord) -> Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use async_trait::async_trait;
    use crawl_core::memory::MemorySink;
    use crawl_core::{CrawlRequest, JobId, Sink};

    use super::*;

    const FILE: &str = "---\nurl: \"https://x.test/guide\"\ntitle: \"Guide\"\ncontent_hash: \"sha256:h1\"\n---\n\n# Guide\n\nIntro.\n\n## Install\n\n```sh\ncargo install x\n```\n\nDone.\n";

    async fn setup() -> (Arc<MemorySink>, JobRecord, StoredDoc) {
        let sink = Arc::new(MemorySink::new());
        let job = JobId::new();
        let req = CrawlRequest::builder("https://x.test/").build().unwrap();
        let record = JobRecord::new(job.clone(), req, time::OffsetDateTime::UNIX_EPOCH);
        // A document file at a key of the job, as a sink would hold it.
        let key = sink
            .put_aux(&job, "guide.md", FILE.as_bytes().to_vec())
            .await
            .unwrap();
        let doc = StoredDoc::new("https://x.test/guide".parse().unwrap(), key, "h1".into());
        (sink, record, doc)
    }

    async fn chunks(sink: &MemorySink, job: &JobId) -> Vec<Chunk> {
        let bytes = sink
            .get(&format!("{job}/{CHUNKS_FILE}"))
            .await
            .unwrap()
            .unwrap();
        String::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// A job's diff read from its sink in pages of two: every page of the job is chunked.
    #[tokio::test]
    async fn chunks_every_page_of_a_diff_read_in_several_pages() {
        let sink = Arc::new(MemorySink::new());
        let job = JobId::new();
        let req = CrawlRequest::builder("https://x.test/").build().unwrap();
        let record = JobRecord::new(job.clone(), req, time::OffsetDateTime::UNIX_EPOCH);
        for i in 0..5 {
            let d = crawl_core::conformance::sample_doc(
                &job,
                &format!("https://x.test/p{i}"),
                Some("P"),
                &format!("# P{i}\n\nBody {i}.\n"),
            );
            sink.put(&d).await.unwrap();
        }
        let diff = RunDiff::of_job(sink.as_ref(), &job)
            .await
            .unwrap()
            .with_page_size(2);
        let mut pages = 0;
        let mut walk = diff.pages(DiffSide::Upserts);
        while walk.next_page().await.unwrap().is_some() {
            pages += 1;
        }
        assert!(pages >= 3, "{pages} pages");
        let ingestor = ChunkIngestor::new(Arc::clone(&sink) as crawl_core::DynSink);
        ingestor.on_completed(&record, &diff).await.unwrap();
        let urls: std::collections::BTreeSet<String> = chunks(&sink, &job)
            .await
            .into_iter()
            .map(|c| c.url)
            .collect();
        let want: std::collections::BTreeSet<String> =
            (0..5).map(|i| format!("https://x.test/p{i}")).collect();
        assert_eq!(urls, want);
    }

    /// Forwards to a [`MemorySink`], recording how auxiliary objects were written.
    #[derive(Debug, Default)]
    struct Recording {
        inner: MemorySink,
        put_aux: std::sync::Mutex<Vec<(String, usize)>>,
        writes: Arc<std::sync::Mutex<Vec<usize>>>,
        /// Keys read whole, and ranged reads: key and length asked.
        gets: std::sync::Mutex<Vec<String>>,
        ranges: std::sync::Mutex<Vec<(String, usize)>>,
    }

    impl fmt::Display for Recording {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("Recording")
        }
    }

    struct CountingWriter<'a> {
        inner: crawl_core::DynAuxWriter<'a>,
        writes: Arc<std::sync::Mutex<Vec<usize>>>,
    }

    #[async_trait]
    impl crawl_core::AuxWriter for CountingWriter<'_> {
        async fn write(&mut self, bytes: &[u8]) -> Result<()> {
            self.writes.lock().unwrap().push(bytes.len());
            self.inner.write(bytes).await
        }
        async fn finish(self: Box<Self>) -> Result<String> {
            self.inner.finish().await
        }
    }

    #[async_trait]
    impl Sink for Recording {
        async fn put(&self, doc: &crawl_core::Document) -> Result<StoredDoc> {
            self.inner.put(doc).await
        }
        async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
            self.gets.lock().unwrap().push(key.to_owned());
            self.inner.get(key).await
        }
        async fn get_range(&self, key: &str, offset: u64, len: usize) -> Result<Option<Vec<u8>>> {
            self.ranges.lock().unwrap().push((key.to_owned(), len));
            self.inner.get_range(key, offset, len).await
        }
        async fn list_page(
            &self,
            job: &JobId,
            after: Option<&str>,
            limit: usize,
        ) -> Result<crawl_core::DocPage> {
            self.inner.list_page(job, after, limit).await
        }
        async fn delete_job(&self, job: &JobId) -> Result<usize> {
            self.inner.delete_job(job).await
        }
        async fn put_aux(&self, job: &JobId, name: &str, bytes: Vec<u8>) -> Result<String> {
            self.put_aux
                .lock()
                .unwrap()
                .push((name.to_owned(), bytes.len()));
            self.inner.put_aux(job, name, bytes).await
        }
        async fn aux_writer<'a>(
            &'a self,
            job: &JobId,
            name: &str,
        ) -> Result<crawl_core::DynAuxWriter<'a>> {
            Ok(Box::new(CountingWriter {
                inner: self.inner.aux_writer(job, name).await?,
                writes: Arc::clone(&self.writes),
            }))
        }
    }

    /// `chunks.jsonl` goes to the sink through its aux writer, in writes of about 64 KiB
    /// (never the whole file at once), and holds the same bytes as the chunks of every
    /// document, line by line.
    #[tokio::test]
    async fn chunks_are_streamed_to_the_sink_in_bounded_writes() {
        let sink = Arc::new(Recording::default());
        let job = JobId::new();
        let req = CrawlRequest::builder("https://x.test/").build().unwrap();
        let record = JobRecord::new(job.clone(), req, time::OffsetDateTime::UNIX_EPOCH);
        let para = "A sentence of the page that says what the office does. ".repeat(20);
        for i in 0..300 {
            let body = format!("# P{i}\n\n{para}\n\n## More\n\n{para}\n");
            let d = crawl_core::conformance::sample_doc(
                &job,
                &format!("https://x.test/p{i:03}"),
                Some(&format!("P{i}")),
                &body,
            );
            sink.put(&d).await.unwrap();
        }
        let diff = RunDiff::of_job(sink.as_ref(), &job).await.unwrap();
        let ingestor = ChunkIngestor::new(Arc::clone(&sink) as crawl_core::DynSink);
        ingestor.on_completed(&record, &diff).await.unwrap();

        let mut want = Vec::new();
        for d in sink.list(&job).await.unwrap() {
            let file = String::from_utf8(sink.get(&d.key).await.unwrap().unwrap()).unwrap();
            for c in chunk_document(&d, &file, DEFAULT_MAX_CHUNK_CHARS) {
                want.extend_from_slice(&serde_json::to_vec(&c).unwrap());
                want.push(b'\n');
            }
        }
        let got = sink
            .get(&format!("{job}/{CHUNKS_FILE}"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            got, want,
            "chunks.jsonl differs from the chunks of the documents"
        );
        assert!(want.len() > 4 * WRITE_BYTES, "{} bytes only", want.len());
        let direct = sink.put_aux.lock().unwrap().clone();
        assert!(
            !direct.iter().any(|(n, _)| n == CHUNKS_FILE),
            "chunks.jsonl was put whole: {direct:?}"
        );
        let writes = sink.writes.lock().unwrap().clone();
        assert_eq!(writes.iter().sum::<usize>(), want.len());
        let largest = writes.iter().copied().max().unwrap_or(0);
        assert!(
            largest < WRITE_BYTES + 16 * 1024,
            "a write of {largest} bytes ({} writes)",
            writes.len()
        );
    }

    /// A run of a source keeps the chunks of the pages it did not touch by reading the
    /// previous `chunks.jsonl` a window at a time (it read the file whole), and the file it
    /// writes holds exactly the chunks of the source's current documents.
    #[tokio::test]
    async fn a_source_run_reads_the_previous_chunks_in_windows() {
        let sink = Arc::new(Recording::default());
        let home = JobId::new();
        let source = crawl_core::SourceId::derive("a", &"https://x.test/".parse().unwrap());
        let mut req = CrawlRequest::builder("https://x.test/").build().unwrap();
        req.sync = Some(crawl_core::SyncTarget::new(source, home.clone()));
        let para = "A sentence of the page that says what the office does. ".repeat(20);
        let mut docs = Vec::new();
        for i in 0..300 {
            let body = format!("# P{i}\n\n{para}\n\n## More\n\n{para}\n");
            let d = crawl_core::conformance::sample_doc(
                &home,
                &format!("https://x.test/p{i:03}"),
                Some(&format!("P{i}")),
                &body,
            );
            docs.push(sink.put(&d).await.unwrap());
        }
        let first = JobRecord::new(home.clone(), req.clone(), time::OffsetDateTime::UNIX_EPOCH);
        let ingestor = ChunkIngestor::new(Arc::clone(&sink) as crawl_core::DynSink);
        ingestor
            .on_completed(&first, &RunDiff::all_added(docs.clone()))
            .await
            .unwrap();
        let key = format!("{home}/{CHUNKS_FILE}");
        let before = sink.get(&key).await.unwrap().unwrap().len();
        assert!(before > 4 * WRITE_BYTES, "{before} bytes only");

        // The next run changed p000 and removed p001.
        let changed = crawl_core::conformance::sample_doc(
            &home,
            "https://x.test/p000",
            Some("P0"),
            "# P0\n\nThe second version of the page.\n",
        );
        let changed = sink.put(&changed).await.unwrap();
        let removed = docs.remove(1);
        docs[0] = changed.clone();
        let run = JobRecord::new(JobId::new(), req, time::OffsetDateTime::UNIX_EPOCH);
        let diff = RunDiff::from_docs(crawl_core::DiffDocs::new(
            crawl_core::ChangeCounts::default(),
            vec![changed],
            vec![removed],
        ));
        sink.gets.lock().unwrap().clear();
        sink.ranges.lock().unwrap().clear();
        ingestor.on_completed(&run, &diff).await.unwrap();

        let whole: Vec<String> = sink.gets.lock().unwrap().clone();
        assert!(!whole.contains(&key), "chunks.jsonl was read whole");
        let ranges: Vec<usize> = sink
            .ranges
            .lock()
            .unwrap()
            .iter()
            .filter(|(k, _)| *k == key)
            .map(|(_, len)| *len)
            .collect();
        assert!(ranges.len() > 4, "{ranges:?}");
        assert!(ranges.iter().all(|len| *len <= WRITE_BYTES), "{ranges:?}");

        let mut want = Vec::new();
        for d in &docs {
            let file = String::from_utf8(sink.get(&d.key).await.unwrap().unwrap()).unwrap();
            for c in chunk_document(d, &file, DEFAULT_MAX_CHUNK_CHARS) {
                want.push(serde_json::to_string(&c).unwrap());
            }
        }
        let bytes = sink.get(&key).await.unwrap().unwrap();
        let mut got: Vec<String> = String::from_utf8(bytes)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        got.sort();
        want.sort();
        assert_eq!(got.len(), want.len());
        assert!(
            got == want,
            "chunks.jsonl differs from the source's documents"
        );
    }

    #[tokio::test]
    async fn writes_heading_aware_chunks_with_stable_ids() {
        let (sink, record, doc) = setup().await;
        let ingestor = ChunkIngestor::new(Arc::clone(&sink) as crawl_core::DynSink);
        ingestor
            .on_completed(&record, &RunDiff::all_added(vec![doc.clone()]))
            .await
            .unwrap();
        let first = chunks(&sink, &record.id).await;
        assert_eq!(first.len(), 2, "{first:#?}");
        assert_eq!(first[0].heading_path, vec!["Guide".to_owned()]);
        assert_eq!(
            first[1].heading_path,
            vec!["Guide".to_owned(), "Install".to_owned()]
        );
        assert!(first[1].text.contains("```sh\ncargo install x\n```"));
        assert_eq!(first[0].title.as_deref(), Some("Guide"));
        assert_eq!(first[0].url, "https://x.test/guide");
        assert_eq!(first[0].content_hash, "h1");
        assert_eq!(first[1].id, chunk_id("https://x.test/guide", "h1", 1));
        assert_ne!(first[0].id, first[1].id);
        let line = serde_json::to_value(&first[0]).unwrap();
        let mut keys: Vec<&str> = line
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["contentHash", "headingPath", "id", "text", "title", "url"]
        );

        // Re-ingesting the unchanged page is an idempotent upsert: same ids, same file.
        ingestor
            .on_completed(&record, &RunDiff::all_added(vec![doc]))
            .await
            .unwrap();
        assert_eq!(chunks(&sink, &record.id).await, first);
        ingestor.on_deleted(&record).await.unwrap();
        ingestor.on_deleted(&record).await.unwrap();
        assert_eq!(sink.delete_job(&record.id).await.unwrap(), 0);
        assert!(
            sink.keys().is_empty(),
            "delete_job removes chunks.jsonl too"
        );
    }

    #[tokio::test]
    async fn a_run_of_a_source_replaces_changed_and_drops_removed_chunks() {
        let sink = Arc::new(MemorySink::new());
        let home = JobId::new();
        let source = crawl_core::SourceId::derive("a", &"https://x.test/".parse().unwrap());
        let file = |title: &str, body: &str| {
            format!(
                "---\nurl: \"https://x.test/\"\ntitle: \"{title}\"\n---\n\n# {title}\n\n{body}\n"
            )
        };
        let put = |name: &'static str, text: String| {
            let sink = Arc::clone(&sink);
            let home = home.clone();
            async move { sink.put_aux(&home, name, text.into_bytes()).await.unwrap() }
        };
        let doc = |path: &str, key: String, hash: &str| {
            StoredDoc::new(
                format!("https://x.test/{path}").parse().unwrap(),
                key,
                hash.into(),
            )
        };
        let a = doc("a", put("a.md", file("A", "First version.")).await, "h1");
        let b = doc("b", put("b.md", file("B", "Stays.")).await, "h2");
        let c = doc("c", put("c.md", file("C", "Will go.")).await, "h3");
        let mut req = CrawlRequest::builder("https://x.test/").build().unwrap();
        req.sync = Some(crawl_core::SyncTarget::new(source, home.clone()));
        let first = JobRecord::new(home.clone(), req.clone(), time::OffsetDateTime::UNIX_EPOCH);
        let ingestor = ChunkIngestor::new(Arc::clone(&sink) as crawl_core::DynSink);
        ingestor
            .on_completed(
                &first,
                &RunDiff::all_added(vec![a.clone(), b.clone(), c.clone()]),
            )
            .await
            .unwrap();
        let urls = |chunks: &[Chunk]| {
            chunks
                .iter()
                .map(|c| (c.url.clone(), c.content_hash.clone()))
                .collect::<std::collections::BTreeSet<_>>()
        };
        assert_eq!(urls(&chunks(&sink, &home).await).len(), 3);

        // A later run (its own job id) changed /a and removed /c.
        let key = put("a.md", file("A", "Second version.")).await;
        let a2 = doc("a", key, "h4");
        let run = JobRecord::new(JobId::new(), req, time::OffsetDateTime::UNIX_EPOCH);
        let diff = RunDiff::from_docs(crawl_core::DiffDocs::new(
            crawl_core::ChangeCounts::default(),
            vec![a2],
            vec![c],
        ));
        ingestor.on_completed(&run, &diff).await.unwrap();
        let after = chunks(&sink, &home).await;
        assert_eq!(
            urls(&after),
            [
                ("https://x.test/a".to_owned(), "h4".to_owned()),
                ("https://x.test/b".to_owned(), "h2".to_owned()),
            ]
            .into(),
            "{after:#?}"
        );
        assert!(after.iter().any(|c| c.text.contains("Second version.")));
        // A second delivery of the same diff changes nothing.
        ingestor.on_completed(&run, &diff).await.unwrap();
        assert_eq!(chunks(&sink, &home).await, after);
    }

    #[tokio::test]
    async fn a_missing_document_is_an_error() {
        let (sink, record, mut doc) = setup().await;
        doc.key = format!("{}/gone.md", record.id);
        let e = ChunkIngestor::new(sink)
            .on_completed(&record, &RunDiff::all_added(vec![doc]))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
    }
}

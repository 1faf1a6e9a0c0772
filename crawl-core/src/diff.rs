//! What a completed job hands to the knowledge base: its [`RunDiff`], read a page at a time.
//!
//! A diff holds its counters and where its documents are, never the documents themselves
//! (unless it was built from a small list, [`RunDiff::all_added`]): the upserts of a plain
//! crawl are the job's documents, listed from the sink with
//! [`Sink::list_page`]; those of a run of a source are the lines of
//! its `{run}/changes.jsonl`. An ingestor walks them with [`RunDiff::pages`], so the memory
//! a hand-off takes is one page of entries, whatever the size of the site, and it may walk
//! them more than once (the webhook signs its body in a first pass and sends it in a
//! second).

use std::sync::Arc;

use crate::error::{Error, ErrorKind, Result};
use crate::job::{ChangeCounts, JobId};
use crate::page::StoredDoc;
use crate::source::{ChangeLine, PageChange};
use crate::traits::{RangeLines, Sink, LIST_PAGE};

/// A diff's documents, all in memory: what [`RunDiff::collect`] returns, and what a small
/// diff is built from ([`RunDiff::from_docs`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DiffDocs {
    /// Counters.
    pub counts: ChangeCounts,
    /// Documents added or changed.
    pub upserts: Vec<StoredDoc>,
    /// Documents removed (their keys are gone from the sink).
    pub deletions: Vec<StoredDoc>,
}

impl DiffDocs {
    /// The documents of a diff with these counters.
    pub fn new(counts: ChangeCounts, upserts: Vec<StoredDoc>, deletions: Vec<StoredDoc>) -> Self {
        DiffDocs {
            counts,
            upserts,
            deletions,
        }
    }
}

/// Which documents of a diff: those to upsert or those to delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DiffSide {
    /// Documents added or changed.
    Upserts,
    /// Documents removed.
    Deletions,
}

/// What a run of a source changed, or every document of a plain crawl: the documents to
/// hand to the knowledge base, read a page at a time ([`pages`](Self::pages)). Cheap to
/// clone; walking it twice gives the same documents in the same order.
#[derive(Debug, Clone)]
pub struct RunDiff<'a> {
    counts: ChangeCounts,
    from: From<'a>,
    page: usize,
}

#[derive(Debug, Clone)]
enum From<'a> {
    /// A list in memory.
    Docs(Arc<DiffDocs>),
    /// Every document of a job of this sink, added.
    Job { sink: &'a dyn Sink, job: JobId },
    /// The lines of a run's `changes.jsonl` (named `name`).
    Changes { name: Arc<str>, bytes: Arc<[u8]> },
    /// The lines of a run's `changes.jsonl` at `key` of this sink, read a window at a time.
    ChangesIn { sink: &'a dyn Sink, key: Arc<str> },
}

/// Bytes of each ranged read of a `changes.jsonl` in a sink ([`RunDiff::of_changes_in`]).
pub const CHANGES_WINDOW: usize = 64 << 10;

impl Default for RunDiff<'_> {
    fn default() -> Self {
        RunDiff::from_docs(DiffDocs::default())
    }
}

impl RunDiff<'static> {
    /// The diff of a crawl that is not a run of a source, from a list in memory: every
    /// document added. For a small diff (tests, a hand-made hand-off); a job's diff is read
    /// from its sink ([`of_job`](RunDiff::of_job)).
    pub fn all_added(docs: Vec<StoredDoc>) -> Self {
        let counts = ChangeCounts::new(docs.len() as u64, 0, 0, 0);
        RunDiff::from_docs(DiffDocs::new(counts, docs, Vec::new()))
    }

    /// A diff of these documents, in memory.
    pub fn from_docs(docs: DiffDocs) -> Self {
        RunDiff {
            counts: docs.counts,
            from: From::Docs(Arc::new(docs)),
            page: LIST_PAGE,
        }
    }

    /// The diff a run of a source wrote as `changes.jsonl` (`name` names it in errors):
    /// its added and changed pages upserted, its removed ones deleted, with `counts`. The
    /// lines are checked here, and parsed a page at a time as the diff is walked.
    pub fn of_changes(name: &str, bytes: Vec<u8>, counts: ChangeCounts) -> Result<Self> {
        let bytes: Arc<[u8]> = bytes.into();
        let diff = RunDiff {
            counts,
            from: From::Changes {
                name: name.into(),
                bytes,
            },
            page: LIST_PAGE,
        };
        // A malformed line fails the hand-off before anything is delivered (read a page at
        // a time, as the diff will be).
        let mut at = 0;
        while changes_page(&diff, DiffSide::Upserts, &mut at, LIST_PAGE)?.is_some() {}
        Ok(diff)
    }
}

impl<'a> RunDiff<'a> {
    /// The diff of a plain crawl (not a run of a source): every document `job` stored in
    /// `sink`, added, listed with [`Sink::list_page`]. Counts the documents in one pass
    /// over the listing.
    pub async fn of_job(sink: &'a dyn Sink, job: &JobId) -> Result<Self> {
        let mut added = 0u64;
        crate::traits::for_each_doc_page(sink, job, LIST_PAGE, |docs| {
            added += docs.len() as u64;
            async { Ok(()) }
        })
        .await?;
        Ok(RunDiff {
            counts: ChangeCounts::new(added, 0, 0, 0),
            from: From::Job {
                sink,
                job: job.clone(),
            },
            page: LIST_PAGE,
        })
    }

    /// The diff a run of a source wrote as `changes.jsonl` at `key` of `sink`, read with
    /// [`Sink::get_range`] a window of [`CHANGES_WINDOW`] bytes at a time, never whole: as
    /// [`of_changes`](RunDiff::of_changes), its lines are checked here (one pass), and
    /// parsed a page at a time as the diff is walked. A missing file is `NotFound`.
    pub async fn of_changes_in(
        sink: &'a dyn Sink,
        key: &str,
        counts: ChangeCounts,
    ) -> Result<Self> {
        if sink.get_range(key, 0, 1).await?.is_none() {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!("no {key} in {sink}"),
            ));
        }
        let diff = RunDiff {
            counts,
            from: From::ChangesIn {
                sink,
                key: key.into(),
            },
            page: LIST_PAGE,
        };
        let mut at = 0;
        while changes_page_in(sink, key, DiffSide::Upserts, &mut at, LIST_PAGE)
            .await?
            .is_some()
        {}
        Ok(diff)
    }

    /// Reads at most `n` documents a page (at least 1; default [`LIST_PAGE`]).
    #[must_use]
    pub fn with_page_size(mut self, n: usize) -> Self {
        self.page = n.max(1);
        self
    }

    /// Documents per page.
    pub fn page_size(&self) -> usize {
        self.page
    }

    /// The diff's counters.
    pub fn counts(&self) -> ChangeCounts {
        self.counts
    }

    /// Walks the documents of one side, a page at a time, from the start.
    pub fn pages(&self, side: DiffSide) -> DiffPages<'_, 'a> {
        DiffPages {
            diff: self,
            side,
            at: Cursor::Start,
        }
    }

    /// Every document of the diff, in memory: for tests and small diffs only (its memory
    /// grows with the diff).
    pub async fn collect(&self) -> Result<DiffDocs> {
        let mut out = DiffDocs {
            counts: self.counts,
            ..DiffDocs::default()
        };
        for (side, into) in [
            (DiffSide::Upserts, &mut out.upserts),
            (DiffSide::Deletions, &mut out.deletions),
        ] {
            let mut pages = self.pages(side);
            while let Some(docs) = pages.next_page().await? {
                into.extend(docs);
            }
        }
        Ok(out)
    }
}

/// A walk over one side of a [`RunDiff`] ([`RunDiff::pages`]).
#[derive(Debug)]
pub struct DiffPages<'d, 'a> {
    diff: &'d RunDiff<'a>,
    side: DiffSide,
    at: Cursor,
}

#[derive(Debug)]
enum Cursor {
    Start,
    After(String),
    Offset(usize),
    Done,
}

impl DiffPages<'_, '_> {
    /// The next page of documents (never an empty one), `None` after the last.
    pub async fn next_page(&mut self) -> Result<Option<Vec<StoredDoc>>> {
        let limit = self.diff.page;
        loop {
            match (&self.diff.from, &self.at) {
                (_, Cursor::Done) => return Ok(None),
                (From::Docs(d), at) => {
                    let all = match self.side {
                        DiffSide::Upserts => &d.upserts,
                        DiffSide::Deletions => &d.deletions,
                    };
                    let start = match at {
                        Cursor::Offset(i) => *i,
                        _ => 0,
                    };
                    let end = all.len().min(start.saturating_add(limit));
                    self.at = if end >= all.len() {
                        Cursor::Done
                    } else {
                        Cursor::Offset(end)
                    };
                    if end > start {
                        return Ok(Some(all[start..end].to_vec()));
                    }
                }
                (From::Job { .. }, _) if self.side == DiffSide::Deletions => {
                    self.at = Cursor::Done;
                }
                (From::Job { sink, job }, at) => {
                    let after = match at {
                        Cursor::After(a) => Some(a.as_str()),
                        _ => None,
                    };
                    let page = sink.list_page(job, after, limit).await?;
                    self.at = match page.next {
                        Some(n) => Cursor::After(n),
                        None => Cursor::Done,
                    };
                    if !page.docs.is_empty() {
                        return Ok(Some(page.docs));
                    }
                }
                (From::ChangesIn { sink, key }, at) => {
                    let mut offset = match at {
                        Cursor::Offset(i) => *i as u64,
                        _ => 0,
                    };
                    let docs = changes_page_in(*sink, key, self.side, &mut offset, limit).await?;
                    self.at = Cursor::Offset(usize::try_from(offset).unwrap_or(usize::MAX));
                    match docs {
                        None => self.at = Cursor::Done,
                        Some(docs) if !docs.is_empty() => return Ok(Some(docs)),
                        Some(_) => {}
                    }
                }
                (From::Changes { .. }, at) => {
                    let mut offset = match at {
                        Cursor::Offset(i) => *i,
                        _ => 0,
                    };
                    let docs = changes_page(self.diff, self.side, &mut offset, limit)?;
                    self.at = Cursor::Offset(offset);
                    match docs {
                        None => self.at = Cursor::Done,
                        Some(docs) if !docs.is_empty() => return Ok(Some(docs)),
                        Some(_) => {}
                    }
                }
            }
        }
    }
}

/// At most `limit` documents of `side` from the `changes.jsonl` lines at byte `offset` on
/// (moved past the lines read); `None` at the end of the file.
fn changes_page(
    diff: &RunDiff<'_>,
    side: DiffSide,
    offset: &mut usize,
    limit: usize,
) -> Result<Option<Vec<StoredDoc>>> {
    let From::Changes { name, bytes } = &diff.from else {
        return Ok(None);
    };
    if *offset >= bytes.len() {
        return Ok(None);
    }
    let mut docs = Vec::new();
    while *offset < bytes.len() && docs.len() < limit {
        let rest = &bytes[*offset..];
        let len = rest.iter().position(|b| *b == b'\n').unwrap_or(rest.len());
        let line = &rest[..len];
        *offset += len + 1;
        if line.is_empty() {
            continue;
        }
        docs.extend(change_doc(name, line, side)?);
    }
    Ok(Some(docs))
}

/// The document of one `changes.jsonl` line, if it belongs to `side`.
fn change_doc(name: &str, line: &[u8], side: DiffSide) -> Result<Option<StoredDoc>> {
    let l: ChangeLine = serde_json::from_slice(line)
        .map_err(|e| Error::new(ErrorKind::Storage, format!("{name}: malformed line ({e})")))?;
    let wanted = match l.change {
        PageChange::Added | PageChange::Changed => side == DiffSide::Upserts,
        PageChange::Removed => side == DiffSide::Deletions,
        PageChange::Unchanged | PageChange::Pending => false,
    };
    Ok(wanted.then(|| StoredDoc::new(l.url, l.key, l.content_hash)))
}

/// As [`changes_page`], from the `changes.jsonl` at `key` of `sink`, read in ranged windows
/// of [`CHANGES_WINDOW`] bytes from `offset` (the start of the next unread line).
async fn changes_page_in(
    sink: &dyn Sink,
    key: &str,
    side: DiffSide,
    offset: &mut u64,
    limit: usize,
) -> Result<Option<Vec<StoredDoc>>> {
    let mut lines = RangeLines::at(sink, key, CHANGES_WINDOW, *offset);
    let mut docs = Vec::new();
    let mut first = true;
    'read: while docs.len() < limit {
        let Some(block) = lines.next_block().await? else {
            if first {
                return Ok(None);
            }
            break;
        };
        first = false;
        for line in block.split_inclusive(|b| *b == b'\n') {
            if docs.len() >= limit {
                break 'read;
            }
            *offset += line.len() as u64;
            let text = line.strip_suffix(b"\n").unwrap_or(line);
            if !text.iter().all(u8::is_ascii_whitespace) {
                docs.extend(change_doc(key, text, side)?);
            }
        }
    }
    Ok(Some(docs))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemorySink;

    fn doc(i: usize) -> StoredDoc {
        StoredDoc::new(
            format!("https://x.test/p{i}").parse().unwrap(),
            format!("k{i}"),
            format!("h{i}"),
        )
    }

    async fn walk(diff: &RunDiff<'_>, side: DiffSide) -> Vec<Vec<StoredDoc>> {
        let mut out = Vec::new();
        let mut pages = diff.pages(side);
        while let Some(p) = pages.next_page().await.unwrap() {
            assert!(!p.is_empty() && p.len() <= diff.page_size());
            out.push(p);
        }
        out
    }

    #[tokio::test]
    async fn a_diff_in_memory_walks_in_pages_and_again() {
        let docs: Vec<_> = (0..5).map(doc).collect();
        let diff = RunDiff::all_added(docs.clone()).with_page_size(2);
        let pages = walk(&diff, DiffSide::Upserts).await;
        assert_eq!(pages.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2, 1]);
        assert_eq!(pages.concat(), docs);
        assert_eq!(walk(&diff, DiffSide::Upserts).await.concat(), docs);
        assert!(walk(&diff, DiffSide::Deletions).await.is_empty());
        assert_eq!(diff.counts().added, 5);
        assert_eq!(diff.collect().await.unwrap().upserts, docs);
    }

    #[tokio::test]
    async fn a_jobs_diff_is_listed_from_its_sink_a_page_at_a_time() {
        let sink = MemorySink::new();
        let job = JobId::new();
        let mut stored = Vec::new();
        for i in 0..7 {
            let d = crate::conformance::sample_doc(
                &job,
                &format!("https://x.test/p{i}"),
                Some("P"),
                "# P\n",
            );
            stored.push(sink.put(&d).await.unwrap());
        }
        let diff = RunDiff::of_job(&sink, &job)
            .await
            .unwrap()
            .with_page_size(3);
        assert_eq!(diff.counts().added, 7);
        let pages = walk(&diff, DiffSide::Upserts).await;
        assert!(pages.len() >= 3, "7 documents in pages of 3: {pages:?}");
        let mut got = pages.concat();
        got.sort_by(|a, b| a.url.cmp(&b.url));
        stored.sort_by(|a, b| a.url.cmp(&b.url));
        assert_eq!(got, stored);
        assert!(walk(&diff, DiffSide::Deletions).await.is_empty());
    }

    /// Forwards to a [`MemorySink`], recording each read: whole (`get`) or ranged.
    #[derive(Debug, Default)]
    struct Reads {
        inner: MemorySink,
        whole: std::sync::Mutex<Vec<String>>,
        ranged: std::sync::Mutex<Vec<usize>>,
    }

    impl std::fmt::Display for Reads {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("Reads")
        }
    }

    #[async_trait::async_trait]
    impl Sink for Reads {
        async fn put(&self, doc: &crate::Document) -> Result<StoredDoc> {
            self.inner.put(doc).await
        }
        async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
            self.whole.lock().unwrap().push(key.to_owned());
            self.inner.get(key).await
        }
        async fn get_range(&self, key: &str, offset: u64, len: usize) -> Result<Option<Vec<u8>>> {
            let got = self.inner.get_range(key, offset, len).await?;
            self.ranged
                .lock()
                .unwrap()
                .push(got.as_ref().map_or(0, Vec::len));
            Ok(got)
        }
        async fn list_page(
            &self,
            job: &JobId,
            after: Option<&str>,
            limit: usize,
        ) -> Result<crate::DocPage> {
            self.inner.list_page(job, after, limit).await
        }
        async fn delete_job(&self, job: &JobId) -> Result<usize> {
            self.inner.delete_job(job).await
        }
        async fn put_aux(&self, job: &JobId, name: &str, bytes: Vec<u8>) -> Result<String> {
            self.inner.put_aux(job, name, bytes).await
        }
    }

    /// The hand-off of a run of a source reads its `changes.jsonl` in ranged windows,
    /// never whole, and gives the same pages as the file read whole (lines cut across
    /// windows, a last line without its newline).
    #[tokio::test]
    async fn a_runs_stored_diff_streams_its_changes_jsonl_in_windows() {
        let sink = Reads::default();
        let docs = JobId::new();
        let mut req = crate::CrawlRequest::builder("https://x.test/")
            .build()
            .unwrap();
        req.sync = Some(crate::source::SyncTarget::new(
            crate::source::SourceId::derive("t", &"https://x.test/".parse().unwrap()),
            docs,
        ));
        let run = JobId::new();
        let record = crate::JobRecord::new(run.clone(), req, time::OffsetDateTime::UNIX_EPOCH);
        let mut bytes = String::new();
        for i in 0..3000 {
            let change = ["added", "changed", "removed", "unchanged"][i % 4];
            bytes.push_str(&format!(
                "{{\"url\":\"https://x.test/p{i}\",\"key\":\"{run}/x.test/p{i}.md\",\"change\":\"{change}\",\"contentHash\":\"sha256:{i:064}\"}}\n"
            ));
        }
        bytes.pop();
        assert!(
            bytes.len() > 4 * CHANGES_WINDOW,
            "{} bytes only",
            bytes.len()
        );
        let key = sink
            .put_aux(&run, ChangeLine::FILE, bytes.clone().into_bytes())
            .await
            .unwrap();
        let whole = RunDiff::of_changes(&key, bytes.into_bytes(), ChangeCounts::default())
            .unwrap()
            .with_page_size(7);
        let diff = crate::engine::stored_diff(&sink, &record)
            .await
            .unwrap()
            .with_page_size(7);
        for side in [DiffSide::Upserts, DiffSide::Deletions] {
            assert_eq!(
                walk(&diff, side).await,
                walk(&whole, side).await,
                "{side:?}"
            );
        }
        assert!(
            sink.whole.lock().unwrap().is_empty(),
            "changes.jsonl was read whole: {:?}",
            sink.whole.lock().unwrap()
        );
        let ranged = sink.ranged.lock().unwrap().clone();
        assert!(ranged.iter().all(|n| *n <= CHANGES_WINDOW), "{ranged:?}");
    }

    #[tokio::test]
    async fn a_runs_diff_reads_its_changes_lines_a_page_at_a_time() {
        let line = |i: usize, change: &str| {
            format!(
                "{{\"url\":\"https://x.test/p{i}\",\"key\":\"k{i}\",\"change\":\"{change}\",\"contentHash\":\"h{i}\"}}\n"
            )
        };
        let mut bytes = String::new();
        for (i, c) in [
            "added",
            "removed",
            "changed",
            "unchanged",
            "added",
            "removed",
        ]
        .iter()
        .enumerate()
        {
            bytes.push_str(&line(i, c));
        }
        let diff = RunDiff::of_changes(
            "r/changes.jsonl",
            bytes.into_bytes(),
            ChangeCounts::default(),
        )
        .unwrap()
        .with_page_size(1);
        let up = walk(&diff, DiffSide::Upserts).await;
        assert_eq!(up.len(), 3);
        assert_eq!(up.concat(), vec![doc(0), doc(2), doc(4)]);
        assert_eq!(
            walk(&diff, DiffSide::Deletions).await.concat(),
            vec![doc(1), doc(5)]
        );

        let err = RunDiff::of_changes(
            "r/changes.jsonl",
            b"{\"url\":1}\n".to_vec(),
            ChangeCounts::default(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("r/changes.jsonl"), "{err}");
    }
}

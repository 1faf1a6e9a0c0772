//! Filesystem sink: one markdown file per page, written atomically (temp file + rename), and
//! an append-only per-job manifest (`manifest.jsonl`, one `{url, key, content_hash}` line per
//! new or changed document).
//!
//! The manifest on disk is the record of which URL holds which key; the url → key index the
//! sink consults on each put is on disk too (`{root}/.fs-index/{job}/`, see [`index`]), so
//! a crawl's memory does not grow with its pages.

mod index;

use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use crawl_core::keys::{aux_key, choose_key_by, document_keys, job_prefix};
use crawl_core::{
    AuxWriter, Capabilities, Document, DynAuxWriter, Error, ErrorKind, JobId, Result, Sink,
    StoredDoc,
};

#[derive(Debug, thiserror::Error)]
enum FsError {
    #[error("{op} {path}: {source}")]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("key '{0}' is not a relative path of safe segments")]
    BadKey(String),
    #[error("index: {0}")]
    Index(String),
}

impl From<FsError> for Error {
    fn from(e: FsError) -> Error {
        let kind = match &e {
            FsError::Io { .. } | FsError::Index(_) => ErrorKind::Storage,
            FsError::BadKey(_) => ErrorKind::InvalidInput,
        };
        let temporary = matches!(&e, FsError::Io { source, .. } if matches!(source.kind(),
            std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut));
        Error::new(kind, e.to_string())
            .with_backend("FsSink")
            .with_temporary(temporary)
    }
}

fn io<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> FsError + 'a {
    move |source| FsError::Io {
        op,
        path: path.to_owned(),
        source,
    }
}

/// One line of `manifest.jsonl`: a document as stored, or (`removed`) a tombstone saying
/// the URL's document was removed.
#[derive(serde::Serialize, serde::Deserialize)]
struct ManifestLine {
    #[serde(flatten)]
    doc: StoredDoc,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    removed: bool,
}

/// Writes documents under a root folder: `ROOT/{job-id}/{domain}/{page-title}.md`.
#[derive(Debug, Clone)]
pub struct FsSink {
    root: PathBuf,
    /// Per-job lock over the index, held while a put chooses and records its key; `true`
    /// once the job's index is known to exist in this process.
    indexes: Arc<Mutex<HashMap<JobId, Arc<tokio::sync::Mutex<bool>>>>>,
    /// Per-job gate: every write holds it shared until its blocking file operations end (even
    /// when the task that started it is aborted), and `delete_job` takes it exclusively, so
    /// no write of a cancelled crawl lands after its job was deleted.
    gates: Arc<Mutex<HashMap<JobId, Arc<tokio::sync::RwLock<()>>>>>,
}

impl FsSink {
    /// A sink writing under `root` (created when missing).
    pub fn new(root: impl Into<PathBuf>) -> Result<Self> {
        let root = root.into();
        std::fs::create_dir_all(&root).map_err(io("create", &root))?;
        Ok(FsSink {
            root,
            indexes: Arc::default(),
            gates: Arc::default(),
        })
    }

    /// The root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path_of(&self, key: &str) -> std::result::Result<PathBuf, FsError> {
        let safe = !key.is_empty()
            && !key.contains(['\\', '\0', ':'])
            && key
                .split('/')
                .all(|seg| !seg.is_empty() && !seg.starts_with('.'));
        if safe {
            Ok(self.root.join(key))
        } else {
            Err(FsError::BadKey(key.chars().take(200).collect()))
        }
    }

    fn gate(&self, job: &JobId) -> Result<Arc<tokio::sync::RwLock<()>>> {
        let mut g = self
            .gates
            .lock()
            .map_err(|_| Error::new(ErrorKind::Internal, "FsSink lock poisoned"))?;
        Ok(Arc::clone(g.entry(job.clone()).or_default()))
    }

    fn manifest_path(&self, job: &JobId) -> PathBuf {
        self.root.join(job.as_str()).join("manifest.jsonl")
    }

    /// The job's index, locked, built from its manifest if it has none yet.
    async fn index(
        &self,
        job: &JobId,
    ) -> Result<(index::Index, tokio::sync::OwnedMutexGuard<bool>)> {
        let lock = {
            let mut map = self
                .indexes
                .lock()
                .map_err(|_| Error::new(ErrorKind::Internal, "FsSink lock poisoned"))?;
            Arc::clone(map.entry(job.clone()).or_default())
        };
        let mut ready = lock.lock_owned().await;
        let idx = index::Index::new(&self.root, job);
        if !*ready {
            let (i, m) = (idx.clone(), self.manifest_path(job));
            blocking(move || i.ensure(&m)).await?;
            *ready = true;
        }
        Ok((idx, ready))
    }
}

/// Calls `each` for every entry of a job's `manifest.jsonl`, in order, reading it line by
/// line (a missing file has no entries); `true` marks a removal.
fn read_manifest(
    path: &Path,
    mut each: impl FnMut(StoredDoc, bool),
) -> std::result::Result<(), FsError> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io("open", path)(e)),
    };
    let mut reader = std::io::BufReader::new(file);
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).map_err(io("read", path))? == 0 {
            return Ok(());
        }
        // A torn last line (process killed mid-append) is ignored; its document is re-put.
        if let Ok(l) = serde_json::from_str::<ManifestLine>(line.trim_end()) {
            each(l.doc, l.removed);
        }
    }
}

/// A 64-bit digest of a URL, to find its slot while listing a whole manifest.
fn digest(s: &str) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// Every document of a job's manifest, the latest entry per URL, sorted by URL (the
/// `list_page` order). `expected` (the index's document count) sizes the list up front.
fn list_manifest(path: &Path, expected: usize) -> std::result::Result<Vec<StoredDoc>, FsError> {
    use std::collections::hash_map::Entry;
    let mut docs: Vec<StoredDoc> = Vec::with_capacity(expected);
    // URL digest → position in `docs`. Two URLs sharing a digest (never seen in practice)
    // fall back to a scan.
    let mut at: HashMap<u64, usize> = HashMap::with_capacity(expected);
    // A removed URL keeps its slot with an empty key until the end (its tombstone).
    read_manifest(path, |mut s, removed| {
        if removed {
            s.key.clear();
        }
        match at.entry(digest(s.url.as_str())) {
            Entry::Occupied(e) if docs[*e.get()].url == s.url => docs[*e.get()] = s,
            Entry::Occupied(_) => match docs.iter().position(|d| d.url == s.url) {
                Some(i) => docs[i] = s,
                None => docs.push(s),
            },
            Entry::Vacant(e) => {
                e.insert(docs.len());
                docs.push(s);
            }
        }
    })?;
    drop(at);
    docs.retain(|d| !d.key.is_empty());
    // Unstable sort: no scratch buffer of half the list (URLs are unique here).
    docs.sort_unstable_by(|a, b| a.url.as_str().cmp(b.url.as_str()));
    Ok(docs)
}

/// One page of a job's manifest in URL order: the latest entry of each of the (at most
/// `limit`) smallest URLs after `after`, read in one pass over `manifest.jsonl` holding only
/// those entries (a removed URL keeps its slot, so a page may come out short). The cursor is
/// the page's last URL slot.
///
/// Memory stays at one page; time is one pass over the file per page, so a whole listing
/// reads the file `documents / limit` times (the file holds no index to seek by; the
/// in-memory index holds digests only, which cannot be ordered by URL).
fn list_manifest_page(
    path: &Path,
    after: Option<&str>,
    limit: usize,
) -> std::result::Result<crawl_core::DocPage, FsError> {
    use std::collections::BTreeMap;
    let limit = limit.max(1);
    // URL → its latest entry (`None`: removed).
    let mut slots: BTreeMap<String, Option<StoredDoc>> = BTreeMap::new();
    let mut more = false;
    read_manifest(path, |s, removed| {
        let url = s.url.as_str().to_owned();
        if after.is_some_and(|a| url.as_str() <= a) {
            return;
        }
        let entry = (!removed).then_some(s);
        if let Some(slot) = slots.get_mut(&url) {
            *slot = entry;
            return;
        }
        if slots.len() >= limit {
            more = true;
            // Past every slot of a full page: it belongs to a later page.
            if slots.last_key_value().is_some_and(|(last, _)| url > *last) {
                return;
            }
            slots.pop_last();
        }
        slots.insert(url, entry);
    })?;
    let next = if more {
        slots.last_key_value().map(|(k, _)| k.clone())
    } else {
        None
    };
    Ok(crawl_core::DocPage::new(
        slots.into_values().flatten().collect(),
        next,
    ))
}

/// Rewrites a job's `manifest.jsonl` with one line per document (re-puts append lines) and
/// writes its `manifest.json`, both streamed page by page from the manifest as it was.
fn finish_manifests(lines: &Path, json: &Path) -> Result<()> {
    let compacted = lines.with_file_name(format!(".tmp-compact-{:016x}", rand::random::<u64>()));
    let res = (|| {
        write_streamed(json, |jw| {
            write_streamed(&compacted, |lw| {
                let mut manifest = crawl_core::keys::ManifestJsonWriter::new(&mut *jw)?;
                let mut after: Option<String> = None;
                loop {
                    let page = list_manifest_page(lines, after.as_deref(), crawl_core::LIST_PAGE)?;
                    for d in &page.docs {
                        serde_json::to_writer(&mut *lw, d).map_err(|e| {
                            Error::new(ErrorKind::Storage, format!("manifest.jsonl: {e}"))
                        })?;
                        lw.write_all(b"\n").map_err(io("write", lines))?;
                        manifest.entry(d)?;
                    }
                    match page.next {
                        Some(n) => after = Some(n),
                        None => break,
                    }
                }
                manifest.finish().map(|_| ())
            })
        })?;
        if compacted.exists() {
            std::fs::rename(&compacted, lines).map_err(io("rename", lines))?;
        }
        Ok(())
    })();
    let _ = std::fs::remove_file(&compacted);
    res
}

/// Writes `bytes` to `path` atomically: a temp file in the same folder, then rename.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::result::Result<(), FsError> {
    write_streamed(path, |w| w.write_all(bytes).map_err(io("write", path)))
}

/// Writes a file atomically (temp file in the same folder, then rename) from what `fill`
/// writes to a buffered writer, without holding the whole file in memory.
fn write_streamed<E: From<FsError>>(
    path: &Path,
    fill: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::result::Result<(), E>,
) -> std::result::Result<(), E> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    let tmp = dir.join(format!(".tmp-{:016x}", rand::random::<u64>()));
    let res = (|| {
        let f = std::fs::File::create(&tmp).map_err(io("create", &tmp))?;
        let mut w = std::io::BufWriter::new(f);
        fill(&mut w)?;
        w.flush().map_err(io("write", &tmp))?;
        std::fs::rename(&tmp, path).map_err(io("rename", path))?;
        Ok(())
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

fn append_line(path: &Path, line: &str) -> std::result::Result<(), FsError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io("open", path))?;
    f.write_all(format!("{line}\n").as_bytes())
        .map_err(io("append", path))
}

impl fmt::Display for FsSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FsSink({})", self.root.display())
    }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::result::Result<T, FsError> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?
        .map_err(Error::from)
}

#[async_trait]
impl Sink for FsSink {
    async fn put(&self, doc: &Document) -> Result<StoredDoc> {
        let mpath = self.manifest_path(&doc.job);
        let url = doc.meta.url.as_str().to_owned();
        let hash = doc.content_hash();
        let (plain, _) = document_keys(doc);
        // Choose the key and record its holder under the job's index lock (a put after
        // this one sees the holder); the document is written after.
        let (idx, guard) = self.index(&doc.job).await?;
        let (i, u) = (idx.clone(), url.clone());
        let (entry, plain_holder) = blocking(move || Ok((i.entry(&u)?, i.holder(&plain)?))).await?;
        let key = choose_key_by(doc, entry.as_ref().map(|e| e.key.as_str()), |_| {
            plain_holder.as_deref().is_some_and(|h| h != url)
        });
        let stored = StoredDoc::new(doc.meta.url.clone(), key, hash);
        let changed = entry.as_ref().map(|e| (&e.key, &e.content_hash))
            != Some((&stored.key, &stored.content_hash));
        if entry.is_none() {
            let (i, k, u) = (idx.clone(), stored.key.clone(), url.clone());
            blocking(move || {
                let _guard = guard;
                match i.holder(&k)? {
                    Some(h) if h == u => Ok(()),
                    _ => i.hold(&k, &u),
                }
            })
            .await?;
        } else {
            drop(guard);
        }
        let path = self.path_of(&stored.key)?;
        let bytes = doc.to_file_bytes();
        let manifest_line = if changed {
            Some(
                serde_json::to_string(&stored)
                    .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?,
            )
        } else {
            None
        };
        let held = self.gate(&doc.job)?.read_owned().await;
        let entry = stored.clone();
        // The URL's entry is written last: a failed put leaves it as it was, so a retry
        // writes its manifest line.
        blocking(move || {
            let _held = held;
            write_atomic(&path, &bytes)?;
            match manifest_line {
                Some(line) => {
                    append_line(&mpath, &line)?;
                    idx.set_entry(&entry)
                }
                None => Ok(()),
            }
        })
        .await?;
        Ok(stored)
    }

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let path = self.path_of(key)?;
        blocking(move || match std::fs::read(&path) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io("read", &path)(e)),
        })
        .await
    }

    async fn get_range(&self, key: &str, offset: u64, len: usize) -> Result<Option<Vec<u8>>> {
        use std::io::{Read, Seek};
        let path = self.path_of(key)?;
        blocking(move || {
            let mut f = match std::fs::File::open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(io("open", &path)(e)),
            };
            f.seek(std::io::SeekFrom::Start(offset))
                .map_err(io("read", &path))?;
            let mut out = Vec::new();
            f.take(u64::try_from(len).unwrap_or(u64::MAX))
                .read_to_end(&mut out)
                .map_err(io("read", &path))?;
            Ok(Some(out))
        })
        .await
    }

    async fn list(&self, job: &JobId) -> Result<Vec<StoredDoc>> {
        let path = self.manifest_path(job);
        blocking(move || list_manifest(&path, 0)).await
    }

    /// By URL; the cursor is the page's last URL (see `list_manifest_page`).
    async fn list_page(
        &self,
        job: &JobId,
        after: Option<&str>,
        limit: usize,
    ) -> Result<crawl_core::DocPage> {
        let path = self.manifest_path(job);
        let after = after.map(str::to_owned);
        blocking(move || list_manifest_page(&path, after.as_deref(), limit)).await
    }

    async fn delete_job(&self, job: &JobId) -> Result<usize> {
        let _exclusive = self.gate(job)?.write_owned().await;
        // The index counts the job's documents (it is built from the manifest when needed).
        let (idx, guard) = self.index(job).await?;
        let dir = self.root.join(job_prefix(job).trim_end_matches('/'));
        let n = blocking(move || {
            let _guard = guard;
            let n = idx.count()?;
            for d in [dir.as_path(), idx.dir()] {
                match std::fs::remove_dir_all(d) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(io("remove", d)(e)),
                }
            }
            Ok(n)
        })
        .await?;
        if let Ok(mut map) = self.indexes.lock() {
            map.remove(job);
        }
        Ok(n)
    }

    async fn finish_job(&self, job: &JobId) -> Result<()> {
        // Exclusive: no put may append a line between the listing and the rewrite.
        let held = self.gate(job)?.write_owned().await;
        let path = self.root.join(crawl_core::keys::manifest_key(job));
        let lines = self.manifest_path(job);
        tokio::task::spawn_blocking(move || {
            let _held = held;
            finish_manifests(&lines, &path)
        })
        .await
        .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?
    }

    async fn remove(&self, job: &JobId, url: &url::Url) -> Result<Option<StoredDoc>> {
        let (idx, guard) = self.index(job).await?;
        let u = url.as_str().to_owned();
        let i = idx.clone();
        let Some(entry) = blocking(move || i.entry(&u)).await? else {
            return Ok(None);
        };
        let mpath = self.manifest_path(job);
        let file = self.path_of(&entry.key)?;
        let line = serde_json::to_string(&ManifestLine {
            doc: entry.clone(),
            removed: true,
        })
        .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        let held = self.gate(job)?.read_owned().await;
        let gone = entry.clone();
        blocking(move || {
            let _held = (held, guard);
            match std::fs::remove_file(&file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io("remove", &file)(e)),
            }
            append_line(&mpath, &line)?;
            idx.forget(&gone)
        })
        .await?;
        Ok(Some(entry))
    }

    async fn delete_aux(&self, job: &JobId, name: &str) -> Result<()> {
        let path = self.path_of(&aux_key(job, name)?)?;
        let held = self.gate(job)?.read_owned().await;
        blocking(move || {
            let _held = held;
            match std::fs::remove_file(&path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(io("remove", &path)(e)),
            }
        })
        .await
    }

    async fn put_aux(&self, job: &JobId, name: &str, bytes: Vec<u8>) -> Result<String> {
        let key = aux_key(job, name)?;
        let path = self.path_of(&key)?;
        let held = self.gate(job)?.read_owned().await;
        blocking(move || {
            let _held = held;
            write_atomic(&path, &bytes)
        })
        .await?;
        Ok(key)
    }

    /// A temp file in the object's folder, renamed over the object at `finish`.
    async fn aux_writer<'a>(&'a self, job: &JobId, name: &str) -> Result<DynAuxWriter<'a>> {
        let key = aux_key(job, name)?;
        let path = self.path_of(&key)?;
        let held = self.gate(job)?.read_owned().await;
        let dir = path.parent().unwrap_or(Path::new(".")).to_owned();
        let tmp = dir.join(format!(".tmp-{:016x}", rand::random::<u64>()));
        let t = tmp.clone();
        let file = blocking(move || {
            std::fs::create_dir_all(&dir).map_err(io("create", &dir))?;
            std::fs::File::create(&t).map_err(io("create", &t))
        })
        .await?;
        Ok(Box::new(FsAuxWriter {
            file: Some(std::io::BufWriter::new(file)),
            tmp,
            path,
            key,
            _held: held,
        }))
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::DURABLE
    }
}

/// [`FsSink::aux_writer`]'s writer: the job's gate is held until it ends, so `delete_job`
/// waits for it; dropped unfinished, it removes its temp file.
struct FsAuxWriter {
    file: Option<std::io::BufWriter<std::fs::File>>,
    tmp: PathBuf,
    path: PathBuf,
    key: String,
    _held: tokio::sync::OwnedRwLockReadGuard<()>,
}

#[async_trait]
impl AuxWriter for FsAuxWriter {
    async fn write(&mut self, bytes: &[u8]) -> Result<()> {
        let Some(mut w) = self.file.take() else {
            return Err(Error::new(
                ErrorKind::Internal,
                "aux writer used after an error",
            ));
        };
        let (data, tmp) = (bytes.to_vec(), self.tmp.clone());
        let w = blocking(move || {
            w.write_all(&data).map_err(io("write", &tmp))?;
            Ok(w)
        })
        .await?;
        self.file = Some(w);
        Ok(())
    }

    async fn finish(mut self: Box<Self>) -> Result<String> {
        let Some(w) = self.file.take() else {
            return Err(Error::new(
                ErrorKind::Internal,
                "aux writer used after an error",
            ));
        };
        let (tmp, path) = (self.tmp.clone(), self.path.clone());
        blocking(move || {
            w.into_inner()
                .map_err(|e| io("write", &tmp)(e.into_error()))?;
            std::fs::rename(&tmp, &path).map_err(io("rename", &path))
        })
        .await?;
        Ok(std::mem::take(&mut self.key))
    }
}

impl Drop for FsAuxWriter {
    fn drop(&mut self) {
        // After a rename the temp file is gone: removing it is a harmless miss.
        self.file.take();
        let _ = std::fs::remove_file(&self.tmp);
    }
}

#[cfg(test)]
fn walk(p: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            if e.path().is_dir() {
                out.extend(walk(&e.path()));
            }
            out.push(e.path());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn fs_sink_passes_the_conformance_suite() {
        let dir = tempfile::tempdir().unwrap();
        let sink = FsSink::new(dir.path()).unwrap();
        crawl_core::conformance::sink_suite(Arc::new(sink)).await;
    }

    #[tokio::test]
    async fn manifest_survives_a_new_process_and_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        let job = JobId::new();
        let a =
            crawl_core::conformance::sample_doc(&job, "https://example.com/1", Some("Dup"), "a\n");
        let b =
            crawl_core::conformance::sample_doc(&job, "https://example.com/2", Some("Dup"), "b\n");
        let (ka, kb) = {
            let s = FsSink::new(dir.path()).unwrap();
            (s.put(&a).await.unwrap().key, s.put(&b).await.unwrap().key)
        };
        let m = dir.path().join(job.as_str()).join("manifest.jsonl");
        let mut f = std::fs::OpenOptions::new().append(true).open(&m).unwrap();
        f.write_all(b"{\"url\":\"https://exa").unwrap();
        let s = FsSink::new(dir.path()).unwrap();
        assert_eq!(s.list(&job).await.unwrap().len(), 2);
        assert_eq!(
            s.put(&b).await.unwrap().key,
            kb,
            "key must be stable across processes"
        );
        assert_eq!(s.put(&a).await.unwrap().key, ka);
    }

    #[tokio::test]
    async fn a_page_whose_title_changed_keeps_its_key_in_this_and_a_new_process() {
        // The index keeps digests, not key strings: a re-put whose title changed must find
        // the key the URL holds from the manifest on disk, not write a second file.
        let dir = tempfile::tempdir().unwrap();
        let job = JobId::new();
        let url = "https://example.com/page";
        let first = crawl_core::conformance::sample_doc(&job, url, Some("Old title"), "a\n");
        let renamed = crawl_core::conformance::sample_doc(&job, url, Some("New title"), "b\n");
        let s = FsSink::new(dir.path()).unwrap();
        let key = s.put(&first).await.unwrap().key;
        assert!(key.ends_with("/old-title.md"), "{key}");
        assert_eq!(s.put(&renamed).await.unwrap().key, key);
        let again = FsSink::new(dir.path()).unwrap();
        assert_eq!(again.put(&renamed).await.unwrap().key, key);
        let listed = again.list(&job).await.unwrap();
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0].content_hash, renamed.content_hash());
        let bytes = again.get(&key).await.unwrap().unwrap();
        assert!(String::from_utf8(bytes).unwrap().contains("New title"));
    }

    #[tokio::test]
    async fn finish_job_leaves_one_manifest_line_per_document() {
        let dir = tempfile::tempdir().unwrap();
        let job = JobId::new();
        let s = FsSink::new(dir.path()).unwrap();
        for (page, body) in [("a", "1\n"), ("b", "1\n"), ("a", "2\n"), ("a", "3\n")] {
            let url = format!("https://example.com/{page}");
            let d = crawl_core::conformance::sample_doc(&job, &url, Some(page), body);
            s.put(&d).await.unwrap();
        }
        let lines = dir.path().join(job.as_str()).join("manifest.jsonl");
        let count = || std::fs::read_to_string(&lines).unwrap().lines().count();
        assert_eq!(count(), 4);
        let before = s.list(&job).await.unwrap();
        s.finish_job(&job).await.unwrap();
        assert_eq!(count(), 2);
        assert_eq!(s.list(&job).await.unwrap(), before);
        assert_eq!(
            FsSink::new(dir.path()).unwrap().list(&job).await.unwrap(),
            before
        );
        let json: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.path().join(job.as_str()).join("manifest.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(json.as_object().unwrap().len(), 2);
    }

    #[tokio::test]
    async fn two_sinks_on_one_root_never_give_one_key_to_two_urls() {
        // The url → key index is on disk, not in one sink's memory: a second handle on the
        // same root (another process) that already touched the job sees the key the first
        // one gave, so a second page of the same title takes its hashed key instead of
        // overwriting the first page's file.
        let dir = tempfile::tempdir().unwrap();
        let job = JobId::new();
        let doc = |url: &str, body: &str| {
            crawl_core::conformance::sample_doc(&job, url, Some("Same title"), body)
        };
        let (a, b) = (
            FsSink::new(dir.path()).unwrap(),
            FsSink::new(dir.path()).unwrap(),
        );
        let other = crawl_core::conformance::sample_doc(
            &job,
            "https://example.com/o",
            Some("Other"),
            "o\n",
        );
        b.put(&other).await.unwrap();
        let first = a.put(&doc("https://example.com/1", "one\n")).await.unwrap();
        let second = b.put(&doc("https://example.com/2", "two\n")).await.unwrap();
        assert_ne!(first.key, second.key, "two URLs were given one key");
        let bytes = a.get(&first.key).await.unwrap().unwrap();
        assert!(String::from_utf8(bytes).unwrap().contains("one"));
        assert_eq!(a.list(&job).await.unwrap().len(), 3);
    }

    #[tokio::test]
    async fn a_job_written_without_the_index_is_indexed_from_its_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let job = JobId::new();
        let url = "https://example.com/page";
        let old = crawl_core::conformance::sample_doc(&job, url, Some("Old title"), "a\n");
        let gone = crawl_core::conformance::sample_doc(&job, "https://example.com/g", None, "g\n");
        let s = FsSink::new(dir.path()).unwrap();
        let key = s.put(&old).await.unwrap().key;
        s.put(&gone).await.unwrap();
        s.remove(&job, &gone.meta.url).await.unwrap();
        // As an older version left it: the manifest only.
        std::fs::remove_dir_all(dir.path().join(index::INDEX_DIR)).unwrap();
        let again = FsSink::new(dir.path()).unwrap();
        let renamed = crawl_core::conformance::sample_doc(&job, url, Some("New title"), "b\n");
        assert_eq!(again.put(&renamed).await.unwrap().key, key);
        assert_eq!(again.remove(&job, &gone.meta.url).await.unwrap(), None);
        assert_eq!(again.delete_job(&job).await.unwrap(), 1);
        assert!(walk(dir.path())
            .iter()
            .all(|p| !p.to_string_lossy().contains(job.as_str())));
    }

    #[tokio::test]
    async fn a_failed_write_is_listed_once_its_retry_succeeds() {
        let dir = tempfile::tempdir().unwrap();
        let job = JobId::new();
        let d =
            crawl_core::conformance::sample_doc(&job, "https://example.com/a", Some("A"), "a\n");
        let s = FsSink::new(dir.path()).unwrap();
        // A folder where the manifest file should be makes the append fail.
        let m = dir.path().join(job.as_str()).join("manifest.jsonl");
        std::fs::create_dir_all(&m).unwrap();
        let err = s.put(&d).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Storage, "{err}");
        std::fs::remove_dir(&m).unwrap();
        let stored = s.put(&d).await.unwrap();
        assert_eq!(s.list(&job).await.unwrap(), vec![stored]);
    }

    #[tokio::test]
    async fn keys_cannot_escape_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let s = FsSink::new(dir.path().join("kb")).unwrap();
        for bad in [
            "../x",
            "/etc/passwd",
            "a/../../b",
            "a\\b",
            "",
            ".hidden/x",
            "job-1/./x",
        ] {
            let e = s.get(bad).await.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidInput, "{bad}");
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn delete_job_waits_for_writes_already_in_flight() {
        // A put whose task was aborted may still be writing on a blocking thread: it holds
        // the job's gate until its file operations end. Simulate one and check delete_job
        // waits for it, so the late file is removed too.
        let dir = tempfile::tempdir().unwrap();
        let s = FsSink::new(dir.path()).unwrap();
        let job = JobId::new();
        let d =
            crawl_core::conformance::sample_doc(&job, "https://example.com/a", Some("A"), "a\n");
        s.put(&d).await.unwrap();
        let in_flight = s.gate(&job).unwrap().read_owned().await;
        let deleting = tokio::spawn({
            let s = s.clone();
            let job = job.clone();
            async move { s.delete_job(&job).await }
        });
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert!(
            !deleting.is_finished(),
            "delete_job did not wait for an in-flight write"
        );
        let late = dir
            .path()
            .join(job.as_str())
            .join("example.com")
            .join("late.md");
        std::fs::write(&late, "late").unwrap();
        drop(in_flight);
        assert_eq!(deleting.await.unwrap().unwrap(), 1);
        assert!(
            walk(&dir.path().join(job.as_str())).is_empty(),
            "a late write survived"
        );
    }

    #[tokio::test]
    async fn no_temp_files_are_left_behind() {
        let dir = tempfile::tempdir().unwrap();
        let s = FsSink::new(dir.path()).unwrap();
        let job = JobId::new();
        for i in 0..20 {
            let d = crawl_core::conformance::sample_doc(
                &job,
                &format!("https://example.com/{i}"),
                Some(&format!("P{i}")),
                "x\n",
            );
            s.put(&d).await.unwrap();
        }
        let domain = dir.path().join(job.as_str()).join("example.com");
        let names: Vec<String> = std::fs::read_dir(domain)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 20);
        assert!(
            names
                .iter()
                .all(|n| n.ends_with(".md") && !n.starts_with('.')),
            "{names:?}"
        );
    }
}

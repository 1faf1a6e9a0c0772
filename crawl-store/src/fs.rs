//! Filesystem sink: one markdown file per page, written atomically (temp file + rename), and
//! an append-only per-job manifest (`manifest.jsonl`, one `{url, key, content_hash}` line per
//! new or changed document).
//!
//! The manifest on disk is the record of which URL holds which key. In memory the sink keeps
//! only 64-bit digests of it (about 80 bytes a page instead of the strings), so a long crawl's
//! memory does not grow with its URLs and keys; `list` and the rare re-put of a page whose
//! title changed read the manifest back from disk.

use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use crawl_core::keys::{aux_key, choose_key_by, document_keys, job_prefix};
use crawl_core::{Capabilities, Document, Error, ErrorKind, JobId, Result, Sink, StoredDoc};

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
}

impl From<FsError> for Error {
    fn from(e: FsError) -> Error {
        let kind = match &e {
            FsError::Io { .. } => ErrorKind::Storage,
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

/// A 64-bit digest of a URL, key or content hash (SipHash with fixed keys: stable within a
/// process, which is all the in-memory index needs; it is rebuilt from the manifest on open).
fn digest(s: &str) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// A job's url → key index, as digests. A digest collision can only make a page take its
/// hashed key instead of its plain one (never lose or overwrite a document): the key a URL
/// already holds is confirmed against the candidate key strings, or read from disk.
#[derive(Debug, Default)]
struct JobManifest {
    /// url → (key, content hash) of its latest manifest line.
    by_url: HashMap<u64, (u64, u64)>,
    /// key → url holding it.
    key_holder: HashMap<u64, u64>,
}

impl JobManifest {
    fn record(&mut self, url: &str, key: &str, hash: &str) -> bool {
        let (u, k, h) = (digest(url), digest(key), digest(hash));
        self.key_holder.insert(k, u);
        self.by_url.insert(u, (k, h)) != Some((k, h))
    }

    /// Forgets a removed document: its URL holds no key, its key is free.
    fn forget(&mut self, url: &str, key: &str) {
        let k = digest(key);
        if self.key_holder.get(&k) == Some(&digest(url)) {
            self.key_holder.remove(&k);
        }
        self.by_url.remove(&digest(url));
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

/// What the index knows of the key a document's URL already holds.
enum Held {
    /// The URL has no key yet.
    None,
    /// The URL holds this key (one of the document's candidate keys).
    Key(String),
    /// The URL holds a key that is neither candidate (its title changed): read it from disk.
    Elsewhere,
}

/// Writes documents under a root folder: `ROOT/{job-id}/{domain}/{page-title}.md`.
#[derive(Debug, Clone)]
pub struct FsSink {
    root: PathBuf,
    manifests: Arc<Mutex<HashMap<JobId, Arc<Mutex<JobManifest>>>>>,
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
            manifests: Arc::default(),
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

    async fn manifest(&self, job: &JobId) -> Result<Arc<Mutex<JobManifest>>> {
        if let Some(m) = self.lock_map()?.get(job) {
            return Ok(Arc::clone(m));
        }
        let path = self.manifest_path(job);
        let loaded = tokio::task::spawn_blocking(move || load_manifest(&path))
            .await
            .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))??;
        let mut map = self.lock_map()?;
        Ok(Arc::clone(
            map.entry(job.clone())
                .or_insert_with(|| Arc::new(Mutex::new(loaded))),
        ))
    }

    fn lock_map(
        &self,
    ) -> Result<std::sync::MutexGuard<'_, HashMap<JobId, Arc<Mutex<JobManifest>>>>> {
        self.manifests
            .lock()
            .map_err(|_| Error::new(ErrorKind::Internal, "FsSink lock poisoned"))
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

fn load_manifest(path: &Path) -> Result<JobManifest> {
    let mut m = JobManifest::default();
    read_manifest(path, |s, removed| {
        if removed {
            m.forget(s.url.as_str(), &s.key);
        } else {
            m.record(s.url.as_str(), &s.key, &s.content_hash);
        }
    })?;
    Ok(m)
}

/// The key `url` holds according to the manifest on disk (its latest line).
fn key_on_disk(path: &Path, url: &str) -> std::result::Result<Option<String>, FsError> {
    Ok(entry_on_disk(path, url)?.map(|s| s.key))
}

/// What `url` holds according to the manifest on disk (its latest line; `None` once removed).
fn entry_on_disk(path: &Path, url: &str) -> std::result::Result<Option<StoredDoc>, FsError> {
    let mut entry = None;
    read_manifest(path, |s, removed| {
        if s.url.as_str() == url {
            entry = (!removed).then_some(s);
        }
    })?;
    Ok(entry)
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
        let manifest = self.manifest(&doc.job).await?;
        let mpath = self.manifest_path(&doc.job);
        let url = doc.meta.url.as_str();
        let hash = doc.content_hash();
        let (plain, hashed) = document_keys(doc);
        let poisoned = || Error::new(ErrorKind::Internal, "FsSink lock poisoned");
        let held = {
            let m = manifest.lock().map_err(|_| poisoned())?;
            match m.by_url.get(&digest(url)) {
                None => Held::None,
                Some((k, _)) if *k == digest(&plain) => Held::Key(plain.clone()),
                Some((k, _)) if *k == digest(&hashed) => Held::Key(hashed.clone()),
                Some(_) => Held::Elsewhere,
            }
        };
        let existing = match held {
            Held::None => None,
            Held::Key(k) => Some(k),
            Held::Elsewhere => {
                let (path, url) = (mpath.clone(), url.to_owned());
                blocking(move || key_on_disk(&path, &url)).await?
            }
        };
        // Choose the key and record it under the job's lock; the file is written after.
        let (stored, changed) = {
            let mut m = manifest.lock().map_err(|_| poisoned())?;
            let u = digest(url);
            let key = choose_key_by(doc, existing.as_deref(), |k| {
                m.key_holder.get(&digest(k)).is_some_and(|h| *h != u)
            });
            let changed = m.record(url, &key, &hash);
            (StoredDoc::new(doc.meta.url.clone(), key, hash), changed)
        };
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
        let written = blocking(move || {
            let _held = held;
            write_atomic(&path, &bytes)?;
            match manifest_line {
                Some(line) => append_line(&mpath, &line),
                None => Ok(()),
            }
        })
        .await;
        if written.is_err() {
            // Forget the entry so a retried put writes its manifest line.
            if let Ok(mut m) = manifest.lock() {
                m.by_url.remove(&digest(url));
            }
        }
        written.map(|()| stored)
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

    async fn list(&self, job: &JobId) -> Result<Vec<StoredDoc>> {
        let expected = {
            let m = self.manifest(job).await?;
            let n = m.lock().map(|g| g.by_url.len()).unwrap_or(0);
            n
        };
        let path = self.manifest_path(job);
        blocking(move || list_manifest(&path, expected)).await
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
        // The index counts the job's documents (it is loaded from the manifest when needed).
        let n = {
            let m = self.manifest(job).await?;
            let n = m.lock().map(|g| g.by_url.len()).unwrap_or(0);
            n
        };
        self.lock_map()?.remove(job);
        let dir = self.root.join(job_prefix(job).trim_end_matches('/'));
        blocking(move || match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io("remove", &dir)(e)),
        })
        .await?;
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
        let manifest = self.manifest(job).await?;
        let poisoned = || Error::new(ErrorKind::Internal, "FsSink lock poisoned");
        let present = manifest
            .lock()
            .map_err(|_| poisoned())?
            .by_url
            .contains_key(&digest(url.as_str()));
        if !present {
            return Ok(None);
        }
        let mpath = self.manifest_path(job);
        let (path, u) = (mpath.clone(), url.as_str().to_owned());
        let Some(entry) = blocking(move || entry_on_disk(&path, &u)).await? else {
            return Ok(None);
        };
        let file = self.path_of(&entry.key)?;
        let line = serde_json::to_string(&ManifestLine {
            doc: entry.clone(),
            removed: true,
        })
        .map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        let held = self.gate(job)?.read_owned().await;
        blocking(move || {
            let _held = held;
            match std::fs::remove_file(&file) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io("remove", &file)(e)),
            }
            append_line(&mpath, &line)
        })
        .await?;
        manifest
            .lock()
            .map_err(|_| poisoned())?
            .forget(entry.url.as_str(), &entry.key);
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

    fn capabilities(&self) -> Capabilities {
        Capabilities::DURABLE
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

//! Filesystem sink: one markdown file per page, written atomically (temp file + rename), and
//! an append-only per-job manifest (`manifest.jsonl`, one `{url, key, content_hash}` line per
//! new or changed document).

use std::collections::HashMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use crawl_core::keys::{aux_key, choose_key, job_prefix};
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

#[derive(Debug, Default)]
struct JobManifest {
    by_url: HashMap<String, StoredDoc>,
    key_holder: HashMap<String, String>,
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

fn load_manifest(path: &Path) -> Result<JobManifest> {
    let mut m = JobManifest::default();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(m),
        Err(e) => return Err(io("read", path)(e).into()),
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        // A torn last line (process killed mid-append) is ignored; its document is re-put.
        if let Ok(s) = serde_json::from_str::<StoredDoc>(line) {
            m.key_holder.insert(s.key.clone(), s.url.to_string());
            m.by_url.insert(s.url.to_string(), s);
        }
    }
    Ok(m)
}

/// Writes `bytes` to `path` atomically: a temp file in the same folder, then rename.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::result::Result<(), FsError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    let tmp = dir.join(format!(".tmp-{:016x}", rand::random::<u64>()));
    let res = (|| {
        let mut f = std::fs::File::create(&tmp).map_err(io("create", &tmp))?;
        f.write_all(bytes).map_err(io("write", &tmp))?;
        std::fs::rename(&tmp, path).map_err(io("rename", path))
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
        let url = doc.meta.url.to_string();
        let hash = doc.content_hash();
        // Choose the key and record it under the job's lock; the file is written after.
        let (stored, changed) = {
            let mut m = manifest
                .lock()
                .map_err(|_| Error::new(ErrorKind::Internal, "FsSink lock poisoned"))?;
            let key = choose_key(doc, m.by_url.get(&url).map(|s| s.key.as_str()), |k| {
                m.key_holder.get(k).map(String::as_str)
            });
            let stored = StoredDoc::new(doc.meta.url.clone(), key.clone(), hash);
            let changed = m.by_url.get(&url) != Some(&stored);
            m.key_holder.insert(key, url.clone());
            m.by_url.insert(url, stored.clone());
            (stored, changed)
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
        let mpath = self.manifest_path(&doc.job);
        let held = self.gate(&doc.job)?.read_owned().await;
        blocking(move || {
            let _held = held;
            write_atomic(&path, &bytes)?;
            match manifest_line {
                Some(line) => append_line(&mpath, &line),
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

    async fn list(&self, job: &JobId) -> Result<Vec<StoredDoc>> {
        let m = self.manifest(job).await?;
        let g = m
            .lock()
            .map_err(|_| Error::new(ErrorKind::Internal, "FsSink lock poisoned"))?;
        let mut v: Vec<StoredDoc> = g.by_url.values().cloned().collect();
        v.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(v)
    }

    async fn delete_job(&self, job: &JobId) -> Result<usize> {
        let _exclusive = self.gate(job)?.write_owned().await;
        let n = self.list(job).await?.len();
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
        let bytes = crawl_core::keys::manifest_json(&self.list(job).await?)?;
        let path = self.root.join(crawl_core::keys::manifest_key(job));
        blocking(move || write_atomic(&path, &bytes)).await
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

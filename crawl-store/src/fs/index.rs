//! The filesystem sink's url → key index, kept on disk so a crawl's memory does not grow
//! with its pages: under `{root}/.fs-index/{job}/`, one small file per URL (`u-{sha256 of
//! the URL}`: its key and content hash) and one per key (`k-{sha256 of the key}`: the URL
//! holding it). Each file holds the full URL and key it stands for, so a digest collision
//! is detected (an error), never taken for a match. The index is rebuilt from the job's
//! `manifest.jsonl` when a job written without it is first touched.

use std::path::{Path, PathBuf};

use crawl_core::{JobId, StoredDoc};
use sha2::{Digest, Sha256};

use super::{io, read_manifest, write_atomic, FsError};

/// The folder under the sink's root holding every job's index.
pub(super) const INDEX_DIR: &str = ".fs-index";

/// One job's index.
#[derive(Debug, Clone)]
pub(super) struct Index {
    dir: PathBuf,
}

/// What a `k-` file holds.
#[derive(serde::Serialize, serde::Deserialize)]
struct Holder {
    key: String,
    url: String,
}

fn file_name(kind: &str, s: &str) -> String {
    format!("{kind}-{}", hex::encode(Sha256::digest(s.as_bytes())))
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>, FsError> {
    match std::fs::read(path) {
        Ok(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| FsError::Index(format!("{}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io("read", path)(e)),
    }
}

fn remove(path: &Path) -> Result<(), FsError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io("remove", path)(e)),
    }
}

fn json(v: &impl serde::Serialize) -> Result<Vec<u8>, FsError> {
    serde_json::to_vec(v).map_err(|e| FsError::Index(e.to_string()))
}

impl Index {
    pub(super) fn new(root: &Path, job: &JobId) -> Self {
        Index {
            dir: root.join(INDEX_DIR).join(job.as_str()),
        }
    }

    pub(super) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Builds the index from `manifest` when the job has none yet (a job written before
    /// the index existed, or a new one): into a temp folder renamed into place, so a
    /// build cut short is started over.
    pub(super) fn ensure(&self, manifest: &Path) -> Result<(), FsError> {
        if self.dir.is_dir() {
            return Ok(());
        }
        let parent = self.dir.parent().unwrap_or(Path::new("."));
        let tmp = Index {
            dir: parent.join(format!(".tmp-{:016x}", rand::random::<u64>())),
        };
        std::fs::create_dir_all(&tmp.dir).map_err(io("create", &tmp.dir))?;
        let built = (|| {
            let mut failed = None;
            read_manifest(manifest, |doc, removed| {
                if failed.is_some() {
                    return;
                }
                let r = if removed {
                    tmp.forget(&doc)
                } else {
                    tmp.hold(&doc.key, doc.url.as_str())
                        .and_then(|()| tmp.set_entry(&doc))
                };
                failed = r.err();
            })?;
            match failed {
                Some(e) => Err(e),
                None => std::fs::rename(&tmp.dir, &self.dir).map_err(io("rename", &self.dir)),
            }
        })();
        if built.is_err() {
            let _ = std::fs::remove_dir_all(&tmp.dir);
        }
        built
    }

    /// What `url` holds: its key and content hash.
    pub(super) fn entry(&self, url: &str) -> Result<Option<StoredDoc>, FsError> {
        let got: Option<StoredDoc> = read_json(&self.dir.join(file_name("u", url)))?;
        match got {
            Some(d) if d.url.as_str() != url => Err(FsError::Index(format!(
                "digest collision between {url} and {}",
                d.url
            ))),
            other => Ok(other),
        }
    }

    /// The URL holding `key`, if any.
    pub(super) fn holder(&self, key: &str) -> Result<Option<String>, FsError> {
        let got: Option<Holder> = read_json(&self.dir.join(file_name("k", key)))?;
        match got {
            Some(h) if h.key != key => Err(FsError::Index(format!(
                "digest collision between keys {key} and {}",
                h.key
            ))),
            other => Ok(other.map(|h| h.url)),
        }
    }

    /// Records that `url` holds `key`.
    pub(super) fn hold(&self, key: &str, url: &str) -> Result<(), FsError> {
        let h = Holder {
            key: key.to_owned(),
            url: url.to_owned(),
        };
        write_atomic(&self.dir.join(file_name("k", key)), &json(&h)?)
    }

    /// Records what `doc`'s URL holds.
    pub(super) fn set_entry(&self, doc: &StoredDoc) -> Result<(), FsError> {
        write_atomic(
            &self.dir.join(file_name("u", doc.url.as_str())),
            &json(doc)?,
        )
    }

    /// Forgets a removed document: its URL holds nothing, its key is free.
    pub(super) fn forget(&self, doc: &StoredDoc) -> Result<(), FsError> {
        if self.holder(&doc.key)?.as_deref() == Some(doc.url.as_str()) {
            remove(&self.dir.join(file_name("k", &doc.key)))?;
        }
        remove(&self.dir.join(file_name("u", doc.url.as_str())))
    }

    /// How many URLs hold a document.
    pub(super) fn count(&self) -> Result<usize, FsError> {
        let rd = match std::fs::read_dir(&self.dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => return Err(io("read", &self.dir)(e)),
        };
        let mut n = 0;
        for e in rd {
            let e = e.map_err(io("read", &self.dir))?;
            if e.file_name().to_string_lossy().starts_with("u-") {
                n += 1;
            }
        }
        Ok(n)
    }
}

//! The URL index [`S3Sink::remove`](super::S3Sink) finds a URL's document by. The sink
//! keeps no object per document besides the document (its `url` and `content-hash`
//! metadata are its manifest entry), so a URL's key is found by listing the job: the index
//! is that listing, built once per job in the process that removes (a sync's finalise),
//! and kept up to date by the sink's own writes. Memory: the URL and key of each of one
//! job's documents, only in a process that removes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crawl_core::{JobId, StoredDoc};
use url::Url;

/// How long a miss is trusted before the index is rebuilt from the job's listing (another
/// process may have stored the URL since): removals come in one pass, after the job's
/// writers are done, so one listing serves the pass.
const TRUST_MISS: Duration = Duration::from_secs(60);

struct Built {
    job: JobId,
    at: Instant,
    keys: HashMap<String, Vec<String>>,
}

/// One job's url → keys map (see the module's notes); cheap to clone (shared).
#[derive(Clone, Default)]
pub(crate) struct UrlIndex(Arc<Mutex<Option<Built>>>);

impl std::fmt::Debug for UrlIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UrlIndex")
    }
}

impl UrlIndex {
    fn with<T>(&self, f: impl FnOnce(&mut Option<Built>) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The keys `url` holds in `job` as far as the index knows; `None` if it does not know.
    pub(crate) fn lookup(&self, job: &JobId, url: &Url) -> Option<Vec<String>> {
        self.with(|b| match b {
            Some(b) if &b.job == job => b.keys.get(url.as_str()).cloned(),
            _ => None,
        })
    }

    /// Whether a miss must be checked against a fresh listing of `job`.
    pub(crate) fn stale(&self, job: &JobId) -> bool {
        self.with(|b| match b {
            Some(b) => &b.job != job || b.at.elapsed() >= TRUST_MISS,
            None => true,
        })
    }

    /// Replaces the index with `job`'s documents.
    pub(crate) fn rebuild(&self, job: &JobId, docs: Vec<StoredDoc>) {
        let mut keys: HashMap<String, Vec<String>> = HashMap::new();
        for d in docs {
            keys.entry(d.url.as_str().to_owned())
                .or_default()
                .push(d.key);
        }
        self.with(|b| {
            *b = Some(Built {
                job: job.clone(),
                at: Instant::now(),
                keys,
            })
        });
    }

    /// A document this sink stored, if the index is `job`'s.
    pub(crate) fn insert(&self, job: &JobId, stored: &StoredDoc) {
        self.with(|b| {
            if let Some(b) = b.as_mut().filter(|b| &b.job == job) {
                let keys = b.keys.entry(stored.url.as_str().to_owned()).or_default();
                if !keys.contains(&stored.key) {
                    keys.push(stored.key.clone());
                }
            }
        });
    }

    /// `url` removed from `job`.
    pub(crate) fn forget(&self, job: &JobId, url: &Url) {
        self.with(|b| {
            if let Some(b) = b.as_mut().filter(|b| &b.job == job) {
                b.keys.remove(url.as_str());
            }
        });
    }
}

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use crate::error::{Error, ErrorKind, Result};
use crate::job::JobId;
use crate::keys::{choose_key, job_prefix};
use crate::page::{Document, StoredDoc};
use crate::traits::{DocPage, Sink};

#[derive(Debug, Default)]
struct State {
    objects: BTreeMap<String, Vec<u8>>,
    /// job → url → stored doc
    manifests: HashMap<JobId, BTreeMap<String, StoredDoc>>,
    /// job → key → url holding it
    holders: HashMap<JobId, HashMap<String, String>>,
}

/// In-memory [`Sink`].
#[derive(Debug, Clone, Default)]
pub struct MemorySink {
    inner: Arc<Mutex<State>>,
}

impl MemorySink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, State>> {
        self.inner
            .lock()
            .map_err(|_| Error::new(ErrorKind::Internal, "sink lock poisoned"))
    }

    /// Every key stored, sorted (for tests).
    pub fn keys(&self) -> Vec<String> {
        self.lock()
            .map(|g| g.objects.keys().cloned().collect())
            .unwrap_or_default()
    }
}

impl fmt::Display for MemorySink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MemorySink")
    }
}

#[async_trait]
impl Sink for MemorySink {
    async fn put(&self, doc: &Document) -> Result<StoredDoc> {
        let bytes = doc.to_file_bytes();
        let mut g = self.lock()?;
        let st = &mut *g;
        let manifest = st.manifests.entry(doc.job.clone()).or_default();
        let holders = st.holders.entry(doc.job.clone()).or_default();
        let key = choose_key(
            doc,
            manifest.get(doc.meta.url.as_str()).map(|s| s.key.as_str()),
            |k| holders.get(k).map(String::as_str),
        );
        let stored = StoredDoc::new(doc.meta.url.clone(), key.clone(), doc.content_hash());
        holders.insert(key.clone(), doc.meta.url.to_string());
        manifest.insert(doc.meta.url.to_string(), stored.clone());
        st.objects.insert(key, bytes);
        Ok(stored)
    }

    async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.lock()?.objects.get(key).cloned())
    }

    async fn get_range(&self, key: &str, offset: u64, len: usize) -> Result<Option<Vec<u8>>> {
        Ok(self.lock()?.objects.get(key).map(|b| {
            let start = usize::try_from(offset).unwrap_or(usize::MAX).min(b.len());
            b[start..start.saturating_add(len).min(b.len())].to_vec()
        }))
    }

    /// By URL; the cursor is the last URL of the page.
    async fn list_page(&self, job: &JobId, after: Option<&str>, limit: usize) -> Result<DocPage> {
        use std::ops::Bound;
        let g = self.lock()?;
        let Some(m) = g.manifests.get(job) else {
            return Ok(DocPage::default());
        };
        let from = after.map_or(Bound::Unbounded, Bound::Excluded);
        let mut it = m.range::<str, _>((from, Bound::Unbounded));
        let docs: Vec<StoredDoc> = it
            .by_ref()
            .take(limit.max(1))
            .map(|(_, d)| d.clone())
            .collect();
        let next = match docs.last() {
            Some(last) if it.next().is_some() => Some(last.url.to_string()),
            _ => None,
        };
        Ok(DocPage::new(docs, next))
    }

    async fn delete_job(&self, job: &JobId) -> Result<usize> {
        let mut g = self.lock()?;
        let n = g.manifests.remove(job).map_or(0, |m| m.len());
        g.holders.remove(job);
        let prefix = job_prefix(job);
        g.objects.retain(|k, _| !k.starts_with(&prefix));
        Ok(n)
    }

    async fn put_aux(&self, job: &JobId, name: &str, bytes: Vec<u8>) -> Result<String> {
        let key = crate::keys::aux_key(job, name)?;
        self.lock()?.objects.insert(key.clone(), bytes);
        Ok(key)
    }

    async fn remove(&self, job: &JobId, url: &url::Url) -> Result<Option<StoredDoc>> {
        let mut g = self.lock()?;
        let st = &mut *g;
        let Some(stored) = st
            .manifests
            .get_mut(job)
            .and_then(|m| m.remove(url.as_str()))
        else {
            return Ok(None);
        };
        if let Some(h) = st.holders.get_mut(job) {
            h.remove(&stored.key);
        }
        st.objects.remove(&stored.key);
        Ok(Some(stored))
    }

    async fn delete_aux(&self, job: &JobId, name: &str) -> Result<()> {
        let key = crate::keys::aux_key(job, name)?;
        self.lock()?.objects.remove(&key);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn memory_sink_passes_the_conformance_suite() {
        crate::conformance::sink_suite(Arc::new(MemorySink::new())).await;
    }
}

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use url::Url;

use crate::error::{Error, ErrorKind, Result};
use crate::source::{PageBatch, PageState, SourceId, SourceRecord};
use crate::traits::SourceStore;

#[derive(Debug, Default)]
struct Inner {
    sources: BTreeMap<SourceId, SourceRecord>,
    /// Per source: url key -> state.
    pages: BTreeMap<SourceId, BTreeMap<String, PageState>>,
}

/// In-memory [`SourceStore`].
#[derive(Debug, Clone, Default)]
pub struct MemorySourceStore {
    inner: Arc<Mutex<Inner>>,
}

impl MemorySourceStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> Result<MutexGuard<'_, Inner>> {
        self.inner
            .lock()
            .map_err(|_| Error::new(ErrorKind::Internal, "source store lock poisoned"))
    }
}

impl fmt::Display for MemorySourceStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MemorySourceStore")
    }
}

#[async_trait]
impl SourceStore for MemorySourceStore {
    async fn put_source(&self, source: &SourceRecord) -> Result<()> {
        self.lock()?
            .sources
            .insert(source.id.clone(), source.clone());
        Ok(())
    }

    async fn get_source(&self, id: &SourceId) -> Result<Option<SourceRecord>> {
        Ok(self.lock()?.sources.get(id).cloned())
    }

    async fn list_sources(&self, tenant: &str) -> Result<Vec<SourceRecord>> {
        Ok(self
            .lock()?
            .sources
            .values()
            .filter(|s| s.tenant == tenant)
            .cloned()
            .collect())
    }

    async fn list_all_sources(&self) -> Result<Vec<SourceRecord>> {
        let mut all: Vec<SourceRecord> = self.lock()?.sources.values().cloned().collect();
        all.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(all)
    }

    async fn delete_source(&self, id: &SourceId) -> Result<usize> {
        let mut g = self.lock()?;
        g.sources.remove(id);
        Ok(g.pages.remove(id).map_or(0, |p| p.len()))
    }

    async fn get_page(&self, id: &SourceId, url: &Url) -> Result<Option<PageState>> {
        Ok(self
            .lock()?
            .pages
            .get(id)
            .and_then(|p| p.get(&PageState::url_key(url)))
            .cloned())
    }

    async fn put_pages(&self, id: &SourceId, pages: &[PageState]) -> Result<()> {
        let mut g = self.lock()?;
        let map = g.pages.entry(id.clone()).or_default();
        for p in pages {
            map.insert(PageState::url_key(&p.url), p.clone());
        }
        Ok(())
    }

    async fn remove_pages(&self, id: &SourceId, urls: &[Url]) -> Result<usize> {
        let mut g = self.lock()?;
        let Some(map) = g.pages.get_mut(id) else {
            return Ok(0);
        };
        Ok(urls
            .iter()
            .filter(|u| map.remove(&PageState::url_key(u)).is_some())
            .count())
    }

    async fn list_pages(
        &self,
        id: &SourceId,
        after: Option<&str>,
        limit: usize,
    ) -> Result<PageBatch> {
        let limit = limit.max(1);
        let g = self.lock()?;
        let Some(map) = g.pages.get(id) else {
            return Ok(PageBatch::default());
        };
        let mut iter: Box<dyn Iterator<Item = (&String, &PageState)>> = match after {
            Some(a) => Box::new(
                map.range::<str, _>((std::ops::Bound::Excluded(a), std::ops::Bound::Unbounded)),
            ),
            None => Box::new(map.iter()),
        };
        let pages: Vec<PageState> = iter.by_ref().take(limit).map(|(_, p)| p.clone()).collect();
        let more = iter.next().is_some();
        Ok(PageBatch::ending(pages, more))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn conformance() {
        crate::conformance::source_store_suite(Arc::new(MemorySourceStore::new())).await;
    }
}

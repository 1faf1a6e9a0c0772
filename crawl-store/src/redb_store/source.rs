//! [`SourceStore`] on the same redb file: the sources and the per-page state of each, so a
//! sync survives restarts and crashes with the rest of the crawl state.

use async_trait::async_trait;
use crawl_core::{PageBatch, PageState, Result, SourceId, SourceRecord, SourceStore};
use redb::{ReadableTable, TableDefinition, TableError};
use url::Url;

use super::{db_err, json_err, RedbStore};

const SOURCES: TableDefinition<&str, &[u8]> = TableDefinition::new("sources");
/// `{source id}\x01{url key}` -> page state (JSON).
const PAGES: TableDefinition<&str, &[u8]> = TableDefinition::new("source_pages");

fn page_key(id: &SourceId, url_key: &str) -> String {
    format!("{id}\u{1}{url_key}")
}

fn page_range(id: &SourceId) -> (String, String) {
    (format!("{id}\u{1}"), format!("{id}\u{2}"))
}

/// A table that was never written reads as empty.
fn missing(e: &TableError) -> bool {
    matches!(e, TableError::TableDoesNotExist(_))
}

#[async_trait]
impl SourceStore for RedbStore {
    async fn put_source(&self, source: &SourceRecord) -> Result<()> {
        let id = source.id.to_string();
        let bytes = serde_json::to_vec(source).map_err(json_err)?;
        self.write_durable(move |tx| {
            let mut t = tx.open_table(SOURCES).map_err(db_err)?;
            t.insert(id.as_str(), bytes.as_slice()).map_err(db_err)?;
            Ok(())
        })
        .await
    }

    async fn get_source(&self, id: &SourceId) -> Result<Option<SourceRecord>> {
        let id = id.to_string();
        self.read(move |tx| {
            let t = match tx.open_table(SOURCES) {
                Ok(t) => t,
                Err(e) if missing(&e) => return Ok(None),
                Err(e) => return Err(db_err(e)),
            };
            let found = match t.get(id.as_str()).map_err(db_err)? {
                Some(v) => serde_json::from_slice(v.value())
                    .map(Some)
                    .map_err(json_err),
                None => Ok(None),
            };
            found
        })
        .await
    }

    async fn list_sources(&self, tenant: &str) -> Result<Vec<SourceRecord>> {
        let tenant = tenant.to_string();
        self.read(move |tx| {
            let t = match tx.open_table(SOURCES) {
                Ok(t) => t,
                Err(e) if missing(&e) => return Ok(Vec::new()),
                Err(e) => return Err(db_err(e)),
            };
            let mut out = Vec::new();
            for row in t.iter().map_err(db_err)? {
                let (_, v) = row.map_err(db_err)?;
                let rec: SourceRecord = serde_json::from_slice(v.value()).map_err(json_err)?;
                if rec.tenant == tenant {
                    out.push(rec);
                }
            }
            Ok(out)
        })
        .await
    }

    async fn list_all_sources(&self) -> Result<Vec<SourceRecord>> {
        self.read(move |tx| {
            let t = match tx.open_table(SOURCES) {
                Ok(t) => t,
                Err(e) if missing(&e) => return Ok(Vec::new()),
                Err(e) => return Err(db_err(e)),
            };
            let mut out = Vec::new();
            for row in t.iter().map_err(db_err)? {
                let (_, v) = row.map_err(db_err)?;
                out.push(serde_json::from_slice::<SourceRecord>(v.value()).map_err(json_err)?);
            }
            out.sort_by(|a, b| a.id.cmp(&b.id));
            Ok(out)
        })
        .await
    }

    async fn delete_source(&self, id: &SourceId) -> Result<usize> {
        let id = id.clone();
        self.write_durable(move |tx| {
            let mut sources = tx.open_table(SOURCES).map_err(db_err)?;
            sources.remove(id.as_str()).map_err(db_err)?;
            let mut pages = tx.open_table(PAGES).map_err(db_err)?;
            let (lo, hi) = page_range(&id);
            let n = pages
                .extract_from_if(lo.as_str()..hi.as_str(), |_, _| true)
                .map_err(db_err)?
                .count();
            Ok(n)
        })
        .await
    }

    async fn get_page(&self, id: &SourceId, url: &Url) -> Result<Option<PageState>> {
        let key = page_key(id, &PageState::url_key(url));
        self.read(move |tx| {
            let t = match tx.open_table(PAGES) {
                Ok(t) => t,
                Err(e) if missing(&e) => return Ok(None),
                Err(e) => return Err(db_err(e)),
            };
            let found = match t.get(key.as_str()).map_err(db_err)? {
                Some(v) => serde_json::from_slice(v.value())
                    .map(Some)
                    .map_err(json_err),
                None => Ok(None),
            };
            found
        })
        .await
    }

    async fn put_pages(&self, id: &SourceId, pages: &[PageState]) -> Result<()> {
        let rows = pages
            .iter()
            .map(|p| {
                serde_json::to_vec(p)
                    .map(|v| (page_key(id, &PageState::url_key(&p.url)), v))
                    .map_err(json_err)
            })
            .collect::<Result<Vec<_>>>()?;
        self.write(move |tx| {
            let mut t = tx.open_table(PAGES).map_err(db_err)?;
            for (k, v) in &rows {
                t.insert(k.as_str(), v.as_slice()).map_err(db_err)?;
            }
            Ok(())
        })
        .await
    }

    async fn remove_pages(&self, id: &SourceId, urls: &[Url]) -> Result<usize> {
        let keys: Vec<String> = urls
            .iter()
            .map(|u| page_key(id, &PageState::url_key(u)))
            .collect();
        self.write(move |tx| {
            let mut t = tx.open_table(PAGES).map_err(db_err)?;
            let mut n = 0;
            for k in &keys {
                if t.remove(k.as_str()).map_err(db_err)?.is_some() {
                    n += 1;
                }
            }
            Ok(n)
        })
        .await
    }

    async fn list_pages(
        &self,
        id: &SourceId,
        after: Option<&str>,
        limit: usize,
    ) -> Result<PageBatch> {
        let limit = limit.max(1);
        let (lo, hi) = page_range(id);
        // Exclusive start: the smallest key after `{id}\x01{after}`.
        let start = match after {
            Some(a) => format!("{}\u{0}", page_key(id, a)),
            None => lo,
        };
        self.read(move |tx| {
            let t = match tx.open_table(PAGES) {
                Ok(t) => t,
                Err(e) if missing(&e) => return Ok(PageBatch::default()),
                Err(e) => return Err(db_err(e)),
            };
            let mut rows = t.range(start.as_str()..hi.as_str()).map_err(db_err)?;
            let mut pages = Vec::with_capacity(limit.min(1024));
            for row in rows.by_ref().take(limit) {
                let (_, v) = row.map_err(db_err)?;
                pages.push(serde_json::from_slice::<PageState>(v.value()).map_err(json_err)?);
            }
            let more = rows.next().is_some();
            Ok(PageBatch::ending(pages, more))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[tokio::test]
    async fn conformance() {
        let dir = tempfile::tempdir().unwrap();
        let store = RedbStore::open(dir.path().join("state.redb")).unwrap();
        crawl_core::conformance::source_store_suite(Arc::new(store)).await;
    }

    #[tokio::test]
    async fn sources_and_pages_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.redb");
        let store = RedbStore::open(&path).unwrap();
        let root = Url::parse("https://www.example.edu/").unwrap();
        let rec = SourceRecord::new("ast-1", root.clone(), time::OffsetDateTime::UNIX_EPOCH);
        store.put_source(&rec).await.unwrap();
        let run = crawl_core::JobId::new();
        let page = PageState::new(
            root.join("a").unwrap(),
            "job/site/a.md",
            "abc",
            time::OffsetDateTime::UNIX_EPOCH,
            run,
        );
        store
            .put_pages(&rec.id, std::slice::from_ref(&page))
            .await
            .unwrap();
        drop(store);
        let again = RedbStore::open(&path).unwrap();
        assert_eq!(again.get_source(&rec.id).await.unwrap(), Some(rec.clone()));
        assert_eq!(
            again.get_page(&rec.id, &page.url).await.unwrap(),
            Some(page)
        );
    }
}

//! Link fan-out (issue 18, item 5): pages with far more links than the page budget leave
//! state bounded by the budget, not by the links, and every dropped link is still counted.

use crate::support;

use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use kb_crawl::memory::MemoryDedup;
use kb_crawl::url::{dedup_key, normalize};
use kb_crawl::{CrawlRequest, Crawler, DedupStore, Guardrails, JobId, JobStatus, Result};
use support::Fixture;
use url::Url;

/// A dedup store that counts the keys written to it.
#[derive(Debug, Default)]
struct CountingDedup {
    inner: MemoryDedup,
    inserted: AtomicUsize,
}

impl fmt::Display for CountingDedup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CountingDedup({})", self.inner)
    }
}

#[async_trait]
impl DedupStore for CountingDedup {
    async fn insert(&self, job: &JobId, key: &str) -> Result<bool> {
        self.inserted.fetch_add(1, Ordering::SeqCst);
        self.inner.insert(job, key).await
    }
    async fn insert_many(&self, job: &JobId, keys: &[String]) -> Result<Vec<bool>> {
        self.inserted.fetch_add(keys.len(), Ordering::SeqCst);
        self.inner.insert_many(job, keys).await
    }
    async fn contains(&self, job: &JobId, key: &str) -> Result<bool> {
        self.inner.contains(job, key).await
    }
    async fn clear_job(&self, job: &JobId) -> Result<()> {
        self.inner.clear_job(job).await
    }
}

/// `index.html` links to `p/0.html` .. `p/{links-1}.html`; the first five of those exist and
/// each links to `links` pages of its own.
fn wide_site(links: usize) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kbc-fanout-{}", &JobId::new().as_str()[4..]));
    std::fs::create_dir_all(dir.join("p")).unwrap();
    let page = |title: &str, hrefs: String| {
        format!(
            "<!doctype html><html lang=en><head><title>{title}</title></head><body><main>\
             <h1>{title}</h1><p>This page is called {title}; it has enough words to count as \
             real content for the extractor, which keeps paragraphs like this.</p>{hrefs}\
             </main></body></html>"
        )
    };
    let hrefs = |prefix: &str| -> String {
        (0..links)
            .map(|i| format!("<a href=\"{prefix}{i}.html\">x</a>"))
            .collect()
    };
    std::fs::write(dir.join("index.html"), page("Home", hrefs("/p/"))).unwrap();
    for i in 0..5 {
        std::fs::write(
            dir.join(format!("p/{i}.html")),
            page(&format!("Page {i}"), hrefs(&format!("/q/{i}/"))),
        )
        .unwrap();
    }
    dir
}

#[tokio::test]
async fn links_past_the_budget_and_the_per_page_cap_are_counted_not_stored() {
    let dir = wide_site(12_000);
    let fx = Fixture::serve(dir.clone()).await;
    let dedup = Arc::new(CountingDedup::default());
    let crawler = Crawler::builder()
        .dedup(Arc::clone(&dedup) as _)
        .build()
        .unwrap();
    let req = CrawlRequest::builder(fx.url("/index.html"))
        .max_depth(2)
        .max_pages(6)
        .concurrency(2)
        .rate(None)
        .detect_soft_404(false)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .build()
        .unwrap();
    assert_eq!(req.max_links_per_page, 5_000, "the documented default");
    let rec = crawler.run(req).await.unwrap();
    assert_eq!(rec.status, JobStatus::Completed, "{:?}", rec.failure);
    let p = &rec.progress;
    assert_eq!((p.pages_total, p.stored), (6, 6), "{p:?}");
    // Six pages with 12,000 links each: 7,000 of each over the cap of 5,000.
    assert_eq!(p.excluded.get("links_per_page"), Some(&42_000), "{p:?}");
    // The root's 5,000 links: 5 admitted, 4,995 over budget; each of the five pages
    // brings 5,000 links of its own, all over budget.
    assert_eq!(
        p.excluded.get("max_pages"),
        Some(&(4_995 + 5 * 5_000)),
        "{p:?}"
    );
    // One dedup record per admitted page, none per link.
    assert_eq!(dedup.inserted.load(Ordering::SeqCst), 6);
    // The ended job's records are gone.
    let root = normalize(&Url::parse(&fx.url("/index.html")).unwrap()).unwrap();
    assert!(!dedup
        .contains(&rec.id, &dedup_key(&root, true))
        .await
        .unwrap());
    let _ = std::fs::remove_dir_all(dir);
}

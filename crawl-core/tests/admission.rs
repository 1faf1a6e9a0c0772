//! Admission under a page cap does not depend on timing: the same capped crawl at
//! concurrency 1, 4 and 16, with random server delays, admits one set of pages.

use crate::common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use common::{Fixture, Reply};
use crawl_core::memory::MemorySink;
use crawl_core::{CrawlRequest, Crawler, Guardrails, JobStatus, Sink, SitemapMode};

/// A tree: `/` links `/n0`..`/n9`; `/nI` links `/nI-0`..`/nI-9` and, out of order, some of
/// its siblings' children (so a page is reachable at two depths through two parents).
fn html(path: &str) -> String {
    let links: Vec<String> = if path == "/" {
        (0..10).map(|i| format!("/n{i}")).collect()
    } else if let Some(i) = path.strip_prefix("/n").filter(|r| !r.contains('-')) {
        let i: u32 = i.parse().unwrap_or(0);
        let mut l: Vec<String> = (0..10).map(|j| format!("/n{i}-{j}")).collect();
        l.push(format!("/n{}-{}", (i + 7) % 10, (i * 3) % 10));
        l.insert(0, format!("/n{}-9", (i + 1) % 10));
        l
    } else {
        Vec::new()
    };
    let list: String = links
        .iter()
        .map(|l| format!("<li><a href=\"{l}\">page {l}</a></li>"))
        .collect();
    format!(
        "<!doctype html><html><head><title>Page {path}</title></head><body><main>\
         <h1>Page {path}</h1><p>This is the page at {path}, with words enough to keep.</p>\
         <ul>{list}</ul></main></body></html>"
    )
}

async fn admitted(fx: &Fixture, concurrency: usize) -> BTreeSet<String> {
    let sink = Arc::new(MemorySink::new());
    let crawler = Crawler::builder()
        .sink(Arc::clone(&sink) as _)
        .build()
        .unwrap();
    let req = CrawlRequest::builder(fx.url("/").as_str())
        .max_depth(3)
        .max_pages(37)
        .concurrency(concurrency)
        .rate(None)
        .sitemap(SitemapMode::Off)
        .detect_soft_404(false)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .build()
        .unwrap();
    let rec = crawler.run(req).await.unwrap();
    assert_eq!(rec.status, JobStatus::Completed, "{rec:?}");
    assert_eq!(rec.progress.pages_total, 37);
    sink.list(&rec.id)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.url.path().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_capped_crawl_admits_the_same_pages_at_any_concurrency() {
    let fx = Fixture::start(|hit, _| {
        if hit.path == "/robots.txt" {
            return Reply::status(404);
        }
        let path = hit.path.clone();
        Reply::raw(move |mut s| async move {
            use tokio::io::AsyncWriteExt;
            // Random delays reorder when pages finish.
            tokio::time::sleep(Duration::from_millis(rand::random::<u64>() % 40)).await;
            let body = html(&path);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = s.write_all(head.as_bytes()).await;
            let _ = s.write_all(body.as_bytes()).await;
            let _ = s.shutdown().await;
        })
    })
    .await;
    let reference = admitted(&fx, 1).await;
    assert_eq!(reference.len(), 37);
    // Breadth-first: the root, its ten children, then the first 26 grandchildren in the
    // order their parents were admitted and the links appear on them.
    let mut expected: BTreeSet<String> = ["/".to_owned()].into();
    expected.extend((0..10).map(|i| format!("/n{i}")));
    let mut grand = Vec::new();
    for i in 0..10u32 {
        let mut l: Vec<String> = vec![format!("/n{}-9", (i + 1) % 10)];
        l.extend((0..10).map(|j| format!("/n{i}-{j}")));
        l.push(format!("/n{}-{}", (i + 7) % 10, (i * 3) % 10));
        for u in l {
            if !grand.contains(&u) {
                grand.push(u);
            }
        }
    }
    expected.extend(grand.into_iter().take(26));
    assert_eq!(reference, expected);
    for concurrency in [4, 16, 4, 16] {
        assert_eq!(
            admitted(&fx, concurrency).await,
            reference,
            "concurrency {concurrency} admitted another set"
        );
    }
}

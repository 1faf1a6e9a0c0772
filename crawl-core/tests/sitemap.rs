//! Sitemaps over loopback sites: sitemap-only pages are found (and not with `sitemap: off`),
//! index files of gzip sitemaps, off-site and malformed entries, loops and depth caps, and a
//! 200,000-URL sitemap under a 100-page cap, checked by counts.

use crate::common;

use std::collections::BTreeSet;
use std::fmt;
use std::io::Write;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use common::{Fixture, Hit, Reply};
use crawl_core::memory::MemoryFrontier;
use crawl_core::{
    CrawlRequest, Crawler, Frontier, FrontierEntry, Guardrails, JobId, JobRecord, JobStatus,
    Result, SitemapMode,
};
use url::Url;

fn page(title: &str, links: &[&str]) -> Reply {
    let links: String = links
        .iter()
        .map(|l| format!("<li><a href=\"{l}\">{l}</a></li>"))
        .collect();
    Reply::html(&format!(
        "<!doctype html><html><head><title>{title}</title></head><body><main>\
         <h1>{title}</h1><p>The {title} page has enough words to be kept as a document.</p>\
         <ul>{links}</ul></main></body></html>"
    ))
}

/// `http://host:port` of the request, for absolute `<loc>`s.
fn origin(hit: &Hit) -> String {
    let host = hit
        .headers
        .iter()
        .find(|(k, _)| k == "host")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    format!("http://{host}")
}

fn urlset(locs: &[String]) -> String {
    let mut s = String::from(
        r#"<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#,
    );
    for l in locs {
        s.push_str(&format!("<url><loc>{l}</loc></url>"));
    }
    s.push_str("</urlset>");
    s
}

fn index(locs: &[String]) -> String {
    let mut s =
        String::from(r#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">"#);
    for l in locs {
        s.push_str(&format!("<sitemap><loc>{l}</loc></sitemap>"));
    }
    s.push_str("</sitemapindex>");
    s
}

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(b).unwrap();
    enc.finish().unwrap()
}

fn request(fx: &Fixture, mode: SitemapMode, max_pages: u32) -> CrawlRequest {
    CrawlRequest::builder(fx.url("/").as_str())
        .max_depth(3)
        .max_pages(max_pages)
        .concurrency(4)
        .rate(None)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .detect_soft_404(false)
        .sitemap(mode)
        .build()
        .unwrap()
}

/// A frontier that remembers every entry pushed (to see the `<lastmod>` carried).
#[derive(Debug, Default)]
struct Recording {
    inner: MemoryFrontier,
    pushed: Mutex<Vec<FrontierEntry>>,
}

impl fmt::Display for Recording {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Recording")
    }
}

#[async_trait]
impl Frontier for Recording {
    async fn push(&self, job: &JobId, entries: Vec<FrontierEntry>) -> Result<()> {
        self.pushed.lock().unwrap().extend(entries.iter().cloned());
        self.inner.push(job, entries).await
    }
    async fn pop(&self, job: &JobId) -> Result<Option<FrontierEntry>> {
        self.inner.pop(job).await
    }
    async fn complete(&self, job: &JobId, url: &Url) -> Result<()> {
        self.inner.complete(job, url).await
    }
    async fn requeue_leased(&self, job: &JobId) -> Result<usize> {
        self.inner.requeue_leased(job).await
    }
    async fn pending(&self, job: &JobId) -> Result<usize> {
        self.inner.pending(job).await
    }
    async fn clear_job(&self, job: &JobId) -> Result<()> {
        self.inner.clear_job(job).await
    }
}

async fn run(req: CrawlRequest) -> (Crawler, JobRecord, Arc<Recording>) {
    let frontier = Arc::new(Recording::default());
    let crawler = Crawler::builder()
        .frontier(Arc::clone(&frontier) as _)
        .build()
        .unwrap();
    let rec = crawler.run(req).await.unwrap();
    assert_eq!(rec.status, JobStatus::Completed, "{:?}", rec.failure);
    (crawler, rec, frontier)
}

async fn stored(crawler: &Crawler, rec: &JobRecord) -> BTreeSet<String> {
    crawler
        .sink()
        .list(&rec.id)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.url.path().to_owned())
        .collect()
}

fn set(paths: &[&str]) -> BTreeSet<String> {
    paths.iter().map(|p| (*p).to_owned()).collect()
}

async fn small_site() -> Fixture {
    Fixture::start(|hit, _| match hit.path.as_str() {
        "/robots.txt" => Reply::text("User-agent: *\nDisallow: /private/\nSitemap: /sm.xml\n"),
        "/sm.xml" => {
            let o = origin(hit);
            Reply::ok(
                "application/xml",
                format!(
                    "<urlset><url><loc>{o}/only-in-sitemap</loc>\
                     <lastmod>2024-05-01T10:00:00+00:00</lastmod></url>\
                     <url><loc>{o}/a</loc></url></urlset>"
                ),
            )
        }
        "/" => page("Home", &["/a", "/c"]),
        "/a" => page("A", &[]),
        "/c" => page("C", &[]),
        "/only-in-sitemap" => page("Only in the sitemap", &[]),
        _ => Reply::status(404),
    })
    .await
}

#[tokio::test]
async fn a_sitemap_only_page_is_found_and_links_still_count() {
    let fx = small_site().await;
    let (crawler, rec, frontier) = run(request(&fx, SitemapMode::Auto, 50)).await;
    // The sitemap lists 2 of the 4 pages: the linked-only page /c is still crawled.
    assert_eq!(
        stored(&crawler, &rec).await,
        set(&["/", "/a", "/c", "/only-in-sitemap"])
    );
    assert_eq!(fx.count("/sm.xml"), 1);
    let pushed = frontier.pushed.lock().unwrap().clone();
    let only = pushed
        .iter()
        .find(|e| e.url.path() == "/only-in-sitemap")
        .unwrap();
    assert_eq!(only.depth, 1, "sitemap URLs count as depth 1");
    assert_eq!(
        only.lastmod,
        Some(time::macros::datetime!(2024-05-01 10:00 UTC))
    );
    assert_eq!(
        pushed
            .iter()
            .find(|e| e.url.path() == "/c")
            .unwrap()
            .lastmod,
        None
    );
}

#[tokio::test]
async fn sitemap_off_finds_no_sitemap_only_page() {
    let fx = small_site().await;
    let (crawler, rec, _) = run(request(&fx, SitemapMode::Off, 50)).await;
    assert_eq!(stored(&crawler, &rec).await, set(&["/", "/a", "/c"]));
    assert_eq!(fx.count("/sm.xml"), 0);
    assert_eq!(fx.count("/sitemap.xml"), 0);
}

#[tokio::test]
async fn a_sitemap_index_of_gzip_sitemaps_with_a_loop_and_a_depth_cap() {
    let fx = Fixture::start(|hit, _| {
        let o = origin(hit);
        match hit.path.as_str() {
            // No Sitemap line: /sitemap.xml is read.
            "/robots.txt" => Reply::status(404),
            "/sitemap.xml" => Reply::ok(
                "application/xml",
                index(&[
                    format!("{o}/s1.xml.gz"),
                    format!("{o}/s2.xml"),
                    format!("{o}/sitemap.xml"),
                    format!("{o}/nested.xml"),
                ]),
            ),
            // A .gz file served as such: recognised by its magic bytes.
            "/s1.xml.gz" => Reply::ok(
                "application/x-gzip",
                gzip(urlset(&[format!("{o}/g1"), format!("{o}/g2")]).as_bytes()),
            ),
            // Gzip by Content-Encoding: the HTTP client undoes it.
            "/s2.xml" => Reply::ok(
                "application/xml",
                gzip(urlset(&[format!("{o}/e1")]).as_bytes()),
            )
            .header("Content-Encoding", "gzip"),
            "/nested.xml" => Reply::ok(
                "text/xml",
                index(&[format!("{o}/nested2.xml"), format!("{o}/s2.xml")]),
            ),
            "/nested2.xml" => Reply::ok(
                "text/xml",
                index(&[format!("{o}/too-deep.xml"), format!("{o}/s1.xml.gz")]),
            ),
            "/too-deep.xml" => Reply::ok("text/xml", urlset(&[format!("{o}/deep")])),
            "/" => page("Home", &[]),
            "/g1" | "/g2" | "/e1" | "/deep" => page(&hit.path[1..], &[]),
            _ => Reply::status(404),
        }
    })
    .await;
    let (crawler, rec, _) = run(request(&fx, SitemapMode::Auto, 50)).await;
    assert_eq!(
        stored(&crawler, &rec).await,
        set(&["/", "/g1", "/g2", "/e1"])
    );
    let ex = &rec.progress.excluded;
    // The index names itself, and nested names s2 again.
    assert_eq!(ex.get("sitemap_loop"), Some(&2), "{ex:?}");
    // sitemap.xml (0) → nested (1) → nested2 (2) → too-deep and s1 (3): refused.
    assert_eq!(ex.get("sitemap_depth_cap"), Some(&2), "{ex:?}");
    assert_eq!(fx.count("/too-deep.xml"), 0);
    assert_eq!(fx.count("/sitemap.xml"), 1);
    assert_eq!(fx.count("/s1.xml.gz"), 1);
}

#[tokio::test]
async fn off_site_malformed_and_unavailable_sitemaps_are_counted_and_the_crawl_goes_on() {
    let fx = Fixture::start(|hit, _| {
        let o = origin(hit);
        match hit.path.as_str() {
            "/robots.txt" => Reply::text(
                "User-agent: *\nDisallow: /private/\n\
                 Sitemap: http://other.invalid/sitemap.xml\n\
                 Sitemap: /private/sm.xml\nSitemap: /gone.xml\nSitemap: /bad.xml\n\
                 Sitemap: /html.xml\n",
            ),
            "/bad.xml" => Reply::ok(
                "application/xml",
                format!(
                    "<urlset><url><loc>https://other.example/x</loc></url>\
                     <url><loc>/relative</loc></url><url><loc>not a url</loc></url>\
                     <url><loc>javascript:alert(1)</loc></url><url><lastmod>2024</lastmod></url>\
                     <url><loc>{o}/listed</loc></url><url><loc>{o}/broken</lo"
                ),
            ),
            "/html.xml" => page("Not a sitemap", &[]),
            "/" => page("Home", &[]),
            "/listed" => page("Listed", &[]),
            "/private/sm.xml" => Reply::ok("application/xml", urlset(&[format!("{o}/secret")])),
            _ => Reply::status(404),
        }
    })
    .await;
    let (crawler, rec, _) = run(request(&fx, SitemapMode::Auto, 50)).await;
    assert_eq!(stored(&crawler, &rec).await, set(&["/", "/listed"]));
    let ex = &rec.progress.excluded;
    // The off-site sitemap file and the off-site entry.
    assert_eq!(ex.get("sitemap_off_site"), Some(&2), "{ex:?}");
    // /relative, "not a url", javascript:, the entry without <loc>.
    assert_eq!(ex.get("sitemap_bad_url"), Some(&4), "{ex:?}");
    // bad.xml is cut short; html.xml is not a sitemap.
    assert_eq!(ex.get("sitemap_malformed"), Some(&2), "{ex:?}");
    // /private/sm.xml is disallowed by robots.txt, /gone.xml answers 404.
    assert_eq!(ex.get("sitemap_unavailable"), Some(&2), "{ex:?}");
    assert_eq!(
        fx.count("/private/sm.xml"),
        0,
        "robots.txt applies to sitemaps"
    );
}

#[tokio::test]
async fn a_200000_url_sitemap_under_a_100_page_cap_takes_only_what_the_budget_allows() {
    const FILES: usize = 4;
    const PER_FILE: usize = 50_000;
    let fx = Fixture::start(|hit, _| {
        let o = origin(hit);
        let path = hit.path.as_str();
        if path == "/robots.txt" {
            return Reply::text("Sitemap: /index.xml\n");
        }
        if path == "/index.xml" {
            let files: Vec<String> = (0..FILES).map(|i| format!("{o}/s{i}.xml")).collect();
            return Reply::ok("application/xml", index(&files));
        }
        if let Some(i) = path
            .strip_prefix("/s")
            .and_then(|r| r.strip_suffix(".xml"))
            .and_then(|n| n.parse::<usize>().ok())
        {
            let locs: Vec<String> = (0..PER_FILE)
                .map(|n| format!("{o}/p/{}", i * PER_FILE + n))
                .collect();
            return Reply::ok("application/xml", urlset(&locs));
        }
        if path == "/" || path.starts_with("/p/") {
            return page(path, &[]);
        }
        Reply::status(404)
    })
    .await;
    let (crawler, rec, frontier) = run(request(&fx, SitemapMode::Auto, 100)).await;
    let p = &rec.progress;
    assert_eq!((p.pages_total, p.stored), (100, 100), "{p:?}");
    assert_eq!(stored(&crawler, &rec).await.len(), 100);
    // The root took one page; two batches of 64 sitemap URLs reached the ledger: 99 were
    // admitted and 29 found the budget spent.
    assert_eq!(p.excluded.get("max_pages"), Some(&29), "{p:?}");
    // The rest of the first file was counted, not taken; the other files were never read.
    assert_eq!(
        p.excluded.get("sitemap_over_budget"),
        Some(&((PER_FILE - 128) as u64)),
        "{p:?}"
    );
    for i in 1..FILES {
        assert_eq!(fx.count(&format!("/s{i}.xml")), 0);
    }
    // What the job held: 100 queued pages, never the 200,000 URLs.
    assert_eq!(frontier.pushed.lock().unwrap().len(), 100);
}

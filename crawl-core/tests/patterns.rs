//! Include/exclude patterns over a loopback site: the exact stored set and the
//! `excluded.pattern` count.

use crate::common;

use std::collections::BTreeSet;

use common::{Fixture, Reply};
use crawl_core::{CrawlRequest, Crawler, Guardrails, JobStatus, SitemapMode};

fn page(title: &str, links: &[&str]) -> String {
    let links: String = links
        .iter()
        .map(|l| format!("<li><a href=\"{l}\">{l}</a></li>"))
        .collect();
    format!(
        "<!doctype html><html><head><title>{title}</title></head><body><main>\
         <h1>{title}</h1><p>The {title} page has enough words to be kept as a document.</p>\
         <ul>{links}</ul></main></body></html>"
    )
}

async fn site() -> Fixture {
    Fixture::start(|hit, _| match hit.path.as_str() {
        "/registrar" => Reply::html(&page(
            "Registrar",
            &[
                "/registrar/a",
                "/registrar/b",
                "/registrar/print/a",
                "/admissions",
                "/registrar/b?print=1",
            ],
        )),
        "/registrar/a" => Reply::html(&page("A", &["/registrar/print/b", "/registrar/c"])),
        "/registrar/b" => Reply::html(&page("B", &["/other", "/registrar/old"])),
        "/registrar/c" => Reply::html(&page("C", &["/registrar"])),
        // A redirect from an included page to an excluded one is not followed.
        "/registrar/old" => Reply::redirect(301, "/registrar/print/old"),
        "/registrar/print/a"
        | "/registrar/print/b"
        | "/registrar/print/old"
        | "/admissions"
        | "/other" => Reply::html(&page("Excluded", &["/registrar/never"])),
        _ => Reply::status(404),
    })
    .await
}

#[tokio::test]
async fn include_and_exclude_give_the_exact_stored_set() {
    let fx = site().await;
    let req = CrawlRequest::builder(fx.url("/registrar").as_str())
        .max_depth(3)
        .max_pages(50)
        .rate(None)
        .guardrails(Guardrails::lifted())
        .allow_private_network(true)
        .detect_soft_404(false)
        .sitemap(SitemapMode::Off)
        .include(["/registrar/**"])
        .exclude(["**/print/**", "**/*[?]*print=1*"])
        .build()
        .unwrap();
    let crawler = Crawler::builder().build().unwrap();
    let rec = crawler.run(req).await.unwrap();
    assert_eq!(rec.status, JobStatus::Completed, "{:?}", rec.failure);
    let stored: BTreeSet<String> = crawler
        .sink()
        .list(&rec.id)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.url.path().to_owned())
        .collect();
    let want: BTreeSet<String> = ["/registrar", "/registrar/a", "/registrar/b", "/registrar/c"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(stored, want);
    // /registrar/print/a, /admissions, /registrar/b?print=1, /registrar/print/b, /other.
    assert_eq!(
        rec.progress.excluded.get("pattern"),
        Some(&5),
        "{:?}",
        rec.progress
    );
    assert_eq!(
        rec.progress.skipped.get("redirect_excluded_pattern"),
        Some(&1),
        "{:?}",
        rec.progress
    );
    // No excluded page was ever requested.
    for p in [
        "/registrar/print/a",
        "/registrar/print/b",
        "/admissions",
        "/other",
    ] {
        assert_eq!(fx.count(p), 0, "{p} was fetched");
    }
    assert_eq!(fx.count("/registrar/print/old"), 0);
}

#[tokio::test]
async fn an_unvalidated_request_with_a_bad_pattern_is_refused_at_start() {
    let fx = site().await;
    let req = CrawlRequest::builder(fx.url("/registrar").as_str())
        .allow_private_network(true)
        .build()
        .unwrap();
    let mut json = serde_json::to_value(&req).unwrap();
    json["exclude"] = serde_json::json!(["/a/[b"]);
    let bad: CrawlRequest = serde_json::from_value(json).unwrap();
    let e = Crawler::builder()
        .build()
        .unwrap()
        .start(bad)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("exclude: pattern '/a/[b'"), "{e}");
}

//! RobotsLayer against local fixture servers: RFC 9309 status handling, redirects, size and
//! parser guards, caching per origin per job.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{closed_port, local_fetcher, local_fetcher_with_deadline, Fixture, Reply};
use crawl_core::politeness::{origin_of, RobotsLayer};
use crawl_core::{ErrorKind, FetchRequest, Fetcher, JobId};
use url::Url;

const UA: &str = "kb-crawl/0.1 (+test)";

fn layer() -> RobotsLayer {
    RobotsLayer::new(Arc::new(local_fetcher()), UA)
}

/// A site whose robots.txt is answered by `robots`; every other path is a small page.
async fn site<F>(robots: F) -> Fixture
where
    F: Fn(usize) -> Reply + Send + Sync + 'static,
{
    Fixture::start(move |hit, n| {
        if hit.path == "/robots.txt" {
            robots(n)
        } else {
            Reply::html("<p>page</p>")
        }
    })
    .await
}

#[tokio::test]
async fn robots_4xx_allows_all() {
    for status in [400, 401, 403, 404, 410, 418] {
        let fx = site(move |_| Reply::status(status)).await;
        let l = layer();
        l.check(&fx.url("/any/page"), None)
            .await
            .unwrap_or_else(|e| panic!("{status}: {e}"));
        let r = l.fetch(&FetchRequest::page(fx.url("/p"))).await.unwrap();
        assert_eq!(r.status, 200);
    }
}

#[tokio::test]
async fn robots_5xx_disallows_all() {
    for status in [500, 502, 503, 504] {
        let fx = site(move |_| Reply::status(status)).await;
        let l = layer();
        let e = l.check(&fx.url("/page"), None).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::RobotsUnreachable, "{status}: {e}");
        assert_eq!(e.code(), "robots_unreachable");
        assert!(!e.is_temporary());
        // robots.txt itself stays allowed; the page is never fetched.
        l.check(&fx.url("/robots.txt"), None).await.unwrap();
        let e = l
            .fetch(&FetchRequest::page(fx.url("/page")))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::RobotsUnreachable);
        assert_eq!(fx.count("/page"), 0);
    }
}

#[tokio::test]
async fn robots_429_disallows_all() {
    let fx = site(|_| Reply::status(429).header("Retry-After", "1")).await;
    let e = layer().check(&fx.url("/page"), None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RobotsUnreachable, "{e}");
}

#[tokio::test]
async fn robots_connection_refused_disallows_all() {
    let addr = closed_port().await;
    let url = Url::parse(&format!("http://{addr}/page")).unwrap();
    let e = layer().check(&url, None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RobotsUnreachable, "{e}");
}

#[tokio::test]
async fn robots_timeout_disallows_all() {
    let fx = site(|_| {
        Reply::raw(|s| async move {
            tokio::time::sleep(Duration::from_secs(10)).await;
            drop(s);
        })
    })
    .await;
    let l = RobotsLayer::new(
        Arc::new(local_fetcher_with_deadline(Duration::from_millis(500))),
        UA,
    );
    let e = l.check(&fx.url("/page"), None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RobotsUnreachable, "{e}");
    assert!(e.to_string().contains("timeout"), "{e}");
}

#[tokio::test]
async fn robots_dns_failure_disallows_all() {
    let l = RobotsLayer::new(
        Arc::new(
            crawl_core::http::HttpFetcher::builder()
                .resolver(Arc::new(NxDomain))
                .build()
                .unwrap(),
        ),
        UA,
    );
    let e = l
        .check(&Url::parse("http://nowhere.test/page").unwrap(), None)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RobotsUnreachable, "{e}");
}

#[derive(Debug)]
struct NxDomain;

#[async_trait::async_trait]
impl crawl_core::net::Resolver for NxDomain {
    async fn lookup(&self, _: &str, _: u16) -> std::io::Result<Vec<std::net::SocketAddr>> {
        Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "NXDOMAIN",
        ))
    }
}

/// robots.txt redirects `hops` times (/robots.txt → /r1 → … → /rN) before the rules.
async fn redirecting_site(hops: usize) -> Fixture {
    Fixture::start(move |hit, _| {
        let step = if hit.path == "/robots.txt" {
            Some(0)
        } else {
            hit.path
                .strip_prefix("/r")
                .and_then(|n| n.parse::<usize>().ok())
        };
        match step {
            Some(n) if n < hops => Reply::redirect(301, &format!("/r{}", n + 1)),
            Some(_) => Reply::text("User-agent: *\nDisallow: /private\n"),
            None => Reply::html("<p>page</p>"),
        }
    })
    .await
}

#[tokio::test]
async fn robots_five_redirects_are_followed() {
    let fx = redirecting_site(5).await;
    let l = layer();
    let e = l.check(&fx.url("/private/x"), None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RobotsDisallowed, "{e}");
    l.check(&fx.url("/public"), None).await.unwrap();
    assert_eq!(fx.count("/r5"), 1);
}

#[tokio::test]
async fn robots_six_redirects_are_unreachable() {
    let fx = redirecting_site(6).await;
    let e = layer().check(&fx.url("/public"), None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RobotsUnreachable, "{e}");
    assert_eq!(fx.count("/r6"), 0, "the sixth redirect is not followed");
}

#[tokio::test]
async fn robots_redirect_to_private_address_is_refused_and_disallows() {
    // The hop goes through the inner HttpFetcher, whose policy refuses metadata addresses
    // even with allow_private; a refused hop makes robots.txt unreachable.
    for target in [
        "http://169.254.169.254/robots.txt",
        "http://metadata.google.internal/robots.txt",
        "file:///etc/passwd",
    ] {
        let t = target.to_owned();
        let fx = site(move |_| Reply::redirect(302, &t)).await;
        let e = layer().check(&fx.url("/page"), None).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::RobotsUnreachable, "{target}: {e}");
        assert!(e.to_string().contains("network_policy"), "{e}");
    }
}

#[tokio::test]
async fn robots_redirect_to_loopback_refused_under_public_policy() {
    // With the default policy even the first hop is refused (127.0.0.1): unreachable.
    let fx = site(|_| Reply::text("User-agent: *\nAllow: /\n")).await;
    let l = RobotsLayer::new(
        Arc::new(crawl_core::http::HttpFetcher::builder().build().unwrap()),
        UA,
    );
    let e = l.check(&fx.url("/page"), None).await.unwrap_err();
    // The policy check of the page URL itself comes first.
    assert_eq!(e.kind(), ErrorKind::PolicyRefused, "{e}");
    assert_eq!(fx.hits().len(), 0);
}

#[tokio::test]
async fn robots_5mib_file_parses_first_500kib() {
    let mut body = String::from("User-agent: *\nDisallow: /early\n");
    while body.len() < 5 * 1024 * 1024 {
        body.push_str("Allow: /padding-padding-padding-padding-padding-padding\n");
    }
    body.push_str("Disallow: /late\n");
    let fx = site(move |_| Reply::text(&body)).await;
    let l = layer();
    assert_eq!(
        l.check(&fx.url("/early"), None).await.unwrap_err().kind(),
        ErrorKind::RobotsDisallowed
    );
    l.check(&fx.url("/late"), None).await.unwrap();
}

#[tokio::test]
async fn robots_utf8_bom_is_stripped() {
    let fx = site(|_| {
        Reply::ok(
            "text/plain",
            b"\xef\xbb\xbfUser-agent: *\nDisallow: /private\n".to_vec(),
        )
    })
    .await;
    let e = layer().check(&fx.url("/private"), None).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RobotsDisallowed);
}

#[tokio::test]
async fn robots_500_wildcards_rule_served() {
    let mut pat = String::from("/");
    for i in 0..500 {
        pat.push_str(&format!("a{}*", i % 10));
    }
    let body = format!("User-agent: *\nDisallow: {pat}$\n");
    let fx = site(move |_| Reply::text(&body)).await;
    let l = layer();
    let matching: String = (0..500).map(|i| format!("a{}", i % 10)).collect();
    let e = l
        .check(&fx.url(&format!("/{matching}")), None)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RobotsDisallowed);
    l.check(&fx.url(&format!("/{}", "a0".repeat(3000))), None)
        .await
        .unwrap();
}

#[tokio::test]
async fn robots_20000_char_multibyte_line_served() {
    let long: String = "\u{4e2d}\u{1F600}".repeat(10_000);
    let body = format!("User-agent: *\n# {long}\nDisallow: /{long}\nDisallow: /x\n");
    let fx = site(move |_| Reply::text(&body)).await;
    let l = layer();
    assert_eq!(
        l.check(&fx.url("/x"), None).await.unwrap_err().kind(),
        ErrorKind::RobotsDisallowed
    );
    l.check(&fx.url("/y"), None).await.unwrap();
}

#[tokio::test]
async fn robots_html_served_as_robots_allows_all() {
    let fx = site(|_| {
        Reply::html("<!DOCTYPE html><html><body>\nUser-agent: *\nDisallow: /\n</body></html>")
    })
    .await;
    layer().check(&fx.url("/page"), None).await.unwrap();
}

#[tokio::test]
async fn robots_groups_precedence_and_wildcards_served() {
    let fx = site(|_| {
        Reply::text(
            "User-agent: *\nDisallow: /\n\n\
             User-agent: KB-Crawl\nDisallow: /a\nAllow: /a/b\nDisallow: /*.pdf$\nAllow: /same\nDisallow: /same\n",
        )
    })
    .await;
    let l = layer();
    let kind = |r: crawl_core::Result<()>| r.err().map(|e| e.kind());
    // Our group applies, not '*'.
    assert_eq!(kind(l.check(&fx.url("/other"), None).await), None);
    assert_eq!(
        kind(l.check(&fx.url("/a/x"), None).await),
        Some(ErrorKind::RobotsDisallowed)
    );
    assert_eq!(kind(l.check(&fx.url("/a/b/c"), None).await), None);
    assert_eq!(
        kind(l.check(&fx.url("/f.pdf"), None).await),
        Some(ErrorKind::RobotsDisallowed)
    );
    assert_eq!(kind(l.check(&fx.url("/f.pdf?x"), None).await), None);
    assert_eq!(kind(l.check(&fx.url("/same"), None).await), None);
    // Another agent gets the '*' group.
    let other = RobotsLayer::new(Arc::new(local_fetcher()), "OtherBot/2.0");
    assert_eq!(
        kind(other.check(&fx.url("/other"), None).await),
        Some(ErrorKind::RobotsDisallowed)
    );
}

#[tokio::test]
async fn robots_crawl_delay_is_published() {
    let fx = site(|_| Reply::text("User-agent: *\nCrawl-delay: 4\n")).await;
    let l = layer();
    let job = JobId::new();
    l.check(&fx.url("/"), Some(&job)).await.unwrap();
    let origin = origin_of(&fx.url("/"));
    assert_eq!(
        l.crawl_delay(Some(&job), &origin),
        Some(Duration::from_secs(4))
    );
    assert_eq!(l.crawl_delay(None, &origin), None);
}

#[tokio::test]
async fn robots_fetched_once_per_origin_per_job_under_16_concurrent_checks() {
    let fx = site(|_| {
        Reply::raw(|mut s| async move {
            use tokio::io::AsyncWriteExt;
            // Slow enough that all 16 checks start before the answer.
            tokio::time::sleep(Duration::from_millis(300)).await;
            let body = "User-agent: *\nDisallow: /no\n";
            let _ = s
                .write_all(
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    )
                    .as_bytes(),
                )
                .await;
        })
    })
    .await;
    let l = Arc::new(layer());
    let job = JobId::new();
    let mut tasks = Vec::new();
    for i in 0..16 {
        let l = Arc::clone(&l);
        let job = job.clone();
        let url = fx.url(if i % 2 == 0 { "/yes" } else { "/no" });
        tasks.push(tokio::spawn(
            async move { (i, l.check(&url, Some(&job)).await) },
        ));
    }
    for t in tasks {
        let (i, r) = t.await.unwrap();
        assert_eq!(r.is_ok(), i % 2 == 0, "check {i}: {r:?}");
    }
    assert_eq!(fx.count("/robots.txt"), 1);
    // Again in the same job: cached.
    l.check(&fx.url("/yes"), Some(&job)).await.unwrap();
    assert_eq!(fx.count("/robots.txt"), 1);
    // Another job fetches its own copy.
    let job2 = JobId::new();
    l.check(&fx.url("/yes"), Some(&job2)).await.unwrap();
    assert_eq!(fx.count("/robots.txt"), 2);
    // Forgetting a job drops its copy.
    l.forget_job(&job);
    l.check(&fx.url("/yes"), Some(&job)).await.unwrap();
    assert_eq!(fx.count("/robots.txt"), 3);
}

#[tokio::test]
async fn robots_each_origin_has_its_own_robots() {
    let a = site(|_| Reply::text("User-agent: *\nDisallow: /\n")).await;
    let b = site(|_| Reply::status(404)).await;
    let l = layer();
    assert!(l.check(&a.url("/x"), None).await.is_err());
    l.check(&b.url("/x"), None).await.unwrap();
    assert_eq!(a.count("/robots.txt"), 1);
    assert_eq!(b.count("/robots.txt"), 1);
}

#[tokio::test]
async fn robots_disallowed_page_is_never_fetched() {
    let fx = site(|_| Reply::text("User-agent: *\nDisallow: /secret\n")).await;
    let l = layer();
    let e = l
        .fetch(&FetchRequest::page(fx.url("/secret")))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::RobotsDisallowed);
    assert_eq!(e.code(), "robots_disallowed");
    assert_eq!(fx.count("/secret"), 0);
    let r = l.fetch(&FetchRequest::page(fx.url("/open"))).await.unwrap();
    assert_eq!(r.status, 200);
}

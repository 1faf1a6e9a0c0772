//! HttpFetcher against local fixture servers: decoding, caps, deadlines, content-type gate,
//! no redirects, and the SSRF guard in the connection path.

use crate::common;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use common::{closed_port, local_fetcher, local_fetcher_with_deadline, Fixture, Reply};
use crawl_core::http::{is_binary, looks_like_html, HttpFetcher};
use crawl_core::net::Resolver;
use crawl_core::{ErrorKind, FetchRequest, Fetcher};
use tokio::io::AsyncWriteExt;
use tokio::time::Instant;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn brotli_compress(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut w = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
        w.write_all(data).unwrap();
    }
    out
}

const PAGE: &str =
    "<!doctype html><html><head><title>t</title></head><body><p>hello</p></body></html>";

#[tokio::test]
async fn http_gzip_body_is_decoded() {
    let fx = Fixture::start(|_, _| {
        Reply::html("")
            .header("Content-Encoding", "gzip")
            .body(gzip(PAGE.as_bytes()))
    })
    .await;
    let r = local_fetcher()
        .fetch(&FetchRequest::page(fx.url("/")))
        .await
        .unwrap();
    assert_eq!(r.status, 200);
    assert_eq!(r.body, PAGE.as_bytes());
    let accept = fx.hits()[0]
        .headers
        .iter()
        .find(|(k, _)| k == "accept-encoding")
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    assert!(accept.contains("gzip") && accept.contains("br"), "{accept}");
}

#[tokio::test]
async fn http_brotli_body_is_decoded() {
    let fx = Fixture::start(|_, _| {
        Reply::html("")
            .header("Content-Encoding", "br")
            .body(brotli_compress(PAGE.as_bytes()))
    })
    .await;
    let r = local_fetcher()
        .fetch(&FetchRequest::page(fx.url("/")))
        .await
        .unwrap();
    assert_eq!(r.body, PAGE.as_bytes());
}

#[tokio::test]
async fn http_gzip_bomb_is_too_large_after_decompression() {
    // 16 MiB of zeros compress to a few KiB; the cap (1 MiB) counts decompressed bytes.
    let bomb = Arc::new(gzip(&vec![0u8; 16 * 1024 * 1024]));
    assert!(bomb.len() < 100 * 1024);
    let b = Arc::clone(&bomb);
    let fx = Fixture::start(move |_, _| {
        Reply::html("")
            .header("Content-Encoding", "gzip")
            .body(b.as_ref().clone())
    })
    .await;
    let req = FetchRequest::page(fx.url("/")).with_max_body(1024 * 1024);
    let e = local_fetcher().fetch(&req).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");
    assert!(!e.is_temporary());
}

#[tokio::test]
async fn http_gzip_bomb_robots_is_truncated_at_cap() {
    let bomb = gzip(&vec![b'#'; 8 * 1024 * 1024]);
    let fx = Fixture::start(move |_, _| {
        Reply::text("")
            .header("Content-Encoding", "gzip")
            .body(bomb.clone())
    })
    .await;
    let r = local_fetcher()
        .fetch(&FetchRequest::robots(fx.url("/robots.txt")))
        .await
        .unwrap();
    assert!(r.truncated);
    assert_eq!(r.body.len(), 500 * 1024);
}

#[tokio::test]
async fn http_declared_2gb_content_length_is_too_large_without_reading() {
    let fx = Fixture::start(|_, _| {
        Reply::raw(|mut s| async move {
            let _ = s
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 2147483648\r\n\r\n<html>")
                .await;
            tokio::time::sleep(Duration::from_secs(20)).await;
        })
    })
    .await;
    let start = Instant::now();
    let e = local_fetcher()
        .fetch(&FetchRequest::page(fx.url("/")))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn http_endless_chunked_body_is_too_large() {
    let fx = Fixture::start(|_, _| {
        Reply::raw(|mut s| async move {
            let _ = s
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n")
                .await;
            let chunk = vec![b'a'; 64 * 1024];
            // Bounded: at most 256 MiB, stops as soon as the client goes away.
            for _ in 0..4096 {
                let head = format!("{:x}\r\n", chunk.len());
                if s.write_all(head.as_bytes()).await.is_err()
                    || s.write_all(&chunk).await.is_err()
                    || s.write_all(b"\r\n").await.is_err()
                {
                    return;
                }
            }
        })
    })
    .await;
    let req = FetchRequest::page(fx.url("/")).with_max_body(2 * 1024 * 1024);
    let e = local_fetcher().fetch(&req).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooLarge, "{e}");
}

#[tokio::test]
async fn http_slow_loris_body_times_out_within_total_deadline() {
    let fx = Fixture::start(|_, _| {
        Reply::raw(|mut s| async move {
            let _ = s
                .write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100\r\n\r\n",
                )
                .await;
            for _ in 0..100 {
                if s.write_all(b"a").await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        })
    })
    .await;
    let start = Instant::now();
    let e = local_fetcher_with_deadline(Duration::from_secs(2))
        .fetch(&FetchRequest::page(fx.url("/")))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
    assert!(e.is_temporary());
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(1900) && took < Duration::from_secs(4),
        "{took:?}"
    );
}

#[tokio::test]
async fn http_slow_loris_headers_time_out() {
    let fx = Fixture::start(|_, _| {
        Reply::raw(|mut s| async move {
            for b in b"HTTP/1.1 200 OK\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" {
                if s.write_all(&[*b]).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        })
    })
    .await;
    let e = local_fetcher_with_deadline(Duration::from_secs(1))
        .fetch(&FetchRequest::page(fx.url("/")))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e}");
}

#[tokio::test]
async fn http_connection_reset_mid_body_is_temporary_network_error() {
    let fx = Fixture::start(|_, _| {
        Reply::raw(|mut s| async move {
            let _ = s
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 10000\r\n\r\n<html>")
                .await;
            let _ = s.flush().await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            // SO_LINGER 0: close sends RST.
            let _ = s.set_zero_linger();
            drop(s);
        })
    })
    .await;
    let e = local_fetcher()
        .fetch(&FetchRequest::page(fx.url("/")))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Network, "{e}");
    assert!(e.is_temporary());
}

#[tokio::test]
async fn http_truncated_body_is_temporary_network_error() {
    let fx = Fixture::start(|_, _| {
        Reply::raw(|mut s| async move {
            let _ = s
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 10000\r\n\r\n<html>short")
                .await;
            let _ = s.shutdown().await;
        })
    })
    .await;
    let e = local_fetcher()
        .fetch(&FetchRequest::page(fx.url("/")))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Network, "{e}");
    assert!(e.is_temporary());
}

#[tokio::test]
async fn http_connection_refused_is_temporary_network_error() {
    let addr = closed_port().await;
    let url = url::Url::parse(&format!("http://{addr}/")).unwrap();
    let e = local_fetcher()
        .fetch(&FetchRequest::page(url))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Network, "{e}");
    assert!(e.is_temporary());
}

#[tokio::test]
async fn http_pdf_content_type_returns_empty_body() {
    let fx = Fixture::start(|_, _| Reply::ok("application/pdf", vec![b'%'; 4 * 1024 * 1024])).await;
    let r = local_fetcher()
        .fetch(&FetchRequest::page(fx.url("/doc")))
        .await
        .unwrap();
    assert_eq!(r.status, 200);
    assert!(r.body.is_empty());
    assert_eq!(r.header("content-type"), Some("application/pdf"));
}

#[tokio::test]
async fn http_robots_purpose_reads_any_content_type() {
    let fx = Fixture::start(|_, _| Reply::ok("application/octet-stream", "User-agent: *\n")).await;
    let r = local_fetcher()
        .fetch(&FetchRequest::robots(fx.url("/robots.txt")))
        .await
        .unwrap();
    assert_eq!(r.body, b"User-agent: *\n");
    assert!(!r.truncated);
}

#[tokio::test]
async fn http_binary_served_as_html_is_sniffed() {
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01".to_vec();
    let fx = Fixture::start(move |_, _| Reply::ok("text/html", png.clone())).await;
    let r = local_fetcher()
        .fetch(&FetchRequest::page(fx.url("/img")))
        .await
        .unwrap();
    assert!(!r.body.is_empty());
    assert!(is_binary(&r.body));
    assert!(!looks_like_html(&r.body));
}

#[tokio::test]
async fn http_missing_content_type_is_read_and_sniffed() {
    let fx = Fixture::start(|_, _| Reply::status(200).body(PAGE)).await;
    let r = local_fetcher()
        .fetch(&FetchRequest::page(fx.url("/")))
        .await
        .unwrap();
    assert_eq!(r.header("content-type"), None);
    assert!(looks_like_html(&r.body));
}

#[tokio::test]
async fn http_page_over_cap_is_too_large_and_exact_cap_is_fine() {
    let fx = Fixture::start(|hit, _| {
        let n = if hit.path == "/big" { 1001 } else { 1000 };
        Reply::html("").body(vec![b'a'; n])
    })
    .await;
    let f = local_fetcher();
    let r = f
        .fetch(&FetchRequest::page(fx.url("/exact")).with_max_body(1000))
        .await
        .unwrap();
    assert_eq!(r.body.len(), 1000);
    let e = f
        .fetch(&FetchRequest::page(fx.url("/big")).with_max_body(1000))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TooLarge);
}

#[tokio::test]
async fn http_redirect_is_returned_not_followed() {
    let fx = Fixture::start(|hit, _| {
        if hit.path == "/from" {
            Reply::redirect(302, "/to")
        } else {
            Reply::html(PAGE)
        }
    })
    .await;
    let r = local_fetcher()
        .fetch(&FetchRequest::page(fx.url("/from")))
        .await
        .unwrap();
    assert_eq!(r.status, 302);
    assert_eq!(r.header("location"), Some("/to"));
    assert_eq!(r.redirect_target(), Some(fx.url("/to")));
    assert_eq!(r.url, fx.url("/from"));
    assert_eq!(fx.count("/to"), 0);
}

#[tokio::test]
async fn http_headers_are_lowercase_and_user_agent_sent() {
    let fx = Fixture::start(|_, _| Reply::html(PAGE).header("X-Custom-Header", "Value")).await;
    let r = local_fetcher()
        .fetch(&FetchRequest::page(fx.url("/")))
        .await
        .unwrap();
    assert_eq!(r.header("x-custom-header"), Some("Value"));
    assert!(r.headers.iter().all(|(k, _)| *k == k.to_ascii_lowercase()));
    let ua = fx.hits()[0]
        .headers
        .iter()
        .find(|(k, _)| k == "user-agent")
        .map(|(_, v)| v.clone());
    assert_eq!(ua.as_deref(), Some("kb-crawl/0.1 (+test)"));
}

#[tokio::test]
async fn http_status_is_not_an_error() {
    let fx404 = Fixture::start(|_, _| {
        Reply::status(404)
            .header("Content-Type", "text/html")
            .body("<p>missing</p>")
    })
    .await;
    let r = local_fetcher()
        .fetch(&FetchRequest::page(fx404.url("/x")))
        .await
        .unwrap();
    assert_eq!(r.status, 404);
    assert_eq!(r.body, b"<p>missing</p>");
}

#[tokio::test]
async fn http_oversized_response_head_is_refused() {
    let fx = Fixture::start(|_, _| {
        Reply::raw(|mut s| async move {
            let mut head = String::from("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n");
            for i in 0..5000 {
                head.push_str(&format!("X-H{i}: {}\r\n", "v".repeat(100)));
            }
            head.push_str("Content-Length: 0\r\n\r\n");
            let _ = s.write_all(head.as_bytes()).await;
        })
    })
    .await;
    let e = local_fetcher()
        .fetch(&FetchRequest::page(fx.url("/")))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Network, "{e}");
}

// --- SSRF guard -------------------------------------------------------------------------

#[tokio::test]
async fn ssrf_ip_literal_loopback_refused_without_allow_private() {
    let fx = Fixture::start(|_, _| Reply::html(PAGE)).await;
    let f = HttpFetcher::builder().build().unwrap();
    for u in [
        fx.url("/"),
        url::Url::parse(&format!("http://2130706433:{}/", fx.addr.port())).unwrap(),
        url::Url::parse(&format!("http://0x7f.1:{}/", fx.addr.port())).unwrap(),
        url::Url::parse(&format!("http://[::ffff:127.0.0.1]:{}/", fx.addr.port())).unwrap(),
    ] {
        let e = f.fetch(&FetchRequest::page(u.clone())).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PolicyRefused, "{u}: {e}");
        assert!(!e.is_temporary());
        assert_eq!(e.backend(), Some("HttpFetcher"));
        let e = f.check(&u, None).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PolicyRefused);
    }
    assert_eq!(fx.hits().len(), 0, "no connection was made");
}

#[tokio::test]
async fn ssrf_metadata_ip_refused_even_with_allow_private() {
    let f = local_fetcher();
    for u in [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
        "http://100.100.100.200/",
        "http://metadata.google.internal/",
    ] {
        let e = f
            .fetch(&FetchRequest::page(url::Url::parse(u).unwrap()))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PolicyRefused, "{u}: {e}");
    }
}

#[tokio::test]
async fn ssrf_non_http_schemes_and_credentials_refused() {
    let f = local_fetcher();
    for u in [
        "file:///etc/passwd",
        "ftp://127.0.0.1/",
        "http://u:p@127.0.0.1/",
    ] {
        let e = f
            .fetch(&FetchRequest::page(url::Url::parse(u).unwrap()))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PolicyRefused, "{u}: {e}");
    }
}

/// A resolver that answers from a script, one answer per lookup (the last one repeats),
/// and counts lookups.
#[derive(Debug)]
struct ScriptedResolver {
    answers: Vec<Vec<SocketAddr>>,
    lookups: AtomicUsize,
}

impl ScriptedResolver {
    fn new(answers: Vec<Vec<&str>>) -> Arc<Self> {
        Arc::new(ScriptedResolver {
            answers: answers
                .into_iter()
                .map(|a| {
                    a.into_iter()
                        .map(|s| SocketAddr::new(s.parse().unwrap(), 0))
                        .collect()
                })
                .collect(),
            lookups: AtomicUsize::new(0),
        })
    }
    fn lookups(&self) -> usize {
        self.lookups.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Resolver for ScriptedResolver {
    async fn lookup(&self, _host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
        let n = self.lookups.fetch_add(1, Ordering::SeqCst);
        let a = &self.answers[n.min(self.answers.len() - 1)];
        Ok(a.iter().map(|s| SocketAddr::new(s.ip(), port)).collect())
    }
}

#[tokio::test]
async fn ssrf_dns_rebinding_connects_to_vetted_address() {
    // "good" on 127.0.0.1:P, "evil" on 127.0.0.2:P. DNS answers 127.0.0.1 first and
    // 127.0.0.2 on any later lookup: a fetcher that looked up twice (check, then connect)
    // would reach evil.
    let good = Fixture::start(|_, _| Reply::html("<p>good</p>")).await;
    let port = good.addr.port();
    let evil = Fixture::start_on(format!("127.0.0.2:{port}").parse().unwrap(), |_, _| {
        Reply::html("<p>evil</p>")
    })
    .await;
    let dns = ScriptedResolver::new(vec![vec!["127.0.0.1"], vec!["127.0.0.2"]]);
    let f = HttpFetcher::builder()
        .allow_private(true)
        .resolver(Arc::clone(&dns) as Arc<dyn Resolver>)
        .build()
        .unwrap();
    let url = url::Url::parse(&format!("http://rebind.test:{port}/")).unwrap();
    f.check(&url, None).await.unwrap();
    let r = f.fetch(&FetchRequest::page(url)).await.unwrap();
    assert_eq!(r.body, b"<p>good</p>");
    assert_eq!(dns.lookups(), 1, "one lookup, the one that was checked");
    assert_eq!(good.hits().len(), 1);
    assert_eq!(evil.hits().len(), 0);
}

#[tokio::test]
async fn ssrf_dns_rebinding_refused_answer_is_never_relooked_up() {
    // First answer is refused (metadata, refused even with allow_private); a second lookup
    // would return the reachable fixture. The fetch must fail without connecting anywhere.
    let good = Fixture::start(|_, _| Reply::html("<p>good</p>")).await;
    let port = good.addr.port();
    let dns = ScriptedResolver::new(vec![vec!["169.254.169.254"], vec!["127.0.0.1"]]);
    let f = HttpFetcher::builder()
        .allow_private(true)
        .resolver(Arc::clone(&dns) as Arc<dyn Resolver>)
        .build()
        .unwrap();
    let url = url::Url::parse(&format!("http://rebind.test:{port}/")).unwrap();
    let e = f.fetch(&FetchRequest::page(url)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::PolicyRefused, "{e}");
    assert!(!e.is_temporary());
    assert_eq!(dns.lookups(), 1);
    assert_eq!(good.hits().len(), 0);
}

#[tokio::test]
async fn ssrf_hostname_with_mixed_public_and_private_answers_refused() {
    let dns = ScriptedResolver::new(vec![vec!["93.184.216.34", "127.0.0.1"]]);
    let f = HttpFetcher::builder()
        .resolver(Arc::clone(&dns) as Arc<dyn Resolver>)
        .build()
        .unwrap();
    let url = url::Url::parse("http://mixed.test/").unwrap();
    let e = f.fetch(&FetchRequest::page(url)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::PolicyRefused, "{e}");
    assert!(e.to_string().contains("127.0.0.1"), "{e}");
    assert_eq!(dns.lookups(), 1);
}

#[tokio::test]
async fn ssrf_hostname_resolving_to_private_refused_by_default() {
    let fx = Fixture::start(|_, _| Reply::html(PAGE)).await;
    let dns = ScriptedResolver::new(vec![vec!["127.0.0.1"]]);
    let f = HttpFetcher::builder()
        .resolver(Arc::clone(&dns) as Arc<dyn Resolver>)
        .build()
        .unwrap();
    let url = url::Url::parse(&format!("http://intranet.test:{}/", fx.addr.port())).unwrap();
    let e = f.fetch(&FetchRequest::page(url)).await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::PolicyRefused, "{e}");
    assert_eq!(fx.hits().len(), 0);
}

#[tokio::test]
async fn ssrf_localhost_names_refused_without_dns() {
    let dns = ScriptedResolver::new(vec![vec!["127.0.0.1"]]);
    let f = HttpFetcher::builder()
        .resolver(Arc::clone(&dns) as Arc<dyn Resolver>)
        .build()
        .unwrap();
    for u in [
        "http://localhost:2773/",
        "http://app.localhost/",
        "http://127.0.0.1:9001/",
    ] {
        let e = f
            .fetch(&FetchRequest::page(url::Url::parse(u).unwrap()))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::PolicyRefused, "{u}: {e}");
    }
    assert_eq!(dns.lookups(), 0);
}

#[tokio::test]
async fn ssrf_dns_failure_is_temporary_network_error() {
    #[derive(Debug)]
    struct Failing;
    #[async_trait]
    impl Resolver for Failing {
        async fn lookup(&self, host: &str, _: u16) -> std::io::Result<Vec<SocketAddr>> {
            Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("{host}: NXDOMAIN"),
            ))
        }
    }
    let f = HttpFetcher::builder()
        .resolver(Arc::new(Failing))
        .build()
        .unwrap();
    let e = f
        .fetch(&FetchRequest::page(
            url::Url::parse("http://nowhere.test/").unwrap(),
        ))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Network, "{e}");
    assert!(e.is_temporary());
}

/// A server that honours conditional requests the way `kind` says: "etag" (strong ETag,
/// If-None-Match), "last-modified" (Last-Modified only), "ignore" (always 200).
async fn conditional_site(kind: &'static str) -> Fixture {
    Fixture::start(move |hit, _| {
        let h = |name: &str| {
            hit.headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        match kind {
            "etag" if h("if-none-match").as_deref() == Some("\"v1\"") => {
                Reply::status(304).header("ETag", "\"v1\"")
            }
            "etag" => Reply::html(PAGE).header("ETag", "\"v1\""),
            "last-modified"
                if h("if-modified-since").as_deref() == Some("Tue, 01 Dec 2026 08:00:00 GMT") =>
            {
                Reply::status(304)
            }
            "last-modified" => {
                Reply::html(PAGE).header("Last-Modified", "Tue, 01 Dec 2026 08:00:00 GMT")
            }
            _ => Reply::html(PAGE).header("ETag", "\"v1\""),
        }
    })
    .await
}

#[tokio::test]
async fn conditional_requests_get_304_without_a_body_where_the_server_supports_them() {
    for (kind, want) in [("etag", 304), ("last-modified", 304), ("ignore", 200)] {
        let fx = conditional_site(kind).await;
        let f = local_fetcher();
        let first = f.fetch(&FetchRequest::page(fx.url("/p"))).await.unwrap();
        assert_eq!(first.status, 200, "{kind}");
        assert!(!first.is_not_modified());
        let validators = first.validators();
        assert!(
            !validators.is_empty(),
            "{kind}: the first answer gives validators"
        );
        let again = f
            .fetch(&FetchRequest::page(fx.url("/p")).with_validators(validators))
            .await
            .unwrap();
        assert_eq!(again.status, want, "{kind}");
        assert_eq!(again.is_not_modified(), want == 304, "{kind}");
        if want == 304 {
            assert!(again.body.is_empty(), "{kind}: a 304 has no body");
        } else {
            assert_eq!(again.body, PAGE.as_bytes(), "{kind}");
        }
        let sent = &fx.hits()[1].headers;
        let has = |n: &str| sent.iter().any(|(k, _)| k == n);
        match kind {
            "last-modified" => assert!(has("if-modified-since") && !has("if-none-match")),
            _ => assert!(has("if-none-match"), "{kind}: {sent:?}"),
        }
        // An unconditional request sends neither.
        f.fetch(&FetchRequest::page(fx.url("/p"))).await.unwrap();
        let plain = &fx.hits()[2].headers;
        assert!(
            !plain
                .iter()
                .any(|(k, _)| k == "if-none-match" || k == "if-modified-since"),
            "{plain:?}"
        );
    }
}

#[tokio::test]
async fn a_mangled_validator_makes_the_request_unconditional_not_an_error() {
    let fx = conditional_site("etag").await;
    let bad = crawl_core::Validators::new(Some("\"v1\"\r\nX-Injected: 1".into()), None);
    let r = local_fetcher()
        .fetch(&FetchRequest::page(fx.url("/p")).with_validators(bad))
        .await
        .unwrap();
    assert_eq!(r.status, 200);
    let sent = &fx.hits()[0].headers;
    assert!(
        !sent
            .iter()
            .any(|(k, _)| k == "x-injected" || k == "if-none-match"),
        "{sent:?}"
    );
}

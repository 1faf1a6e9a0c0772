//! Proxies from the environment are ignored: with HTTP_PROXY, http_proxy and ALL_PROXY
//! pointing at a recording listener, the fetch still goes straight to the origin. Its own
//! test binary, so the environment it sets touches no other test.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{local_fetcher, Fixture, Reply};
use crawl_core::{FetchRequest, Fetcher};

#[test]
fn http_proxy_environment_variables_are_ignored() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The "proxy": a listener that counts connections.
    let std_proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_addr = std_proxy.local_addr().unwrap();
    for var in [
        "HTTP_PROXY",
        "http_proxy",
        "HTTPS_PROXY",
        "https_proxy",
        "ALL_PROXY",
        "all_proxy",
    ] {
        std::env::set_var(var, format!("http://{proxy_addr}"));
    }
    for var in ["NO_PROXY", "no_proxy"] {
        std::env::remove_var(var);
    }
    rt.block_on(async move {
        std_proxy.set_nonblocking(true).unwrap();
        let proxy = tokio::net::TcpListener::from_std(std_proxy).unwrap();
        let proxied = Arc::new(AtomicUsize::new(0));
        let p2 = Arc::clone(&proxied);
        let counter = tokio::spawn(async move {
            while proxy.accept().await.is_ok() {
                p2.fetch_add(1, Ordering::SeqCst);
            }
        });
        let fx = Fixture::start(|_, _| Reply::html("<p>direct</p>")).await;
        let r = local_fetcher()
            .fetch(&FetchRequest::page(fx.url("/")))
            .await
            .unwrap();
        assert_eq!(r.body, b"<p>direct</p>");
        assert_eq!(fx.hits().len(), 1);
        assert_eq!(
            proxied.load(Ordering::SeqCst),
            0,
            "the proxy saw a connection"
        );
        counter.abort();
    });
}

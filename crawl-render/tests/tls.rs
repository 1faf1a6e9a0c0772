//! Certificates are checked: a page served over TLS with a certificate no authority signed is
//! refused, never rendered (anyone on the path could otherwise inject content).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{assert_no_browser_left, renderer_or_skip};
use crawl_core::net::{NetworkPolicy, RequestGate};
use crawl_core::url::Scope;
use crawl_core::{RenderRequest, Renderer, WwwPolicy};
use crawl_render::ChromeConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;
use url::Url;

/// Serves one page over TLS with a fresh self-signed certificate for 127.0.0.1; counts the
/// requests that got past the handshake.
async fn self_signed_site() -> (Url, Arc<AtomicUsize>) {
    let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
    let der = CertificateDer::from(cert.cert.der().to_vec());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.key_pair.serialize_der()));
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![der], key)
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&served);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let count = Arc::clone(&count);
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut buf = [0u8; 4096];
                if tls.read(&mut buf).await.unwrap_or(0) == 0 {
                    return;
                }
                count.fetch_add(1, Ordering::SeqCst);
                let body = "<html><body><p>INJECTED-OVER-TLS</p></body></html>";
                let resp = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = tls.write_all(resp.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    (
        Url::parse(&format!("https://127.0.0.1:{port}/")).unwrap(),
        served,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_self_signed_certificate_is_refused() {
    let Some(renderer) = renderer_or_skip(ChromeConfig::default().with_max_tabs(1)) else {
        return;
    };
    let (root, served) = self_signed_site().await;
    let gate = RequestGate::new(
        Arc::new(Scope::new(&root, WwwPolicy::Equivalent, None)),
        NetworkPolicy::allow_private(),
    );
    let req = RenderRequest::new(root, gate).with_deadline(Duration::from_secs(15));
    let result = renderer.render(&req).await;
    match &result {
        Ok(page) => assert!(
            !page.html.contains("INJECTED-OVER-TLS"),
            "a page behind an untrusted certificate was rendered: {}",
            page.html
        ),
        Err(e) => println!("refused as expected: {e}"),
    }
    assert!(result.is_err(), "the render should fail: {result:?}");
    assert_eq!(
        served.load(Ordering::SeqCst),
        0,
        "a request got past the TLS handshake"
    );
    renderer.shutdown().await;
    assert_no_browser_left(&renderer);
}

//! A tiny HTTP/1.1 fixture server on the loopback interface, one per test: it records every
//! request (path and arrival time) and answers with whatever the test's handler says,
//! including misbehaviour (slow bodies, resets, endless streams).
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crawl_core::http::HttpFetcher;

#[derive(Debug, Clone)]
pub struct Hit {
    pub path: String,
    pub at: Instant,
    pub headers: Vec<(String, String)>,
}

type RawFn = Box<dyn FnOnce(TcpStream) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send>;

pub enum Reply {
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Full control of the socket after the request head was read.
    Raw(RawFn),
}

impl Reply {
    pub fn status(status: u16) -> Reply {
        Reply::Full {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply::status(200)
            .header("Content-Type", content_type)
            .body(body)
    }
    pub fn html(body: &str) -> Reply {
        Reply::ok("text/html; charset=utf-8", body)
    }
    pub fn text(body: &str) -> Reply {
        Reply::ok("text/plain", body)
    }
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply::status(status).header("Location", location)
    }
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        if let Reply::Full { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }
    pub fn body(mut self, b: impl Into<Vec<u8>>) -> Reply {
        if let Reply::Full { body, .. } = &mut self {
            *body = b.into();
        }
        self
    }
    pub fn raw<F, Fut>(f: F) -> Reply
    where
        F: FnOnce(TcpStream) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        Reply::Raw(Box::new(move |s| Box::pin(f(s))))
    }
}

pub type Handler = Arc<dyn Fn(&Hit, usize) -> Reply + Send + Sync>;

pub struct Fixture {
    pub addr: SocketAddr,
    hits: Arc<Mutex<Vec<Hit>>>,
    task: JoinHandle<()>,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Fixture {
    /// A server on 127.0.0.1 with a free port. The handler gets the hit and how many
    /// requests for the same path came before it.
    pub async fn start<F>(handler: F) -> Fixture
    where
        F: Fn(&Hit, usize) -> Reply + Send + Sync + 'static,
    {
        Self::start_on("127.0.0.1:0".parse().unwrap(), handler).await
    }

    pub async fn start_on<F>(bind: SocketAddr, handler: F) -> Fixture
    where
        F: Fn(&Hit, usize) -> Reply + Send + Sync + 'static,
    {
        let listener = TcpListener::bind(bind).await.expect("bind fixture");
        let addr = listener.local_addr().unwrap();
        let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
        let handler: Handler = Arc::new(handler);
        let h2 = Arc::clone(&hits);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    return;
                };
                let hits = Arc::clone(&h2);
                let handler = Arc::clone(&handler);
                tokio::spawn(serve(stream, hits, handler));
            }
        });
        Fixture { addr, hits, task }
    }

    pub fn url(&self, path: &str) -> url::Url {
        url::Url::parse(&format!("http://{}{}", self.addr, path)).unwrap()
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }

    pub fn count(&self, path: &str) -> usize {
        self.hits().iter().filter(|h| h.path == path).count()
    }
}

async fn serve(mut stream: TcpStream, hits: Arc<Mutex<Vec<Hit>>>, handler: Handler) {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > 64 * 1024 {
            return;
        }
        match stream.read(&mut tmp).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&tmp[..n]),
        }
    };
    let at = Instant::now();
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    let path = request_line.split(' ').nth(1).unwrap_or("/").to_owned();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let hit = Hit { path, at, headers };
    let before = {
        let mut h = hits.lock().unwrap();
        let before = h.iter().filter(|x| x.path == hit.path).count();
        h.push(hit.clone());
        before
    };
    match handler(&hit, before) {
        Reply::Full {
            status,
            headers,
            body,
        } => {
            let mut out = format!("HTTP/1.1 {status} X\r\n");
            for (k, v) in &headers {
                out.push_str(&format!("{k}: {v}\r\n"));
            }
            if !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            {
                out.push_str(&format!("Content-Length: {}\r\n", body.len()));
            }
            out.push_str("Connection: close\r\n\r\n");
            let _ = stream.write_all(out.as_bytes()).await;
            let _ = stream.write_all(&body).await;
            let _ = stream.shutdown().await;
        }
        Reply::Raw(f) => f(stream).await,
    }
}

/// An [`HttpFetcher`] that may reach the loopback fixtures.
pub fn local_fetcher() -> HttpFetcher {
    HttpFetcher::builder()
        .allow_private(true)
        .user_agent("kb-crawl/0.1 (+test)")
        .build()
        .unwrap()
}

/// A fetcher with a short total deadline.
pub fn local_fetcher_with_deadline(total: Duration) -> HttpFetcher {
    HttpFetcher::builder()
        .allow_private(true)
        .total_timeout(total)
        .connect_timeout(Duration::from_secs(2))
        .build()
        .unwrap()
}

/// A loopback port where nothing listens (connection refused).
pub async fn closed_port() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let a = l.local_addr().unwrap();
    drop(l);
    a
}

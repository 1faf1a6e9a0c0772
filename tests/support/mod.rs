//! A fixture site served on 127.0.0.1, with the special routes the crawl tests need, and a
//! log of every request it received.
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;

#[derive(Debug, Clone)]
pub struct Hit {
    pub at: Instant,
    pub path: String,
}

#[derive(Clone)]
struct Site {
    root: PathBuf,
    port: u16,
    log: Arc<Mutex<Vec<Hit>>>,
}

/// A running fixture server.
pub struct Fixture {
    pub addr: SocketAddr,
    log: Arc<Mutex<Vec<Hit>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Fixture {
    /// Serves `tests/fixtures/site` on a fresh port.
    pub async fn site() -> Fixture {
        Self::serve(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/site")).await
    }

    pub async fn serve(root: PathBuf) -> Fixture {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let site = Site {
            root,
            port: addr.port(),
            log: Arc::clone(&log),
        };
        let app = Router::new().fallback(handle).with_state(site);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Fixture { addr, log, task }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.log.lock().unwrap().clone()
    }

    /// Requests for pages (everything but robots.txt).
    pub fn page_hits(&self) -> Vec<String> {
        self.hits()
            .into_iter()
            .map(|h| h.path)
            .filter(|p| p != "/robots.txt")
            .collect()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn redirect(status: StatusCode, to: &str) -> Response {
    let mut r = status.into_response();
    r.headers_mut()
        .insert(header::LOCATION, HeaderValue::from_str(to).unwrap());
    r
}

async fn handle(State(site): State<Site>, req: Request) -> Response {
    let path = req.uri().path().to_owned();
    site.log.lock().unwrap().push(Hit {
        at: Instant::now(),
        path: req
            .uri()
            .path_and_query()
            .map(|p| p.as_str().to_owned())
            .unwrap_or_else(|| path.clone()),
    });
    match path.as_str() {
        "/old" => return redirect(StatusCode::MOVED_PERMANENTLY, "/redirect-1"),
        "/redirect-1" => return redirect(StatusCode::FOUND, "/b/page2.html"),
        "/offsite" => {
            return redirect(
                StatusCode::FOUND,
                &format!("http://localhost:{}/elsewhere", site.port),
            )
        }
        "/loop" => return redirect(StatusCode::FOUND, "/loop2"),
        "/loop2" => return redirect(StatusCode::FOUND, "/loop"),
        "/a" | "/b" | "/c" => return redirect(StatusCode::MOVED_PERMANENTLY, &format!("{path}/")),
        _ => {}
    }
    let rel = path.trim_start_matches('/');
    if rel.split('/').any(|s| s == "..") {
        return StatusCode::BAD_REQUEST.into_response();
    }
    let mut file = site.root.join(rel);
    if path.ends_with('/') {
        file = file.join("index.html");
    }
    let Ok(bytes) = tokio::fs::read(&file).await else {
        return (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/html")],
            "<h1>Not found</h1>",
        )
            .into_response();
    };
    let ct = match file.extension().and_then(|e| e.to_str()) {
        Some("pdf") => "application/pdf",
        Some("txt") => "text/plain",
        _ if path == "/latin1.html" => "text/html; charset=iso-8859-1",
        _ => "text/html; charset=utf-8",
    };
    Response::builder()
        .header(header::CONTENT_TYPE, ct)
        .body(Body::from(bytes))
        .unwrap()
}

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
    /// Answer 200 with a "not found" page for missing paths (a soft-404 site).
    soft404: bool,
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

    /// Serves `tests/fixtures/hostile`, answering 200 for missing pages when `soft404`.
    pub async fn hostile(soft404: bool) -> Fixture {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile");
        Self::serve_with(root, soft404).await
    }

    pub async fn serve(root: PathBuf) -> Fixture {
        Self::serve_with(root, false).await
    }

    async fn serve_with(root: PathBuf, soft404: bool) -> Fixture {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let site = Site {
            root,
            port: addr.port(),
            log: Arc::clone(&log),
            soft404,
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
        "/to-metadata" => {
            return redirect(
                StatusCode::FOUND,
                "http://169.254.169.254/latest/meta-data/",
            )
        }
        // 169.254.169.254 spelled as one decimal number.
        "/to-decimal" => return redirect(StatusCode::FOUND, "http://2852039166/"),
        "/loop2" => return redirect(StatusCode::FOUND, "/loop"),
        "/a" | "/b" | "/c" => return redirect(StatusCode::MOVED_PERMANENTLY, &format!("{path}/")),
        "/binary.html" => {
            let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0";
            return ([(header::CONTENT_TYPE, "text/html")], png.to_vec()).into_response();
        }
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
        let status = if site.soft404 {
            StatusCode::OK
        } else {
            StatusCode::NOT_FOUND
        };
        let page = format!(
            "<html><head><title>Not found</title></head><body><main><h1>Sorry</h1>\
             <p>We looked everywhere but the page {path} is not here. Try the search box or \
             go back to the home page of this site.</p></main></body></html>"
        );
        return (status, [(header::CONTENT_TYPE, "text/html")], page).into_response();
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

/// Copies the folder `from` to `to`, recursively (a fixture site a test may change).
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

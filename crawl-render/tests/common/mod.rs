//! Shared helpers of the render tests: the fixture site, counting listeners, the Chromium
//! skip rule and the leftover-process check.
#![allow(dead_code, unreachable_pub)] // each test file uses a different part

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::extract::Path;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use axum::Router;
use crawl_core::net::{NetworkPolicy, RequestGate};
use crawl_core::url::Scope;
use crawl_core::{RenderRequest, WwwPolicy};
use crawl_render::{ChromeConfig, ChromeRenderer};
use url::Url;

/// The renderer, or `None` (after printing why) when no Chromium is installed. With
/// `KB_CRAWL_REQUIRE_SERVICES=1` a missing Chromium fails the test instead.
pub fn renderer_or_skip(config: ChromeConfig) -> Option<ChromeRenderer> {
    match ChromeRenderer::new(config) {
        Ok(r) => Some(r),
        Err(e) => {
            if std::env::var("KB_CRAWL_REQUIRE_SERVICES").as_deref() == Ok("1") {
                panic!("chromium is required (KB_CRAWL_REQUIRE_SERVICES=1): {e}");
            }
            println!("SKIPPED: chromium not found (install with apt-get install -y chromium)");
            None
        }
    }
}

/// A local listener that counts the TCP connections it receives, then drops them.
pub struct Counter {
    pub port: u16,
    hits: Arc<AtomicUsize>,
}

impl Counter {
    pub async fn start() -> Counter {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = Arc::new(AtomicUsize::new(0));
        let h = Arc::clone(&hits);
        tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                h.fetch_add(1, Ordering::SeqCst);
                drop(conn);
            }
        });
        Counter { port, hits }
    }

    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// The fixture site on 127.0.0.1.
pub struct Site {
    pub root: Url,
}

impl Site {
    /// Serves the fixtures; `other` and `ws` are the ports the containment page points at.
    pub async fn start(other: u16, ws: u16) -> Site {
        let contain = include_str!("../fixtures/contain.html")
            .replace("{{OTHER}}", &other.to_string())
            .replace("{{WS}}", &ws.to_string());
        let fill = |page: &str| {
            page.replace("{{OTHER}}", &other.to_string())
                .replace("{{WS}}", &ws.to_string())
        };
        let opener = fill(include_str!("../fixtures/popup-opener.html"));
        let popup = fill(include_str!("../fixtures/popup.html"));
        let app = Router::new()
            .route(
                "/article",
                get(|| async { Html(include_str!("../fixtures/article.html")) }),
            )
            .route(
                "/api/article.json",
                get(|| async {
                    (
                        [("content-type", "application/json")],
                        r#"{"title":"Rendered article","body":"ARTICLE-TEXT-FROM-SCRIPT"}"#,
                    )
                }),
            )
            .route(
                "/links",
                get(|| async { Html(include_str!("../fixtures/links.html")) }),
            )
            .route(
                "/app/",
                get(|| async { Html(include_str!("../fixtures/spa.html")) }),
            )
            .route(
                "/app/{*rest}",
                get(|| async { Html(include_str!("../fixtures/spa.html")) }),
            )
            .route(
                "/alert",
                get(|| async { Html(include_str!("../fixtures/alert.html")) }),
            )
            .route(
                "/never",
                get(|| async { Html(include_str!("../fixtures/never.html")) }),
            )
            .route("/hang", get(std::future::pending::<&'static str>))
            .route("/contain", get(move || async move { Html(contain) }))
            .route("/popup-opener", get(move || async move { Html(opener) }))
            .route("/popup", get(move || async move { Html(popup) }))
            .route("/page/{n}", get(script_page))
            .route(
                "/plain",
                get(|| async { Html("<html><body><p>PLAIN</p></body></html>") }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Site {
            root: Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap(),
        }
    }

    /// The gate of a crawl of this site (private addresses allowed: it is on 127.0.0.1).
    pub fn gate(&self) -> RequestGate {
        RequestGate::new(
            Arc::new(Scope::new(&self.root, WwwPolicy::Equivalent, None)),
            NetworkPolicy::allow_private(),
        )
    }

    /// A render request for `path` on this site.
    pub fn request(&self, path: &str) -> RenderRequest {
        RenderRequest::new(self.root.join(path).unwrap(), self.gate())
    }
}

/// A page whose whole body is built by a script.
async fn script_page(Path(n): Path<u32>) -> impl IntoResponse {
    Html(format!(
        "<!doctype html><html><head><title>Page {n}</title></head><body><main id=\"m\"></main>\
         <script>setTimeout(() => {{ document.getElementById('m').innerHTML = \
         '<h1>Page {n}</h1><p>' + 'Generated paragraph. '.repeat(50) + '</p>\
         <a href=\"/page/{next}\">next</a>'; }}, 50);</script></body></html>",
        next = n + 1
    ))
}

/// Processes whose parent is this test process and whose name mentions chrom(e|ium),
/// zombies included.
pub fn chromium_children() -> Vec<u32> {
    let me = std::process::id();
    let mut found = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let comm = stat[..close].to_ascii_lowercase();
        let ppid = stat[close + 1..]
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(me) && comm.contains("chrom") {
            found.push(pid);
        }
    }
    found
}

/// Whether a process with this id still exists (zombies included).
pub fn alive(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Asserts that no browser this renderer started is left, and no chromium child at all.
pub fn assert_no_browser_left(renderer: &ChromeRenderer) {
    for pid in renderer.launched_pids() {
        assert!(!alive(pid), "browser process {pid} is still there");
    }
    let left = chromium_children();
    assert!(left.is_empty(), "chromium children left: {left:?}");
}

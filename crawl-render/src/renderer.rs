//! [`ChromeRenderer`]: the [`Renderer`] backed by one headless Chromium and a pool of tabs.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use chromiumoxide::cdp::browser_protocol::page::NavigateParams;
use chromiumoxide::cdp::browser_protocol::target::TargetId;
use crawl_core::{Capabilities, Error, ErrorKind, RenderRequest, RenderedPage, Renderer, Result};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use url::{Host, Url};

use crate::config::ChromeConfig;
use crate::error::{RenderError, BACKEND};
use crate::intercept::lock;
use crate::launch::{find_executable, BrowserProc};
use crate::proxy::ActiveGates;
use crate::tab::Tab;
use crate::wait;

/// Serializes the document (doctype included) and its URL.
const SERIALIZE: &str = "({ url: location.href, html: (document.doctype ? \
    new XMLSerializer().serializeToString(document.doctype) + '\\n' : '') + \
    (document.documentElement ? document.documentElement.outerHTML : '') })";

/// Flags `extra_args` may not carry: each one re-opens a hole the renderer closes.
const UNSAFE_FLAGS: &[&str] = &[
    "disable-popup-blocking",
    "ignore-certificate-errors",
    "ignore-certificate-errors-spki-list",
    "allow-insecure-localhost",
    "site-per-process",
    "enable-features",
    "remote-allow-origins",
    "proxy-server",
    "proxy-pac-url",
    "proxy-bypass-list",
    "no-proxy-server",
    "disable-web-security",
];

/// Longest wait for a tab to close.
const CLOSE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Renders pages in a headless Chromium (Debian's `chromium` or any Chrome) over DevTools.
///
/// One browser per renderer, started on the first render and started again when it dies; at
/// most [`ChromeConfig::max_tabs`] pages at once. Every request a page makes is paused by the
/// DevTools Fetch domain and let through only when the render's
/// [`RequestGate`](crawl_core::net::RequestGate) allows it (DNS included for host names);
/// other schemes, images, fonts and media are refused.
///
/// # What stays possible
/// WebSockets, server-sent events, WebRTC and WebTransport are invisible to Fetch, and workers
/// run where no injected script reaches: a script injected before any page script replaces
/// `WebSocket`, `EventSource`, `RTCPeerConnection`, `WebTransport`, `Worker` and
/// `SharedWorker` with throwing stubs and hides `navigator.serviceWorker` in every frame
/// (pages that need workers to show content lose that content); `about:blank` and `data:`
/// frames get the stubs too. A tab that still opens a WebSocket (none did in the tests) is
/// closed at once, but the handshake may already have been sent. `data:` frames are not requests and
/// load (their own requests are paused).
///
/// Underneath the interception, every connection the browser makes (loopback included) goes
/// through an in-process proxy on 127.0.0.1 that lets it through only when a render running
/// now may reach that host and port under its gate, and connects only to the address the
/// network policy vetted in that same step: a context the interception does not see (a
/// window, a worker) reaches nothing the crawl may not reach, and since Chromium never
/// resolves host names itself, a DNS answer that changes between the gate and the connection
/// (rebinding) is never connected to.
///
/// Chromium's popup blocker stays on (a headless render never has a user gesture, so a page
/// cannot open a window), certificates are checked, and any page target the renderer did not
/// open itself is closed when a render ends.
///
/// Call [`shutdown`](Renderer::shutdown) when done; dropping the renderer also kills the
/// browser.
pub struct ChromeRenderer {
    config: ChromeConfig,
    exe: PathBuf,
    browser: tokio::sync::Mutex<Option<BrowserProc>>,
    generation: AtomicU64,
    tabs: Semaphore,
    idle: Mutex<Vec<Tab>>,
    closed: AtomicBool,
    launched: Mutex<Vec<u32>>,
    /// Target ids of the renderer's own tabs (idle or rendering); every other page target is
    /// a window a page opened, closed after each render.
    own: Mutex<HashSet<TargetId>>,
    /// The gates of the renders running now: what the browser's proxy lets through.
    gates: Arc<ActiveGates>,
}

impl ChromeRenderer {
    /// A renderer that will use the Chromium `config` names (see
    /// [`ChromeConfig::executable`]). The browser starts on the first render.
    ///
    /// Fails with [`ErrorKind::Unsupported`] naming every place tried when no Chromium is
    /// found.
    ///
    /// Refuses ([`ErrorKind::InvalidInput`], naming the flag) `extra_args` that would switch
    /// a containment off: the popup blocker, certificate checks, or the flags that keep every
    /// frame where the page's interception sees it.
    pub fn new(config: ChromeConfig) -> Result<Self> {
        if let Some(bad) = config.extra_args.iter().find(|a| {
            let key = a.trim_start_matches('-');
            let key = key.split_once('=').map_or(key, |(k, _)| k);
            UNSAFE_FLAGS.contains(&key)
        }) {
            return Err(Error::invalid(format!(
                "extra_args: '{bad}' would switch off the renderer's containment"
            ))
            .with_backend(BACKEND));
        }
        let exe = find_executable(config.executable.as_deref())?;
        let tabs = Semaphore::new(config.max_tabs.max(1));
        Ok(ChromeRenderer {
            config,
            exe,
            browser: tokio::sync::Mutex::new(None),
            generation: AtomicU64::new(0),
            tabs,
            idle: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
            launched: Mutex::new(Vec::new()),
            own: Mutex::new(HashSet::new()),
            gates: Arc::new(ActiveGates::default()),
        })
    }

    /// The Chromium executable in use.
    pub fn executable(&self) -> &Path {
        &self.exe
    }

    /// The settings.
    pub fn config(&self) -> &ChromeConfig {
        &self.config
    }

    /// The process id of the running browser, if one runs.
    pub async fn browser_pid(&self) -> Option<u32> {
        let mut guard = self.browser.lock().await;
        let b = guard.as_mut()?;
        if b.is_alive() {
            b.pid()
        } else {
            None
        }
    }

    /// The process ids of every browser this renderer started, oldest first.
    pub fn launched_pids(&self) -> Vec<u32> {
        lock(&self.launched).clone()
    }

    /// How many page targets (tabs and windows) the running browser has open, 0 when none
    /// runs. The renderer's own tabs count; a popup a page opened is closed at once, so it
    /// shows here only for the instant before that.
    pub async fn open_windows(&self) -> usize {
        let guard = self.browser.lock().await;
        match guard.as_ref() {
            Some(b) => b.page_targets(&self.config).await.map_or(0, |t| t.len()),
            None => 0,
        }
    }

    /// Connections the browser's proxy let through and refused so far (every connection the
    /// browser makes goes through it).
    pub fn proxy_counts(&self) -> (usize, usize) {
        self.gates.counts()
    }

    /// Takes a tab of the running browser, starting the browser if it is not running.
    async fn checkout(&self, until: Instant) -> Result<Tab, RenderError> {
        let mut guard = tokio::time::timeout_at(until, self.browser.lock())
            .await
            .map_err(|_| RenderError::CdpTimeout {
                what: "browser lock",
                after: self.config.call_timeout,
            })?;
        if self.closed.load(Ordering::SeqCst) {
            return Err(RenderError::ShutDown);
        }
        if !guard.as_mut().is_some_and(BrowserProc::is_alive) {
            if let Some(mut dead) = guard.take() {
                tracing::warn!(pid = ?dead.pid(), "browser is gone; starting a new one");
                dead.shutdown().await;
            }
            lock(&self.idle).clear();
            lock(&self.own).clear();
            let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
            let proc =
                BrowserProc::launch(&self.exe, &self.config, generation, Arc::clone(&self.gates))
                    .await?;
            if let Some(pid) = proc.pid() {
                lock(&self.launched).push(pid);
            }
            *guard = Some(proc);
        }
        let Some(proc) = guard.as_ref() else {
            return Err(RenderError::BrowserGone);
        };
        let generation = proc.generation;
        let dead = proc.dead_flag();
        let reused = {
            let mut idle = lock(&self.idle);
            idle.retain(|t| t.generation == generation);
            idle.pop()
        };
        if let Some(tab) = reused {
            return Ok(tab);
        }
        let page = proc.new_tab(&self.config).await?;
        // Registered under the browser lock, so a sweep never takes it for a popup.
        lock(&self.own).insert(page.target_id().clone());
        drop(guard);
        Tab::setup(page, &self.config, generation, dead).await
    }

    /// Closes every window the renderer did not open itself (popups that got past the
    /// popup blocker), so none keeps running into later renders.
    async fn close_foreign_windows(&self) {
        let guard = self.browser.lock().await;
        if let Some(proc) = guard.as_ref() {
            let keep = lock(&self.own).clone();
            let closed = proc.close_others(&keep, &self.config).await;
            if closed > 0 {
                tracing::warn!(closed, "closed windows a page opened");
            }
        }
    }

    /// Closes one of the renderer's own tabs and forgets its id.
    async fn retire(&self, tab: Tab) {
        let id = tab.page.target_id().clone();
        tab.close(CLOSE_TIMEOUT).await;
        lock(&self.own).remove(&id);
    }

    /// Whether the browser has died (the next checkout starts a new one).
    async fn browser_died(&self) -> bool {
        let mut guard = self.browser.lock().await;
        !guard.as_mut().is_some_and(BrowserProc::is_alive)
    }

    /// One attempt: a tab, navigation, wait, serialization.
    async fn attempt(
        &self,
        req: &RenderRequest,
        until: Instant,
    ) -> Result<RenderedPage, RenderError> {
        let tab = self.checkout(until).await?;
        let ticket = self.gates.admit(req.gate.clone());
        tab.begin(req.gate.clone());
        let result = self.drive(&tab, req, until).await;
        tab.end();
        drop(ticket);
        self.close_foreign_windows().await;
        match result {
            Ok((page, true)) if !self.closed.load(Ordering::SeqCst) => {
                lock(&self.idle).push(tab);
                Ok(page)
            }
            Ok((page, _)) => {
                // Still loading (its load event never came): not safe to navigate again.
                self.retire(tab).await;
                Ok(page)
            }
            Err(e) => {
                // A tab that failed (a timed-out navigation above all) is stuck: replace it.
                self.retire(tab).await;
                Err(e)
            }
        }
    }

    /// Navigates, waits and serializes. Also says whether the tab can serve another page.
    async fn drive(
        &self,
        tab: &Tab,
        req: &RenderRequest,
        until: Instant,
    ) -> Result<(RenderedPage, bool), RenderError> {
        // chromiumoxide answers Page.navigate only after the load event, which a page may
        // never fire (a refused frame is enough): navigate in the background and follow the
        // main document through the tab's network events instead.
        let page = tab.page.clone();
        let url = req.url.to_string();
        let mut nav = tokio::spawn(async move { page.execute(NavigateParams::new(url)).await });
        let result = self.settle_and_read(tab, req, until).await;
        let reusable = nav.is_finished();
        if !reusable {
            nav.abort();
        } else if let Ok(Ok(resp)) = (&mut nav).await {
            if let Some(text) = resp.result.error_text.filter(|t| !t.is_empty()) {
                return Err(RenderError::Navigation(text));
            }
        }
        result.map(|page| (page, reusable))
    }

    async fn settle_and_read(
        &self,
        tab: &Tab,
        req: &RenderRequest,
        until: Instant,
    ) -> Result<RenderedPage, RenderError> {
        let deadline = req.deadline;
        wait::settle(tab, &req.wait, self.config.idle_window, until, deadline).await?;
        let mut tries = 0;
        let value = loop {
            let now = Instant::now();
            if now >= until {
                return Err(RenderError::Deadline(deadline));
            }
            match wait::eval(&tab.page, SERIALIZE, until - now).await {
                Ok(v) => break v,
                Err(RenderError::CdpTimeout { .. }) => return Err(RenderError::Deadline(deadline)),
                // A client-side redirect can replace the document under us: try again.
                Err(RenderError::Cdp { .. }) if tries < 3 => {
                    tries += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
                Err(e) => return Err(e),
            }
        };
        let html = value["html"].as_str().unwrap_or_default().to_string();
        let final_url = value["url"]
            .as_str()
            .and_then(|h| Url::parse(h).ok())
            .unwrap_or_else(|| req.url.clone());
        let status = lock(&tab.state).status;
        Ok(RenderedPage::new(final_url, status, html))
    }
}

/// Refuses a top-level URL before the browser sees it (a browser would load `file:` URLs).
async fn check_top_level(req: &RenderRequest) -> Result<()> {
    let url = &req.url;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(Error::new(
            ErrorKind::PolicyRefused,
            format!("scheme '{}' is never rendered", url.scheme()),
        )
        .with_url(url)
        .with_backend(BACKEND));
    }
    req.gate.check(url)?;
    if matches!(url.host(), Some(Host::Domain(_))) {
        match tokio::time::timeout(req.deadline, req.gate.resolve(url)).await {
            Ok(r) => {
                r?;
            }
            Err(_) => return Err(RenderError::Deadline(req.deadline).into_error(Some(url))),
        }
    }
    Ok(())
}

#[async_trait]
impl Renderer for ChromeRenderer {
    async fn render(&self, req: &RenderRequest) -> Result<RenderedPage> {
        let until = Instant::now() + req.deadline;
        if self.closed.load(Ordering::SeqCst) {
            return Err(RenderError::ShutDown.into_error(Some(&req.url)));
        }
        check_top_level(req).await?;
        let _permit = match tokio::time::timeout_at(until, self.tabs.acquire()).await {
            Ok(Ok(p)) => p,
            Ok(Err(_)) => return Err(RenderError::ShutDown.into_error(Some(&req.url))),
            Err(_) => return Err(RenderError::Deadline(req.deadline).into_error(Some(&req.url))),
        };
        match self.attempt(req, until).await {
            Ok(page) => Ok(page),
            Err(e) if e.may_be_crash() && Instant::now() < until && self.browser_died().await => {
                tracing::warn!(url = %req.url, error = %e, "browser died during a render; retrying once");
                self.attempt(req, until)
                    .await
                    .map_err(|e| e.into_error(Some(&req.url)))
            }
            Err(e) => Err(e.into_error(Some(&req.url))),
        }
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::BROWSER
    }

    async fn shutdown(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.tabs.close();
        let mut guard = self.browser.lock().await;
        let tabs: Vec<Tab> = std::mem::take(&mut *lock(&self.idle));
        for tab in tabs {
            tab.close(std::time::Duration::from_secs(1)).await;
        }
        if let Some(mut proc) = guard.take() {
            proc.shutdown().await;
        }
    }
}

impl fmt::Debug for ChromeRenderer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChromeRenderer")
            .field("executable", &self.exe)
            .field("max_tabs", &self.config.max_tabs)
            .field("closed", &self.closed.load(Ordering::SeqCst))
            .finish_non_exhaustive()
    }
}

impl fmt::Display for ChromeRenderer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ChromeRenderer({})", self.exe.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_browser_is_unsupported_and_names_the_path() {
        let config = ChromeConfig::default().with_executable("/nonexistent/kb-crawl-chrome");
        let err = ChromeRenderer::new(config).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unsupported);
        assert_eq!(err.backend(), Some(BACKEND));
        assert!(
            err.to_string().contains("/nonexistent/kb-crawl-chrome"),
            "{err}"
        );
    }

    /// A window the renderer did not open (as a popup that got past the blocker would be)
    /// is closed when the next render ends.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn foreign_windows_reach_nothing_and_are_closed_after_a_render() {
        let Ok(renderer) = ChromeRenderer::new(ChromeConfig::default().with_max_tabs(1)) else {
            assert_ne!(
                std::env::var("KB_CRAWL_REQUIRE_SERVICES").as_deref(),
                Ok("1"),
                "chromium is required"
            );
            println!("SKIPPED: chromium not found");
            return;
        };
        let data = Url::parse("data:text/html,<p>x</p>").unwrap();
        let gate = crawl_core::net::RequestGate::new(
            std::sync::Arc::new(crawl_core::url::Scope::new(
                &Url::parse("http://127.0.0.1:9/").unwrap(),
                crawl_core::WwwPolicy::Equivalent,
                None,
            )),
            crawl_core::net::NetworkPolicy::allow_private(),
        );
        // Starts the browser (the render itself is refused: data: is never rendered).
        let tab = renderer
            .checkout(Instant::now() + std::time::Duration::from_secs(20))
            .await;
        let tab = tab.unwrap();
        // A window the page's interception does not see: only the proxy stands between it
        // and the network. It tries a port outside the scope.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let other = listener.local_addr().unwrap().port();
        let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let h = std::sync::Arc::clone(&hits);
        tokio::spawn(async move {
            while let Ok((_conn, _)) = listener.accept().await {
                h.fetch_add(1, Ordering::SeqCst);
            }
        });
        let ticket = renderer.gates.admit(gate.clone());
        {
            let guard = renderer.browser.lock().await;
            let proc = guard.as_ref().unwrap();
            let foreign = proc.new_tab(&renderer.config).await.unwrap();
            let url = format!("http://127.0.0.1:{other}/escape");
            let _ =
                tokio::time::timeout(std::time::Duration::from_secs(10), foreign.goto(url)).await;
        }
        drop(ticket);
        assert_eq!(
            hits.load(Ordering::SeqCst),
            0,
            "a window outside the interception got out"
        );
        assert!(renderer.proxy_counts().1 >= 1, "the proxy refused nothing");
        // Chromium's own first tab, the checked-out tab and the foreign one.
        assert_eq!(renderer.open_windows().await, 3);
        lock(&renderer.idle).push(tab);
        let _ = renderer.render(&RenderRequest::new(data, gate)).await;
        renderer.close_foreign_windows().await;
        // Target.closeTarget answers before the target is gone: wait for it to go.
        let mut open = renderer.open_windows().await;
        for _ in 0..50 {
            if open <= 1 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            open = renderer.open_windows().await;
        }
        assert_eq!(open, 1, "the foreign window is still open");
        renderer.shutdown().await;
    }

    #[test]
    fn capabilities_say_browser() {
        if let Ok(r) = ChromeRenderer::new(ChromeConfig::default()) {
            assert_eq!(r.capabilities(), Capabilities::BROWSER);
            assert!(r.to_string().starts_with("ChromeRenderer("));
        }
    }
}

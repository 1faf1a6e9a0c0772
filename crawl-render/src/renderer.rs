//! [`ChromeRenderer`]: the [`Renderer`] backed by one headless Chromium and a pool of tabs.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use async_trait::async_trait;
use chromiumoxide::cdp::browser_protocol::page::NavigateParams;
use crawl_core::{Capabilities, Error, ErrorKind, RenderRequest, RenderedPage, Renderer, Result};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use url::{Host, Url};

use crate::config::ChromeConfig;
use crate::error::{RenderError, BACKEND};
use crate::intercept::lock;
use crate::launch::{find_executable, BrowserProc};
use crate::tab::Tab;
use crate::wait;

/// Serializes the document (doctype included) and its URL.
const SERIALIZE: &str = "({ url: location.href, html: (document.doctype ? \
    new XMLSerializer().serializeToString(document.doctype) + '\\n' : '') + \
    (document.documentElement ? document.documentElement.outerHTML : '') })";

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
/// load (their own requests are paused). Host names are resolved by the gate and again by
/// Chromium, so a DNS answer that changes in between is not caught.
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
}

impl ChromeRenderer {
    /// A renderer that will use the Chromium `config` names (see
    /// [`ChromeConfig::executable`]). The browser starts on the first render.
    ///
    /// Fails with [`ErrorKind::Unsupported`] naming every place tried when no Chromium is
    /// found.
    pub fn new(config: ChromeConfig) -> Result<Self> {
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
            let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
            let proc = BrowserProc::launch(&self.exe, &self.config, generation).await?;
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
        drop(guard);
        Tab::setup(page, &self.config, generation, dead).await
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
        tab.begin(req.gate.clone());
        let result = self.drive(&tab, req, until).await;
        tab.end();
        match result {
            Ok((page, true)) if !self.closed.load(Ordering::SeqCst) => {
                lock(&self.idle).push(tab);
                Ok(page)
            }
            Ok((page, _)) => {
                // Still loading (its load event never came): not safe to navigate again.
                tab.close(CLOSE_TIMEOUT).await;
                Ok(page)
            }
            Err(e) => {
                // A tab that failed (a timed-out navigation above all) is stuck: replace it.
                tab.close(CLOSE_TIMEOUT).await;
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

    #[test]
    fn capabilities_say_browser() {
        if let Ok(r) = ChromeRenderer::new(ChromeConfig::default()) {
            assert_eq!(r.capabilities(), Capabilities::BROWSER);
            assert!(r.to_string().starts_with("ChromeRenderer("));
        }
    }
}

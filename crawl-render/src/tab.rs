//! One browser tab: its interception, network bookkeeping and dialog handling.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EnableParams, EventRequestPaused, FailRequestParams, RequestPattern,
    RequestStage,
};
use chromiumoxide::cdp::browser_protocol::network::{
    ErrorReason, EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent,
    EventResponseReceived, EventWebSocketCreated, ResourceType, SetBypassServiceWorkerParams,
};
use chromiumoxide::cdp::browser_protocol::page::{
    AddScriptToEvaluateOnNewDocumentParams, DialogType, EventJavascriptDialogOpening,
    HandleJavaScriptDialogParams,
};
use chromiumoxide::Page;
use crawl_core::net::RequestGate;
use futures::stream::{BoxStream, StreamExt};
use tokio::task::JoinHandle;

use crate::config::ChromeConfig;
use crate::error::{cdp, RenderError};
use crate::intercept::{self, lock, Refusal};

/// What the event task knows about the render running in a tab.
#[derive(Debug)]
pub(crate) struct TabState {
    /// The gate of the running render; `None` between renders (everything is refused).
    pub(crate) gate: Option<RequestGate>,
    /// Network requests started and not yet finished or failed: id to URL.
    pub(crate) inflight: HashMap<String, String>,
    /// Requests already finished, failed or refused during this render. The event streams are
    /// merged, so a request's end can be seen before its start; a start seen after its end
    /// must not count as in flight (that left a refused image "loading" until the deadline).
    done: HashSet<String>,
    /// When `inflight` last changed.
    pub(crate) last_change: Instant,
    /// HTTP status of the main document.
    pub(crate) status: u16,
    /// The main document's response arrived.
    pub(crate) committed: bool,
    /// Network id of the latest main-frame document request.
    main_request: Option<String>,
    /// Why the main document failed to load (`net::ERR_...`).
    pub(crate) main_error: Option<String>,
    /// A WebSocket the page opened despite the stubs (the tab is then closed).
    pub(crate) websocket: Option<String>,
    /// Requests refused during this render (for logs).
    pub(crate) refused: usize,
}

/// A tab with its event task.
#[derive(Debug)]
pub(crate) struct Tab {
    pub(crate) page: Page,
    pub(crate) state: Arc<Mutex<TabState>>,
    vetted: Arc<Mutex<HashSet<String>>>,
    events: JoinHandle<()>,
    /// Set when the browser's DevTools connection breaks.
    browser_dead: Arc<AtomicBool>,
    /// The browser launch this tab belongs to.
    pub(crate) generation: u64,
}

/// Everything the event task listens to, in one stream.
enum Event {
    Paused(Arc<EventRequestPaused>),
    Sent(Arc<EventRequestWillBeSent>),
    Finished(Arc<EventLoadingFinished>),
    Failed(Arc<EventLoadingFailed>),
    Response(Arc<EventResponseReceived>),
    WebSocket(Arc<EventWebSocketCreated>),
    Dialog(Arc<EventJavascriptDialogOpening>),
}

impl Tab {
    /// Sets up interception, the API stubs and the listeners on a fresh blank `page`.
    pub(crate) async fn setup(
        page: Page,
        config: &ChromeConfig,
        generation: u64,
        browser_dead: Arc<AtomicBool>,
    ) -> Result<Tab, RenderError> {
        let limit = config.call_timeout;
        let events = listen(&page, limit).await?;
        let state = Arc::new(Mutex::new(TabState {
            gate: None,
            inflight: HashMap::new(),
            done: HashSet::new(),
            last_change: Instant::now(),
            status: 0,
            committed: false,
            main_request: None,
            main_error: None,
            websocket: None,
            refused: 0,
        }));
        let vetted = Arc::new(Mutex::new(HashSet::new()));
        let events = tokio::spawn(run_events(
            page.clone(),
            events,
            Arc::clone(&state),
            Arc::clone(&vetted),
            config.block_media,
            limit,
        ));
        let tab = Tab {
            page,
            state,
            vetted,
            events,
            browser_dead,
            generation,
        };
        if let Err(e) = tab.enable(limit).await {
            tab.close(limit).await;
            return Err(e);
        }
        Ok(tab)
    }

    async fn enable(&self, limit: std::time::Duration) -> Result<(), RenderError> {
        let script = AddScriptToEvaluateOnNewDocumentParams::new(intercept::STUB_SCRIPT);
        cdp(
            "Page.addScriptToEvaluateOnNewDocument",
            limit,
            self.page.execute(script),
        )
        .await?;
        let bypass = SetBypassServiceWorkerParams::new(true);
        cdp(
            "Network.setBypassServiceWorker",
            limit,
            self.page.execute(bypass),
        )
        .await?;
        let fetch = EnableParams::builder()
            .pattern(
                RequestPattern::builder()
                    .url_pattern("*")
                    .request_stage(RequestStage::Request)
                    .build(),
            )
            .build();
        cdp("Fetch.enable", limit, self.page.execute(fetch)).await?;
        Ok(())
    }

    /// Whether the browser this tab lives in has gone away.
    pub(crate) fn browser_gone(&self) -> bool {
        self.browser_dead.load(Ordering::SeqCst)
    }

    /// Starts a render under `gate`: clears the bookkeeping of the previous one.
    pub(crate) fn begin(&self, gate: RequestGate) {
        lock(&self.vetted).clear();
        let mut s = lock(&self.state);
        s.gate = Some(gate);
        s.inflight.clear();
        s.done.clear();
        s.last_change = Instant::now();
        s.status = 0;
        s.committed = false;
        s.main_request = None;
        s.main_error = None;
        s.websocket = None;
        s.refused = 0;
    }

    /// Ends a render: from now on the tab's leftover activity is refused.
    pub(crate) fn end(&self) {
        lock(&self.state).gate = None;
        lock(&self.vetted).clear();
    }

    /// Closes the tab and stops its event task.
    pub(crate) async fn close(self, limit: std::time::Duration) {
        let _ = tokio::time::timeout(limit, self.page.clone().close()).await;
        self.events.abort();
    }
}

impl Drop for Tab {
    fn drop(&mut self) {
        self.events.abort();
    }
}

async fn listen(
    page: &Page,
    limit: std::time::Duration,
) -> Result<BoxStream<'static, Event>, RenderError> {
    let what = "event listener";
    let streams: Vec<BoxStream<'static, Event>> = vec![
        cdp(what, limit, page.event_listener::<EventRequestPaused>())
            .await?
            .map(Event::Paused)
            .boxed(),
        cdp(what, limit, page.event_listener::<EventRequestWillBeSent>())
            .await?
            .map(Event::Sent)
            .boxed(),
        cdp(what, limit, page.event_listener::<EventLoadingFinished>())
            .await?
            .map(Event::Finished)
            .boxed(),
        cdp(what, limit, page.event_listener::<EventLoadingFailed>())
            .await?
            .map(Event::Failed)
            .boxed(),
        cdp(what, limit, page.event_listener::<EventResponseReceived>())
            .await?
            .map(Event::Response)
            .boxed(),
        cdp(what, limit, page.event_listener::<EventWebSocketCreated>())
            .await?
            .map(Event::WebSocket)
            .boxed(),
        cdp(
            what,
            limit,
            page.event_listener::<EventJavascriptDialogOpening>(),
        )
        .await?
        .map(Event::Dialog)
        .boxed(),
    ];
    Ok(futures::stream::select_all(streams).boxed())
}

/// The tab's event loop: answers paused requests, tracks in-flight requests, dismisses
/// dialogs and closes the tab when a WebSocket slips through.
async fn run_events(
    page: Page,
    mut events: BoxStream<'static, Event>,
    state: Arc<Mutex<TabState>>,
    vetted: Arc<Mutex<HashSet<String>>>,
    block_media: bool,
    limit: std::time::Duration,
) {
    let main_frame = page.target_id().inner().clone();
    while let Some(event) = events.next().await {
        match event {
            Event::Paused(ev) => {
                let gate = lock(&state).gate.clone();
                let page = page.clone();
                let state = Arc::clone(&state);
                let vetted = Arc::clone(&vetted);
                tokio::spawn(async move {
                    answer(page, ev, gate, state, vetted, block_media, limit).await;
                });
            }
            Event::Sent(ev) => {
                let mut s = lock(&state);
                if ev.r#type == Some(ResourceType::Document)
                    && ev
                        .frame_id
                        .as_ref()
                        .is_some_and(|f| f.inner() == &main_frame)
                {
                    s.main_request = Some(ev.request_id.inner().clone());
                }
                // data:, blob: and the like never touch the network (and Chromium does not
                // always report them finished).
                let id = ev.request_id.inner();
                let network =
                    ev.request.url.starts_with("http:") || ev.request.url.starts_with("https:");
                if network && !s.done.contains(id) {
                    s.inflight
                        .insert(ev.request_id.inner().clone(), ev.request.url.clone());
                    s.last_change = Instant::now();
                }
            }
            Event::Finished(ev) => finish(&state, ev.request_id.inner()),
            Event::Failed(ev) => {
                let id = ev.request_id.inner();
                let mut s = lock(&state);
                if s.main_request.as_deref() == Some(id.as_str()) && ev.canceled != Some(true) {
                    s.main_error = Some(ev.error_text.clone());
                }
                drop(s);
                finish(&state, id);
            }
            Event::Response(ev) => {
                let is_main = ev.r#type == ResourceType::Document
                    && ev
                        .frame_id
                        .as_ref()
                        .is_some_and(|f| f.inner() == &main_frame);
                if is_main {
                    let mut s = lock(&state);
                    s.status = u16::try_from(ev.response.status).unwrap_or(0);
                    s.committed = true;
                }
            }
            Event::WebSocket(ev) => {
                tracing::warn!(url = %ev.url, "page opened a WebSocket; closing its tab");
                lock(&state).websocket = Some(ev.url.clone());
                let _ = tokio::time::timeout(limit, page.clone().close()).await;
            }
            Event::Dialog(ev) => {
                let accept = ev.r#type == DialogType::Beforeunload;
                let answer = HandleJavaScriptDialogParams::new(accept);
                let _ = tokio::time::timeout(limit, page.execute(answer)).await;
            }
        }
    }
}

fn finish(state: &Mutex<TabState>, id: &str) {
    let mut s = lock(state);
    s.done.insert(id.to_string());
    if s.inflight.remove(id).is_some() {
        s.last_change = Instant::now();
    }
}

/// Lets one paused request go on, or fails it as blocked by the client.
async fn answer(
    page: Page,
    ev: Arc<EventRequestPaused>,
    gate: Option<RequestGate>,
    state: Arc<Mutex<TabState>>,
    vetted: Arc<Mutex<HashSet<String>>>,
    block_media: bool,
    limit: std::time::Duration,
) {
    let verdict = intercept::check(
        gate.as_ref(),
        &vetted,
        &ev.request.url,
        &ev.resource_type,
        block_media,
    )
    .await;
    let id = ev.request_id.clone();
    let sent = match verdict {
        Ok(()) => tokio::time::timeout(limit, page.execute(ContinueRequestParams::new(id)))
            .await
            .map(|r| r.is_ok()),
        Err(why) => {
            if why != Refusal::Media && why != Refusal::Idle {
                tracing::debug!(url = %ev.request.url, reason = ?why, "refused a page request");
            }
            lock(&state).refused += 1;
            // A refused request never loads: it is done now, whatever order its network
            // events arrive in.
            if let Some(network_id) = ev.network_id.as_ref() {
                finish(&state, network_id.inner());
            }
            let fail = FailRequestParams::new(id, ErrorReason::BlockedByClient);
            tokio::time::timeout(limit, page.execute(fail))
                .await
                .map(|r| r.is_ok())
        }
    };
    if !matches!(sent, Ok(true)) {
        tracing::debug!(url = %ev.request.url, "could not answer a paused request");
    }
}

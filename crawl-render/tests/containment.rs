//! Containment: what a page may reach, and deadlines (one browser for the whole file).

mod common;

use std::time::{Duration, Instant};

use common::{assert_no_browser_left, renderer_or_skip, Counter, Site};
use crawl_core::{ErrorKind, RenderRequest, Renderer};
use crawl_render::{ChromeConfig, ChromeRenderer};
use url::Url;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_reach_only_what_the_gate_allows() {
    let Some(renderer) = renderer_or_skip(ChromeConfig::default().with_max_tabs(2)) else {
        return;
    };
    let other = Counter::start().await;
    let ws = Counter::start().await;
    let site = Site::start(other.port, ws.port).await;

    top_level_file_url_is_refused_before_navigation(&renderer, &site).await;
    top_level_out_of_scope_url_is_refused(&renderer, &site, other.port).await;
    iframe_fetch_image_and_websocket_are_blocked(&renderer, &site, &other, &ws).await;
    popups_forms_and_new_windows_reach_nothing(&renderer, &site, &other, &ws).await;
    page_that_never_settles_times_out(&renderer, &site).await;
    renderer_still_works_after_a_timeout(&renderer, &site).await;

    renderer.shutdown().await;
    assert_no_browser_left(&renderer);
    let after = renderer.render(&site.request("plain")).await.unwrap_err();
    assert_eq!(after.kind(), ErrorKind::Unsupported, "{after}");
}

async fn top_level_file_url_is_refused_before_navigation(renderer: &ChromeRenderer, site: &Site) {
    let req = RenderRequest::new(Url::parse("file:///etc/passwd").unwrap(), site.gate());
    let err = renderer.render(&req).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::PolicyRefused, "{err}");
    // Refused before any browser was needed.
    assert!(renderer.launched_pids().is_empty());
}

async fn top_level_out_of_scope_url_is_refused(renderer: &ChromeRenderer, site: &Site, port: u16) {
    let url = Url::parse(&format!("http://127.0.0.1:{port}/")).unwrap();
    let err = renderer
        .render(&RenderRequest::new(url, site.gate()))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::OutOfScope, "{err}");
}

async fn iframe_fetch_image_and_websocket_are_blocked(
    renderer: &ChromeRenderer,
    site: &Site,
    other: &Counter,
    ws: &Counter,
) {
    let req = site
        .request("contain")
        .with_deadline(Duration::from_secs(20));
    let page = renderer.render(&req).await.unwrap();
    assert!(page.html.contains("CONTAINED-PAGE-OK"), "{}", page.html);
    assert!(
        !page.html.contains("root:x:0:0"),
        "file content leaked: {}",
        page.html
    );
    assert!(page.html.contains("fetch blocked"), "{}", page.html);
    assert!(page.html.contains("ws blocked"), "{}", page.html);
    // Give a late request a moment to arrive before counting.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(other.hits(), 0, "the out-of-scope listener was reached");
    assert_eq!(ws.hits(), 0, "the WebSocket listener was reached");
    // The page itself came through the browser's gate proxy: it is the browser's way out.
    let (allowed, _) = renderer.proxy_counts();
    assert!(allowed > 0, "the browser did not use the gate proxy");
}

/// `window.open` (on the site, off it, `about:blank` driven by the opener), a form posted into
/// a new window and a `target=_blank` link: none of them reaches the out-of-scope listener or
/// the WebSocket listener, nothing is written back into the stored page, and no window is left
/// running into the next render.
async fn popups_forms_and_new_windows_reach_nothing(
    renderer: &ChromeRenderer,
    site: &Site,
    other: &Counter,
    ws: &Counter,
) {
    let req = site
        .request("popup-opener")
        .with_deadline(Duration::from_secs(20));
    let page = renderer.render(&req).await.unwrap();
    assert!(page.html.contains("POPUP-OPENER-OK"), "{}", page.html);
    assert!(
        !page.html.contains("POPUP-LEAK"),
        "a popup wrote into the page: {}",
        page.html
    );
    // A popup left running would keep trying; give it time, and render another page meanwhile.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let next = renderer.render(&site.request("plain")).await.unwrap();
    assert!(next.html.contains("PLAIN"), "{}", next.html);
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        other.hits(),
        0,
        "a new window reached the out-of-scope listener"
    );
    assert_eq!(ws.hits(), 0, "a new window reached the WebSocket listener");
    let windows = renderer.open_windows().await;
    assert!(
        windows <= 2,
        "{windows} page targets are open: popups were left running"
    );
}

async fn page_that_never_settles_times_out(renderer: &ChromeRenderer, site: &Site) {
    let deadline = Duration::from_secs(3);
    let req = site.request("never").with_deadline(deadline);
    let started = Instant::now();
    let err = renderer.render(&req).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RenderTimeout, "{err}");
    assert_eq!(err.url().map(Url::as_str), Some(req.url.as_str()));
    // Hang guard only: the call returns, and not long after its deadline.
    assert!(started.elapsed() < deadline + Duration::from_secs(15));
}

async fn renderer_still_works_after_a_timeout(renderer: &ChromeRenderer, site: &Site) {
    let page = renderer.render(&site.request("article")).await.unwrap();
    assert!(page.html.contains("ARTICLE-TEXT-FROM-SCRIPT"));
}

/// The popup blocker cannot be switched off through `extra_args`.
#[test]
fn extra_args_cannot_turn_the_popup_blocker_off() {
    let config = ChromeConfig::default().with_extra_args(["--disable-popup-blocking"]);
    let err = ChromeRenderer::new(config).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
    assert!(err.to_string().contains("disable-popup-blocking"), "{err}");
}

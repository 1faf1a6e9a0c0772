//! A killed browser is replaced and no process is left behind.

mod common;

use common::{alive, assert_no_browser_left, chromium_children, renderer_or_skip, Site};
use crawl_core::Renderer;
use crawl_render::{ChromeConfig, ChromeRenderer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_browser_is_relaunched_and_nothing_is_left() {
    let Some(renderer) = renderer_or_skip(ChromeConfig::default().with_max_tabs(1)) else {
        return;
    };
    let site = Site::start(9, 9).await;

    let first = renderer.render(&site.request("article")).await.unwrap();
    assert!(first.html.contains("ARTICLE-TEXT-FROM-SCRIPT"));
    let pid = renderer.browser_pid().await.expect("a browser runs");
    let status = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());

    let second = renderer.render(&site.request("links")).await.unwrap();
    assert!(second.html.contains("/docs/page-3"), "{}", second.html);
    let pids = renderer.launched_pids();
    assert_eq!(pids.len(), 2, "{pids:?}");
    assert!(!alive(pid), "the killed browser was not reaped");
    assert_ne!(renderer.browser_pid().await, Some(pid));

    renderer.shutdown().await;
    assert_no_browser_left(&renderer);

    dropping_the_renderer_kills_the_browser(&site).await;
}

async fn dropping_the_renderer_kills_the_browser(site: &Site) {
    let renderer = ChromeRenderer::new(ChromeConfig::default().with_max_tabs(1)).unwrap();
    renderer.render(&site.request("plain")).await.unwrap();
    let pid = renderer.browser_pid().await.expect("a browser runs");
    drop(renderer);
    // The kill is sent on drop; the runtime reaps the child shortly after.
    for _ in 0..100 {
        if !alive(pid) && chromium_children().is_empty() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!(
        "browser {pid} still there after drop: {:?}",
        chromium_children()
    );
}

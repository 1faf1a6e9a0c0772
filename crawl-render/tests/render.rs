//! Script-built pages render to the DOM the scripts made (one browser for the whole file).

mod common;

use std::time::Duration;

use common::{assert_no_browser_left, renderer_or_skip, Site};
use crawl_core::{Renderer, WaitStrategy};
use crawl_render::{ChromeConfig, ChromeRenderer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn script_built_pages_render_with_one_shared_browser() {
    let Some(renderer) = renderer_or_skip(ChromeConfig::default().with_max_tabs(2)) else {
        return;
    };
    let site = Site::start(9, 9).await;

    article_text_inserted_by_script(&renderer, &site).await;
    links_exist_only_after_script(&renderer, &site).await;
    spa_route_renders_its_content(&renderer, &site).await;
    spa_push_state_changes_final_url(&renderer, &site).await;
    wait_for_selector(&renderer, &site).await;
    invalid_selector_is_an_error(&renderer, &site).await;
    alert_and_confirm_do_not_block(&renderer, &site).await;
    two_pages_at_once(&renderer, &site).await;

    renderer.shutdown().await;
    renderer.shutdown().await; // idempotent
    assert_no_browser_left(&renderer);
}

async fn article_text_inserted_by_script(renderer: &ChromeRenderer, site: &Site) {
    let page = renderer.render(&site.request("article")).await.unwrap();
    assert!(
        page.html.contains("ARTICLE-TEXT-FROM-SCRIPT"),
        "{}",
        page.html
    );
    assert!(
        page.html.contains("<h1>Rendered article</h1>"),
        "{}",
        page.html
    );
    assert_eq!(page.status, 200);
    assert_eq!(
        page.final_url.as_str(),
        site.root.join("article").unwrap().as_str()
    );
}

async fn links_exist_only_after_script(renderer: &ChromeRenderer, site: &Site) {
    let page = renderer.render(&site.request("links")).await.unwrap();
    for n in 1..=3 {
        let link = format!("href=\"/docs/page-{n}\"");
        assert!(page.html.contains(&link), "missing {link}: {}", page.html);
    }
}

async fn spa_route_renders_its_content(renderer: &ChromeRenderer, site: &Site) {
    let page = renderer.render(&site.request("app/about")).await.unwrap();
    assert!(page.html.contains("SPA-ABOUT-ROUTE"), "{}", page.html);
}

async fn spa_push_state_changes_final_url(renderer: &ChromeRenderer, site: &Site) {
    let page = renderer
        .render(&site.request("app/go-about"))
        .await
        .unwrap();
    assert!(page.html.contains("SPA-ABOUT-ROUTE"), "{}", page.html);
    assert_eq!(page.final_url.path(), "/app/about");
}

async fn wait_for_selector(renderer: &ChromeRenderer, site: &Site) {
    let req = site
        .request("links")
        .with_wait(WaitStrategy::Selector("a[href='/docs/page-3']".into()));
    let page = renderer.render(&req).await.unwrap();
    assert!(page.html.contains("/docs/page-3"), "{}", page.html);
}

async fn invalid_selector_is_an_error(renderer: &ChromeRenderer, site: &Site) {
    let req = site
        .request("plain")
        .with_wait(WaitStrategy::Selector("a[[[".into()))
        .with_deadline(Duration::from_secs(10));
    let err = renderer.render(&req).await.unwrap_err();
    assert_eq!(err.kind(), crawl_core::ErrorKind::RenderFailed, "{err}");
    assert_eq!(err.backend(), Some("ChromeRenderer"));
}

async fn alert_and_confirm_do_not_block(renderer: &ChromeRenderer, site: &Site) {
    let req = site.request("alert").with_deadline(Duration::from_secs(15));
    let page = renderer.render(&req).await.unwrap();
    assert!(
        page.html.contains("AFTER-ALERT confirm=false"),
        "{}",
        page.html
    );
}

async fn two_pages_at_once(renderer: &ChromeRenderer, site: &Site) {
    let a = site.request("page/1");
    let b = site.request("page/2");
    let (a, b) = tokio::join!(renderer.render(&a), renderer.render(&b));
    assert!(a.unwrap().html.contains("<h1>Page 1</h1>"));
    assert!(b.unwrap().html.contains("<h1>Page 2</h1>"));
}

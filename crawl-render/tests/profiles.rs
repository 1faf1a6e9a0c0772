//! A renderer's browser profile folder is removed when it shuts down or is dropped, and a
//! process that died without cleaning up has its folder removed by the next renderer that
//! starts.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{renderer_or_skip, Site};
use crawl_core::Renderer;
use crawl_render::{ChromeConfig, ChromeRenderer};

/// The profile folders under `root`.
fn profiles(root: &Path) -> Vec<String> {
    std::fs::read_dir(root)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("kb-crawl-chromium-"))
                .collect()
        })
        .unwrap_or_default()
}

/// Waits (bounded) for `root` to hold no profile folder; fails naming what is left.
async fn assert_none_left(root: &Path, after: &str) {
    // Chromium's helper processes outlive a killed browser for a moment and may write into
    // its folder meanwhile; the removal retries until they are gone.
    for _ in 0..600 {
        if profiles(root).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("after {after}: profile folders left: {:?}", profiles(root));
}

fn config(root: &Path) -> ChromeConfig {
    ChromeConfig::default()
        .with_max_tabs(1)
        .with_profile_root(root)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_profile_folder_outlives_its_renderer() {
    let root = tempfile::tempdir().unwrap();
    let Some(renderer) = renderer_or_skip(config(root.path())) else {
        return;
    };
    let site = Site::start(9, 9).await;

    // Normal shutdown.
    renderer.render(&site.request("article")).await.unwrap();
    assert_eq!(
        profiles(root.path()).len(),
        1,
        "a running browser has one profile"
    );
    renderer.shutdown().await;
    assert_none_left(root.path(), "shutdown").await;

    // Drop without shutdown.
    let renderer = ChromeRenderer::new(config(root.path())).unwrap();
    renderer.render(&site.request("plain")).await.unwrap();
    drop(renderer);
    assert_none_left(root.path(), "drop without shutdown").await;

    // Not covered reliably: a render cancelled mid-page (or mid-launch), and a browser
    // crash and relaunch. Their folders are removed by the same retrying removal, but on a
    // loaded machine a full profile of the ended browser was sometimes still there 30 s later
    // (cause not found yet; issue 17 stays open for it).

    // One browser at a time in this file: folders are counted per path taken.
    a_dead_process_profile_is_removed_by_the_next_renderer().await;
}

/// What a process killed mid-crawl leaves is removed by the next renderer that starts.
async fn a_dead_process_profile_is_removed_by_the_next_renderer() {
    let root = tempfile::tempdir().unwrap();
    // What a process killed mid-crawl leaves: a folder named after its (now dead) pid, with
    // files in it; and one of a process that still runs (this one), which must stay.
    let dead = root.path().join("kb-crawl-chromium-4194303-abcdef");
    std::fs::create_dir_all(dead.join("Default/Cache")).unwrap();
    std::fs::write(dead.join("Default/Preferences"), "{}").unwrap();
    let live = root
        .path()
        .join(format!("kb-crawl-chromium-{}-zzzzzz", std::process::id()));
    std::fs::create_dir_all(&live).unwrap();
    let Some(renderer) = renderer_or_skip(config(root.path())) else {
        return;
    };
    let site = Site::start(9, 9).await;
    renderer.render(&site.request("plain")).await.unwrap();
    assert!(!dead.exists(), "the dead process's profile is still there");
    assert!(live.exists(), "a live process's profile was removed");
    renderer.shutdown().await;
    std::fs::remove_dir_all(&live).unwrap();
    assert_none_left(root.path(), "shutdown").await;
}

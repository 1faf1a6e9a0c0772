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
    let left = profiles(root);
    let holders: Vec<String> = left.iter().flat_map(|name| holders_of(name)).collect();
    let files: Vec<String> = left
        .iter()
        .flat_map(|n| {
            std::fs::read_dir(root.join(n))
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    panic!("after {after}: profile folders left: {left:?}, holding {files:?}; processes naming them: {holders:?}");
}

/// The processes whose command line names `folder`, with their state.
fn holders_of(folder: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.parse::<u32>().is_err() {
            continue;
        }
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmd).contains(folder) {
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            found.push(stat.chars().take(60).collect());
        }
    }
    found
}

fn config(root: &Path) -> ChromeConfig {
    ChromeConfig::default()
        .with_max_tabs(1)
        .with_profile_root(root)
}

/// One browser at a time in this file: a loaded machine is what these paths are about, and
/// each test counts the folders of its own root.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_profile_folder_outlives_its_renderer() {
    let _serial = SERIAL.lock().await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_render_leaves_no_profile_folder() {
    let _serial = SERIAL.lock().await;
    let root = tempfile::tempdir().unwrap();
    let Some(renderer) = renderer_or_skip(config(root.path())) else {
        return;
    };
    let site = Site::start(9, 9).await;

    // Cancelled mid-page (the page never answers), then the renderer goes on, then it is
    // dropped (a cancelled crawl drops its renderer).
    renderer.render(&site.request("plain")).await.unwrap();
    let req = site.request("hang");
    let hang = tokio::time::timeout(Duration::from_millis(500), renderer.render(&req));
    assert!(hang.await.is_err(), "the hanging page answered");
    renderer.render(&site.request("plain")).await.unwrap();
    assert_eq!(profiles(root.path()).len(), 1, "one browser, one profile");
    let req = site.request("hang");
    let hang = tokio::time::timeout(Duration::from_millis(500), renderer.render(&req));
    assert!(hang.await.is_err());
    drop(renderer);
    assert_none_left(root.path(), "a render cancelled mid-page, then drop").await;

    // Cancelled while the browser starts, at several points of the launch.
    for ms in [50, 200, 400, 800] {
        let renderer = ChromeRenderer::new(config(root.path())).unwrap();
        let req = site.request("plain");
        let _ = tokio::time::timeout(Duration::from_millis(ms), renderer.render(&req)).await;
        drop(renderer);
        assert_none_left(
            root.path(),
            &format!("a render cancelled after {ms} ms, then drop"),
        )
        .await;
    }

    // Cancelled mid-page, then shut down.
    let renderer = ChromeRenderer::new(config(root.path())).unwrap();
    renderer.render(&site.request("plain")).await.unwrap();
    let req = site.request("hang");
    let hang = tokio::time::timeout(Duration::from_millis(500), renderer.render(&req));
    assert!(hang.await.is_err());
    renderer.shutdown().await;
    assert_eq!(
        profiles(root.path()),
        Vec::<String>::new(),
        "shutdown returned with a profile left"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_browser_leaves_no_profile_folder_when_relaunched() {
    let _serial = SERIAL.lock().await;
    let root = tempfile::tempdir().unwrap();
    let Some(renderer) = renderer_or_skip(config(root.path())) else {
        return;
    };
    let site = Site::start(9, 9).await;
    for round in 0..3 {
        renderer.render(&site.request("article")).await.unwrap();
        assert_eq!(
            profiles(root.path()).len(),
            1,
            "round {round}: one browser, one profile"
        );
        let crashed = profiles(root.path()).remove(0);
        let pid = renderer.browser_pid().await.expect("a browser runs");
        let status = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        // The next render finds the browser dead, removes its profile and starts another.
        renderer.render(&site.request("plain")).await.unwrap();
        assert_eq!(
            profiles(root.path()).len(),
            1,
            "round {round}: the crashed browser's profile is still there beside the new one"
        );
        // Its helpers outlived it; they were ended before the folder was removed.
        let left = holders_of(&crashed);
        assert!(
            left.is_empty(),
            "round {round}: processes of the crashed browser: {left:?}"
        );
    }
    assert_eq!(renderer.launched_pids().len(), 4);
    renderer.shutdown().await;
    assert_eq!(
        profiles(root.path()),
        Vec::<String>::new(),
        "shutdown returned with a profile left"
    );
}

//! Finding, launching and stopping one Chromium process.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::cdp::browser_protocol::browser::{
    SetDownloadBehaviorBehavior, SetDownloadBehaviorParams,
};
use chromiumoxide::cdp::browser_protocol::target::{
    CloseTargetParams, CreateTargetParams, GetTargetsParams, TargetId,
};
use chromiumoxide::error::CdpError;
use chromiumoxide::Page;
use futures::StreamExt;
use tokio::task::JoinHandle;

use crate::config::ChromeConfig;
use crate::error::{cdp, RenderError};
use crate::profile::{dispose, remove_orphans, Profile, PROFILE_PREFIX, TAG};
use crate::proxy::{ActiveGates, GateProxy};

/// Flags for a headless Chromium that talks to nothing but the pages it is asked for.
///
/// chromiumoxide's own default flags are not used: they include `--disable-popup-blocking`.
/// Without it, a page script cannot open a window (no user gesture ever happens in a
/// headless render), and `block-new-web-contents` refuses new windows outright.
const FLAGS: &[&str] = &[
    "headless",
    "hide-scrollbars",
    "mute-audio",
    "block-new-web-contents",
    "disable-background-timer-throttling",
    "disable-backgrounding-occluded-windows",
    "disable-breakpad",
    "disable-client-side-phishing-detection",
    "disable-component-extensions-with-background-pages",
    "disable-dev-shm-usage",
    "disable-hang-monitor",
    "disable-ipc-flooding-protection",
    "disable-prompt-on-repost",
    "disable-renderer-backgrounding",
    "metrics-recording-only",
    "password-store=basic",
    "use-mock-keychain",
    "lang=en_US",
    "no-sandbox",
    "disable-gpu",
    "disable-quic",
    "no-first-run",
    "disable-background-networking",
    "disable-component-update",
    "disable-sync",
    "disable-default-apps",
    "disable-extensions",
    // Keep every frame in the page's renderer so the page's Fetch interception sees all of
    // their requests.
    "disable-site-isolation-trials",
];

/// Features turned off (merged with chromiumoxide's own `--disable-features` list).
const DISABLED_FEATURES: &[&str] = &[
    "IsolateOrigins",
    "site-per-process",
    "ServiceWorker",
    "TranslateUI",
];

/// Profile preferences: no network prediction (Chromium would otherwise open speculative
/// connections, for example to a frame's host before its request is paused and refused).
const PREFERENCES: &str =
    r#"{"net":{"network_prediction_options":2},"download":{"prompt_for_download":false}}"#;

fn write_preferences(profile: &Path) -> Result<(), RenderError> {
    let dir = profile.join("Default");
    std::fs::create_dir_all(&dir).map_err(RenderError::Profile)?;
    std::fs::write(dir.join("Preferences"), PREFERENCES).map_err(RenderError::Profile)
}

/// A `--key[=value]` flag in the form chromiumoxide's argument builder merges by key.
fn flag(arg: &str) -> (String, Vec<String>) {
    let arg = arg.trim_start_matches('-');
    match arg.split_once('=') {
        Some((k, v)) => (k.to_string(), v.split(',').map(str::to_string).collect()),
        None => (arg.to_string(), Vec::new()),
    }
}

/// Names looked up on `PATH` after `/usr/bin/chromium`.
const PATH_NAMES: &[&str] = &["chromium", "chromium-browser", "google-chrome"];

/// Finds the Chromium executable: `configured`, else `CHROME`, else the usual places.
pub(crate) fn find_executable(configured: Option<&Path>) -> Result<PathBuf, RenderError> {
    let mut tried = Vec::new();
    if let Some(p) = configured {
        if p.is_file() {
            return Ok(p.to_path_buf());
        }
        tried.push(p.to_path_buf());
        return Err(RenderError::NoBrowser { tried });
    }
    if let Some(p) = std::env::var_os("CHROME").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Ok(p);
        }
        tried.push(p);
    }
    let default = PathBuf::from("/usr/bin/chromium");
    if default.is_file() {
        return Ok(default);
    }
    tried.push(default);
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in PATH_NAMES {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
        tried.push(PathBuf::from(format!("{name} on PATH")));
    }
    Err(RenderError::NoBrowser { tried })
}

/// One running Chromium: the DevTools client, its event-loop task and its profile folder.
#[derive(Debug)]
pub(crate) struct BrowserProc {
    browser: Browser,
    handler: JoinHandle<()>,
    /// Set when the DevTools connection breaks.
    dead: Arc<AtomicBool>,
    profile: Option<Profile>,
    pid: Option<u32>,
    /// The only way out of this browser (see [`crate::proxy`]).
    _proxy: GateProxy,
    /// Bumped on every launch, so tabs of a dead browser are never reused.
    pub(crate) generation: u64,
}

impl BrowserProc {
    /// Starts Chromium with a fresh profile.
    pub(crate) async fn launch(
        exe: &Path,
        config: &ChromeConfig,
        generation: u64,
        gates: Arc<ActiveGates>,
    ) -> Result<Self, RenderError> {
        let proxy = GateProxy::start(gates).await.map_err(RenderError::Proxy)?;
        let proxy_server = proxy.flag_value();
        let root = config
            .profile_root
            .clone()
            .unwrap_or_else(std::env::temp_dir);
        let sweep = root.clone();
        // Blocking: it may wait for a dead process's helpers to end.
        let _ = tokio::task::spawn_blocking(move || remove_orphans(&sweep)).await;
        // Removed whatever happens from here on, even if this future is dropped mid-launch.
        let profile = Profile::new(
            tempfile::Builder::new()
                .prefix(&format!("{PROFILE_PREFIX}{}-", std::process::id()))
                .tempdir_in(&root)
                .map_err(RenderError::Profile)?
                .keep(),
        );
        write_preferences(profile.path())?;
        let mut builder = BrowserConfig::builder()
            .chrome_executable(exe)
            // The browser and its crash handlers carry it (its other helpers get a clean
            // environment and are found by their --user-data-dir): see crate::profile.
            .env(TAG, profile.path().to_string_lossy())
            .no_sandbox()
            .user_data_dir(profile.path())
            .disable_default_args()
            // chromiumoxide tells every tab to ignore certificate errors unless told not to.
            .respect_https_errors()
            .launch_timeout(config.launch_timeout)
            .request_timeout(config.call_timeout)
            .args(FLAGS.iter().copied())
            .arg(("disable-features", DISABLED_FEATURES))
            // Every connection, loopback included (Chromium bypasses proxies for loopback
            // unless told not to), goes through the gate's proxy.
            .arg(("proxy-server", [proxy_server.as_str()].as_slice()))
            .arg(("proxy-bypass-list", ["<-loopback>"].as_slice()));
        for extra in &config.extra_args {
            let (key, values) = flag(extra);
            builder = if values.is_empty() {
                builder.arg(key)
            } else {
                let values: Vec<&str> = values.iter().map(String::as_str).collect();
                builder.arg((key.as_str(), values.as_slice()))
            };
        }
        let browser_config = builder
            .build()
            .map_err(|m| RenderError::Navigation(format!("browser configuration: {m}")))?;
        let launch = Browser::launch(browser_config);
        let (mut browser, mut handler) =
            match tokio::time::timeout(config.launch_timeout, launch).await {
                Ok(Ok(pair)) => pair,
                Ok(Err(source)) => {
                    return Err(RenderError::Launch {
                        path: exe.to_path_buf(),
                        source,
                    })
                }
                Err(_) => {
                    return Err(RenderError::CdpTimeout {
                        what: "launch",
                        after: config.launch_timeout,
                    })
                }
            };
        // Handler errors (such as messages newer than the bindings) are not fatal: keep polling.
        // A broken connection is: the browser is gone (the stream itself never ends then).
        let dead = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&dead);
        let handler = tokio::spawn(async move {
            while let Some(event) = handler.next().await {
                if let Err(CdpError::Ws(_) | CdpError::Io(_)) = event {
                    flag.store(true, Ordering::SeqCst);
                    break;
                }
            }
            flag.store(true, Ordering::SeqCst);
        });
        let pid = browser.get_mut_child().and_then(|c| c.inner.id());
        let mut proc = BrowserProc {
            browser,
            handler,
            dead,
            profile: Some(profile),
            pid,
            _proxy: proxy,
            generation,
        };
        let deny = SetDownloadBehaviorParams::new(SetDownloadBehaviorBehavior::Deny);
        if let Err(e) = cdp(
            "Browser.setDownloadBehavior",
            config.call_timeout,
            proc.browser.execute(deny),
        )
        .await
        {
            proc.shutdown().await;
            return Err(e);
        }
        Ok(proc)
    }

    /// The browser process id.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The flag set when the DevTools connection breaks (shared with the tabs).
    pub(crate) fn dead_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.dead)
    }

    /// Whether the process still runs and its event loop still turns.
    pub(crate) fn is_alive(&mut self) -> bool {
        if self.handler.is_finished() || self.dead.load(Ordering::SeqCst) {
            return false;
        }
        matches!(self.browser.try_wait(), Ok(None))
    }

    /// The ids of every page target of the browser (tabs, popups, new windows).
    pub(crate) async fn page_targets(
        &self,
        config: &ChromeConfig,
    ) -> Result<Vec<TargetId>, RenderError> {
        let resp = cdp(
            "Target.getTargets",
            config.call_timeout,
            self.browser.execute(GetTargetsParams::default()),
        )
        .await?;
        Ok(resp
            .result
            .target_infos
            .into_iter()
            .filter(|t| t.r#type == "page")
            .map(|t| t.target_id)
            .collect())
    }

    /// Closes every page target whose id is not in `keep`: windows a page opened despite the
    /// popup blocker. Returns how many were closed.
    pub(crate) async fn close_others(
        &self,
        keep: &std::collections::HashSet<TargetId>,
        config: &ChromeConfig,
    ) -> usize {
        let Ok(targets) = self.page_targets(config).await else {
            return 0;
        };
        let mut closed = 0;
        for id in targets.into_iter().filter(|t| !keep.contains(t)) {
            let close = CloseTargetParams::new(id.clone());
            match cdp(
                "Target.closeTarget",
                config.call_timeout,
                self.browser.execute(close),
            )
            .await
            {
                Ok(_) => closed += 1,
                Err(e) => tracing::debug!(target = ?id, error = %e, "could not close a window"),
            }
        }
        closed
    }

    /// Opens a blank tab.
    pub(crate) async fn new_tab(&self, config: &ChromeConfig) -> Result<Page, RenderError> {
        cdp(
            "Target.createTarget",
            config.call_timeout,
            self.browser
                .new_page(CreateTargetParams::new("about:blank")),
        )
        .await
    }

    /// Closes the browser, waits for the process, stops the event loop and removes the
    /// profile. Kills the process when it does not close in time.
    pub(crate) async fn shutdown(&mut self) {
        let limit = std::time::Duration::from_secs(5);
        let closed = matches!(self.browser.try_wait(), Ok(Some(_)))
            || tokio::time::timeout(limit, self.browser.close())
                .await
                .is_ok_and(|r| r.is_ok());
        if !closed
            || tokio::time::timeout(limit, self.browser.wait())
                .await
                .is_err()
        {
            self.kill_now();
            let _ = tokio::time::timeout(limit, self.browser.wait()).await;
        }
        self.handler.abort();
        if let Some(path) = self.profile.take().and_then(Profile::into_path) {
            tokio::task::spawn_blocking(move || dispose(&path))
                .await
                .ok();
        }
    }

    /// Sends SIGKILL to the browser without waiting (usable from `Drop`).
    fn kill_now(&mut self) {
        if let Some(child) = self.browser.get_mut_child() {
            let _ = child.inner.start_kill();
        }
    }
}

impl Drop for BrowserProc {
    fn drop(&mut self) {
        // After a clean shutdown the process is gone and this is a no-op.
        if matches!(self.browser.try_wait(), Ok(None)) {
            self.kill_now();
            // Reap it when it is already gone, so no zombie stays behind.
            let _ = self.browser.try_wait();
        }
        self.handler.abort();
        // The profile field's own drop removes the folder.
    }
}

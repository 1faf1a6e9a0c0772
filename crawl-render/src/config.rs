//! Renderer settings.

use std::path::PathBuf;
use std::time::Duration;

/// Settings of a [`ChromeRenderer`](crate::ChromeRenderer).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChromeConfig {
    /// The Chromium executable. When `None`: the `CHROME` environment variable, then
    /// `/usr/bin/chromium`, then `chromium`, `chromium-browser`, `google-chrome` on `PATH`.
    pub executable: Option<PathBuf>,
    /// Most pages rendered at once (one tab each). The engine sets it to the crawl's
    /// concurrency.
    pub max_tabs: usize,
    /// Refuse images, fonts and media: the DOM does not need them.
    pub block_media: bool,
    /// How long the network must stay quiet for [`WaitStrategy::NetworkIdle`](crawl_core::WaitStrategy).
    pub idle_window: Duration,
    /// Longest wait for Chromium to start.
    pub launch_timeout: Duration,
    /// Longest wait for one DevTools call outside a page's own deadline (open or close a tab).
    pub call_timeout: Duration,
    /// More command-line flags for Chromium.
    pub extra_args: Vec<String>,
    /// Where browser profile folders (`kb-crawl-chromium-{pid}-*`) are made; `None`: the
    /// system's temporary folder. Folders left there by a process that no longer runs are
    /// removed when a browser starts.
    pub profile_root: Option<PathBuf>,
}

impl Default for ChromeConfig {
    fn default() -> Self {
        ChromeConfig {
            executable: None,
            max_tabs: 4,
            block_media: true,
            idle_window: Duration::from_millis(500),
            launch_timeout: Duration::from_secs(20),
            call_timeout: Duration::from_secs(10),
            extra_args: Vec::new(),
            profile_root: None,
        }
    }
}

impl ChromeConfig {
    /// Uses this Chromium executable.
    pub fn with_executable(mut self, path: impl Into<PathBuf>) -> Self {
        self.executable = Some(path.into());
        self
    }

    /// Sets the number of tabs (at least 1).
    pub fn with_max_tabs(mut self, max_tabs: usize) -> Self {
        self.max_tabs = max_tabs.max(1);
        self
    }

    /// Whether images, fonts and media are refused.
    pub fn with_block_media(mut self, block: bool) -> Self {
        self.block_media = block;
        self
    }

    /// Sets the quiet period of the network-idle wait.
    pub fn with_idle_window(mut self, window: Duration) -> Self {
        self.idle_window = window;
        self
    }

    /// Makes browser profile folders under `root` instead of the temporary folder.
    pub fn with_profile_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.profile_root = Some(root.into());
        self
    }

    /// Adds command-line flags for Chromium (`--key` or `--key=value`), merged by key with
    /// the renderer's own.
    pub fn with_extra_args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.extra_args.extend(args.into_iter().map(Into::into));
        self
    }
}

//! The renderer's private failures and how they map into [`crawl_core::Error`].

use std::path::PathBuf;
use std::time::Duration;

use crawl_core::{Error, ErrorKind};

/// Backend name carried by every error this crate returns.
pub(crate) const BACKEND: &str = "ChromeRenderer";

/// What can go wrong inside the renderer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RenderError {
    /// No Chromium executable was found.
    #[error("no Chromium executable found (tried: {})", display_paths(.tried))]
    NoBrowser { tried: Vec<PathBuf> },
    /// The temporary profile directory could not be created.
    #[error("could not create a browser profile directory")]
    Profile(#[source] std::io::Error),
    /// The browser's gate proxy could not listen on 127.0.0.1.
    #[error("could not start the browser's gate proxy")]
    Proxy(#[source] std::io::Error),
    /// Chromium could not be started or attached to.
    #[error("could not launch Chromium at {}", .path.display())]
    Launch {
        path: PathBuf,
        #[source]
        source: chromiumoxide::error::CdpError,
    },
    /// A DevTools call failed.
    #[error("DevTools call '{what}' failed")]
    Cdp {
        what: &'static str,
        #[source]
        source: chromiumoxide::error::CdpError,
    },
    /// A DevTools call did not answer in time.
    #[error("DevTools call '{what}' did not answer within {after:?}")]
    CdpTimeout { what: &'static str, after: Duration },
    /// The page never settled before the deadline.
    #[error("page did not settle within {0:?}")]
    Deadline(Duration),
    /// Navigation was refused or failed in the browser.
    #[error("navigation failed: {0}")]
    Navigation(String),
    /// The network never went idle before the deadline.
    #[error("page did not settle within {after:?} (still loading: {})", .pending.join(", "))]
    Unsettled {
        after: Duration,
        pending: Vec<String>,
    },
    /// A script on the page failed (for example an invalid wait selector).
    #[error("page script failed: {0}")]
    Script(String),
    /// The page opened a WebSocket the gate refuses; its tab was closed.
    #[error("page opened a WebSocket to a refused URL ({0}); tab closed")]
    WebSocket(String),
    /// The browser process exited.
    #[error("the browser process exited")]
    BrowserGone,
    /// The renderer was shut down.
    #[error("the renderer was shut down")]
    ShutDown,
}

fn display_paths(paths: &[PathBuf]) -> String {
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl RenderError {
    /// The crawl-core kind of this failure.
    fn kind(&self) -> ErrorKind {
        match self {
            RenderError::NoBrowser { .. } | RenderError::ShutDown => ErrorKind::Unsupported,
            RenderError::Deadline(_) | RenderError::Unsettled { .. } => ErrorKind::RenderTimeout,
            RenderError::WebSocket(_) => ErrorKind::PolicyRefused,
            _ => ErrorKind::RenderFailed,
        }
    }

    /// Whether the same render may succeed later (a browser that died or stalled).
    fn temporary(&self) -> bool {
        matches!(
            self,
            RenderError::Cdp { .. } | RenderError::CdpTimeout { .. } | RenderError::BrowserGone
        )
    }

    /// Whether the failure may come from a dead browser (worth a relaunch and one retry).
    pub(crate) fn may_be_crash(&self) -> bool {
        matches!(
            self,
            RenderError::Cdp { .. }
                | RenderError::CdpTimeout { .. }
                | RenderError::BrowserGone
                | RenderError::Deadline(_)
                | RenderError::Unsettled { .. }
        )
    }

    /// Maps into the public error, attaching the URL when there is one.
    pub(crate) fn into_error(self, url: Option<&url::Url>) -> Error {
        let kind = self.kind();
        let temporary = self.temporary();
        let message = self.to_string();
        let mut e = Error::new(kind, message)
            .with_temporary(temporary)
            .with_backend(BACKEND);
        // The message already is this error's Display: attach only the underlying cause.
        match self {
            RenderError::Launch { source, .. } | RenderError::Cdp { source, .. } => {
                e = e.with_source(source);
            }
            RenderError::Profile(source) => e = e.with_source(source),
            _ => {}
        }
        if let Some(u) = url {
            e = e.with_url(u);
        }
        e
    }
}

impl From<RenderError> for Error {
    fn from(e: RenderError) -> Self {
        e.into_error(None)
    }
}

/// Runs one DevTools call under `limit`, naming it in the error.
pub(crate) async fn cdp<T>(
    what: &'static str,
    limit: Duration,
    fut: impl std::future::Future<Output = chromiumoxide::error::Result<T>>,
) -> Result<T, RenderError> {
    match tokio::time::timeout(limit, fut).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(source)) => Err(RenderError::Cdp { what, source }),
        Err(_) => Err(RenderError::CdpTimeout { what, after: limit }),
    }
}

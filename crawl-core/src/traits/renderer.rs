use std::fmt::{Debug, Display};
use std::sync::Arc;

use async_trait::async_trait;

use super::Capabilities;
use crate::error::Result;
use crate::page::{RenderRequest, RenderedPage};

/// Loads a page in a JavaScript-capable browser and returns the DOM after scripts ran.
///
/// # Contract
/// - Every request the page makes (navigation, frames, subresources, fetch/XHR, WebSockets)
///   is refused unless `req.gate` allows it; non-http(s) schemes are always refused.
/// - `render` returns within `req.deadline` (plus a small margin): a page that never settles
///   is an [`ErrorKind::RenderTimeout`](crate::ErrorKind::RenderTimeout) error.
/// - A crashed browser is replaced; the failing call may error with a temporary error.
/// - After [`shutdown`](Renderer::shutdown) returns, no browser process is left.
#[async_trait]
pub trait Renderer: Debug + Display + Send + Sync + 'static {
    /// Renders one page.
    async fn render(&self, req: &RenderRequest) -> Result<RenderedPage>;

    /// What this renderer can do.
    fn capabilities(&self) -> Capabilities {
        Capabilities::BROWSER
    }

    /// Stops every browser process. Idempotent.
    async fn shutdown(&self) {}
}

/// Shared renderer handle.
pub type DynRenderer = Arc<dyn Renderer>;

#[async_trait]
impl<T: Renderer + ?Sized> Renderer for Arc<T> {
    async fn render(&self, req: &RenderRequest) -> Result<RenderedPage> {
        (**self).render(req).await
    }
    fn capabilities(&self) -> Capabilities {
        (**self).capabilities()
    }
    async fn shutdown(&self) {
        (**self).shutdown().await
    }
}

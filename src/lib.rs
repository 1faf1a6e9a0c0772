//! kb-crawl facade.
pub use crawl_core::*;

/// The headless-Chromium renderer (crate `crawl-render`).
#[cfg(feature = "render-chrome")]
pub use crawl_render as render;

//! Headless-Chromium [`Renderer`](crawl_core::Renderer) for kb-crawl.
//!
//! [`ChromeRenderer`] drives the system's Chromium over the DevTools protocol
//! (chromiumoxide, no browser download): one browser, a bounded pool of tabs, a deadline on
//! every page and every DevTools call, and every request the page makes checked against the
//! crawl's [`RequestGate`](crawl_core::net::RequestGate).
//!
//! ```no_run
//! # async fn demo(gate: crawl_core::net::RequestGate) -> crawl_core::Result<()> {
//! use crawl_core::{RenderRequest, Renderer};
//! use crawl_render::{ChromeConfig, ChromeRenderer};
//!
//! let renderer = ChromeRenderer::new(ChromeConfig::default().with_max_tabs(4))?;
//! let url = url::Url::parse("https://example.com/").unwrap();
//! let page = renderer.render(&RenderRequest::new(url, gate)).await?;
//! println!("{} bytes of HTML", page.html.len());
//! renderer.shutdown().await;
//! # Ok(())
//! # }
//! ```

mod config;
mod error;
mod intercept;
mod launch;
mod profile;
mod proxy;
mod renderer;
mod tab;
mod wait;

pub use config::ChromeConfig;
pub use renderer::ChromeRenderer;

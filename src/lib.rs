#![doc = include_str!("../README.md")]

pub use crawl_core::*;

/// Embedded storage backends: filesystem sink, moka dedup store.
#[cfg(feature = "fs")]
pub use crawl_store as store;

/// The job API: an axum router for crawl jobs per assistant, runners and ingestors.
#[cfg(feature = "api")]
pub use crawl_api as api;

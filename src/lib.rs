#![doc = include_str!("../README.md")]

pub use crawl_core::*;

/// Embedded storage backends: filesystem sink, moka dedup store.
#[cfg(feature = "fs")]
pub use crawl_store as store;

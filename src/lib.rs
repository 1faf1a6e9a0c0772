//! kb-crawl facade.
pub use crawl_core::*;

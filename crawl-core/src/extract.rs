//! HTML to markdown extraction: the [`crawl_extract`] crate, re-exported so
//! `crawl_core::extract::{extract, decode_html, ExtractOptions, template::TemplateLearner}`
//! keep working.

pub use crawl_extract::*;

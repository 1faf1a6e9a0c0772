//! crawl-store.

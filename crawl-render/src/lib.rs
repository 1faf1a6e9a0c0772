//! crawl-render.

//! Core of kb-crawl: domain types, the backend traits, the crawl engine, politeness,
//! URL policy and HTML-to-markdown extraction.
pub mod extract;

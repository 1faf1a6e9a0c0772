#![doc = include_str!("../README.md")]

pub mod clock;
pub mod detect;
pub mod diff;
pub mod engine;
pub mod error;
pub mod extract;
pub mod http;
pub mod job;
pub mod keys;
pub mod linked;
pub mod memory;
pub mod net;
pub mod page;
pub mod politeness;
pub mod request;
pub mod sitemap;
pub mod source;
pub mod start;
mod traits;
pub mod url;

#[cfg(any(test, feature = "conformance"))]
pub mod conformance;

pub use diff::{DiffDocs, DiffPages, DiffSide};
pub use engine::{
    default_fetcher, default_fetcher_sharing, Crawler, CrawlerBuilder, JobHandle, TemplateOptions,
};
pub use error::{Error, ErrorKind, Result};
pub use job::{
    ChangeCounts, Ingestion, IngestionClaim, IngestionState, JobId, JobRecord, JobStatus,
    PageOutcome, Progress,
};
pub use page::{
    Document, DocumentMeta, FetchPath, FetchPurpose, FetchRequest, FetchResponse, RenderRequest,
    RenderedPage, StoredDoc, Validators, WaitStrategy,
};
pub use request::{
    CrawlRequest, CrawlRequestBuilder, Guardrails, RenderMode, SitemapMode, WwwPolicy,
    DEFAULT_MAX_LINKS_PER_PAGE,
};
pub use source::{
    ChangeLine, PageBatch, PageChange, PageState, RunDiff, Schedule, SourceId, SourceRecord,
    SyncTarget,
};
pub use start::{CrawlPolicy, StartCrawl};
pub use traits::*;

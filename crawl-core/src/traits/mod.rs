//! The backend traits. Every fetch, render, dedup check, frontier operation, write and job
//! update of the engine goes through one of these.

mod dedup;
mod fetcher;
mod frontier;
mod ingest;
mod jobs;
mod ledger;
mod renderer;
mod sink;
mod source;

pub use dedup::{DedupStore, DedupStoreExt, DynDedupStore};
pub use fetcher::{DynFetcher, Fetcher};
pub use frontier::{DynFrontier, Frontier, FrontierEntry};
pub use ingest::{DynIngestor, Ingestor, NoopIngestor};
pub use jobs::{DynJobStore, JobStore};
pub use ledger::{
    over_budget_counts, Admit, Candidate, ComposedLedger, CrawlLedger, DynLedger, ExcludedCounts,
};
pub use renderer::{DynRenderer, Renderer};
pub use sink::{
    for_each_doc_page, AuxWriter, DocPage, DynAuxWriter, DynSink, RangeLines, Sink, LIST_PAGE,
};
pub use source::{DynSourceStore, SourceStore};

/// What a backend can do; the engine refuses combinations that cannot be correct (for
/// example a process-local dedup store in a distributed run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Capabilities {
    /// Survives a process restart.
    pub durable: bool,
    /// Shared by several processes or machines.
    pub shared: bool,
    /// Runs JavaScript (renderers).
    pub javascript: bool,
}

impl Capabilities {
    /// Process-local, volatile.
    pub const LOCAL: Capabilities = Capabilities {
        durable: false,
        shared: false,
        javascript: false,
    };
    /// Durable on one machine.
    pub const DURABLE: Capabilities = Capabilities {
        durable: true,
        shared: false,
        javascript: false,
    };
    /// Durable and shared across processes (S3, DynamoDB).
    pub const SHARED: Capabilities = Capabilities {
        durable: true,
        shared: true,
        javascript: false,
    };
    /// A JavaScript-capable renderer.
    pub const BROWSER: Capabilities = Capabilities {
        durable: false,
        shared: false,
        javascript: true,
    };
}

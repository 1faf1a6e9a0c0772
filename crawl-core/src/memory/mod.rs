//! In-memory backends: always compiled, process-local, volatile. Used by docs, tests and
//! embedded crawls that need no persistence.

mod dedup;
mod frontier;
mod jobs;
mod sink;
mod source;

pub use dedup::{MemoryDedup, DEFAULT_DEDUP_TTL};
pub use frontier::MemoryFrontier;
pub use jobs::MemoryJobStore;
pub use sink::MemorySink;
pub use source::MemorySourceStore;

//! Knowledge-base hand-off: [`Ingestor`](crawl_core::Ingestor) implementations.
//!
//! - [`WebhookIngestor`] POSTs a signed manifest of the job's documents to the host.
//! - [`ChunkIngestor`] writes heading-aware RAG chunks beside the documents.
//! - [`MultiIngestor`] does several.

mod chunk;
mod multi;
pub mod split;
mod webhook;

pub use chunk::{
    chunk_document, chunk_id, Chunk, ChunkIngestor, CHUNKS_FILE, DEFAULT_MAX_CHUNK_CHARS,
};
pub use multi::MultiIngestor;
pub use webhook::{
    sign, verify, Manifest, ManifestDoc, WebhookIngestor, DELIVERY_HEADER, REPLAY_WINDOW,
    SIGNATURE_HEADER, TIMESTAMP_HEADER,
};

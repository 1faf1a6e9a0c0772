//! URL policy: normalization (one key per page), the crawl's scope, crawler-trap detection.

mod normalize;
mod scope;

pub use normalize::{dedup_key, normalize, resolve_link, trap_reason, trap_reason_at};
pub use scope::Scope;

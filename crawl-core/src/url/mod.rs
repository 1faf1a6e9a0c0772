//! URL policy: normalization (one key per page), the crawl's scope, include/exclude
//! patterns, crawler-trap detection.

mod normalize;
mod patterns;
mod scope;

pub use normalize::{dedup_key, normalize, resolve_link, trap_reason, trap_reason_at};
pub use patterns::{UrlPatterns, MAX_PATTERNS, MAX_PATTERN_LEN};
pub use scope::Scope;

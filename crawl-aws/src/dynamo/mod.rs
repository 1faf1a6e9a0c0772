//! DynamoDB backends: [`DynamoDedup`], [`DynamoJobStore`], [`DynamoSourceStore`] and the
//! shared per-host rate limit [`DynamoHostLimiter`], and what they share.

mod builder;
mod dedup;
mod jobs;
#[cfg(feature = "aws-lambda")]
mod ledger;
mod limiter;
mod source;
mod table;
#[cfg(test)]
pub(crate) mod test_moto;

pub use builder::DynamoBuilder;
pub use dedup::DynamoDedup;
pub use jobs::{DynamoJobStore, ASSISTANT_INDEX};
#[cfg(feature = "aws-lambda")]
pub(crate) use ledger::LevelLedger;
pub use limiter::DynamoHostLimiter;
pub use source::{DynamoSourceStore, TENANT_INDEX};

//! DynamoDB backends: [`DynamoDedup`], [`DynamoJobStore`] and the shared per-host rate
//! limit [`DynamoHostLimiter`], and what they share.

mod builder;
mod dedup;
mod jobs;
mod limiter;
mod table;

pub use builder::DynamoBuilder;
pub use dedup::DynamoDedup;
pub use jobs::{DynamoJobStore, ASSISTANT_INDEX};
pub use limiter::DynamoHostLimiter;

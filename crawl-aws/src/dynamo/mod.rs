//! DynamoDB backends: [`DynamoDedup`] and [`DynamoJobStore`], and what they share.

mod builder;
mod dedup;
mod jobs;
mod table;

pub use builder::DynamoBuilder;
pub use dedup::DynamoDedup;
pub use jobs::{DynamoJobStore, ASSISTANT_INDEX};

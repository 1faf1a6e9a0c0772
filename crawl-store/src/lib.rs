#![doc = include_str!("../README.md")]

mod fs;
mod moka_dedup;
mod redb_store;

pub use fs::FsSink;
pub use moka_dedup::MokaDedup;
pub use redb_store::RedbStore;

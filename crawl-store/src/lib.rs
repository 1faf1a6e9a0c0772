#![doc = include_str!("../README.md")]

mod fs;
mod moka_dedup;

pub use fs::FsSink;
pub use moka_dedup::MokaDedup;

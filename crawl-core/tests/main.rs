//! crawl-core's integration tests, one test binary: each file of `tests/` is a module here
//! (one link of the dependencies instead of one a file). A test is named `file::test_name`:
//! `cargo test -p crawl-core --test it -- robots::`. `proxy_env.rs` sets process-wide
//! environment variables and stays its own binary (`--test proxy_env`).

#![allow(unreachable_pub)]

mod common;

mod admission;
mod http_fetcher;
mod linked;
mod patterns;
mod rate_retry;
mod robots;
mod sitemap;
mod sync;

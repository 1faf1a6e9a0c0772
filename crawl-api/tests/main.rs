//! crawl-api's integration tests, one test binary: each file of `tests/` is a module here
//! (one link of the dependencies instead of one a file). A test is named `file::test_name`:
//! `cargo test -p crawl-api --all-features --test it -- security::`.

#![allow(unreachable_pub)]

mod support;

mod api;
mod browser;
mod handoff_resume;
#[cfg(feature = "jwt")]
mod jwt;
mod limits;
mod openapi;
mod restart;
mod security;
mod sources;
mod webhook;

//! The facade's integration tests, one test binary: each file of `tests/` is a module here,
//! behind the features it needs (one link of the dependencies instead of one a file). A test
//! is named `file::test_name`: `cargo test --all-features --test it -- hostile::`.

#![allow(unreachable_pub)]

#[cfg(all(feature = "fs", any(feature = "aws", feature = "aws-kb")))]
#[path = "../crawl-aws/tests/common/mod.rs"]
mod common;
mod support;

#[cfg(all(feature = "aws", feature = "fs"))]
mod aws_e2e;
mod catalogue;
#[cfg(feature = "fs")]
mod crawl;
mod fanout;
#[cfg(feature = "fs")]
mod hostile;
#[cfg(all(feature = "aws-kb", feature = "fs"))]
mod kb_cli;
#[cfg(feature = "render-chrome")]
mod render_crawl;
#[cfg(feature = "fs")]
mod resume;
#[cfg(all(feature = "api", feature = "fs"))]
mod serve;
mod template;

//! crawl-aws.

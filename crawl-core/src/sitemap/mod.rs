//! Sitemaps (sitemaps.org 0.9): more URLs for link discovery, never instead of it.
//!
//! [`read_sitemaps`] finds the site's sitemaps (the `Sitemap:` lines of robots.txt, else
//! `/sitemap.xml`), follows sitemap index files, reads gzip files (recognised by their
//! magic bytes, whatever the content type; `Content-Encoding: gzip` is undone by the HTTP
//! client), and hands the page URLs it finds, in batches, to a [`SitemapTarget`] (the
//! engine's admission: scope, patterns, robots.txt, dedup and the page budget).
//!
//! Every fetch goes through the crawl's [`Fetcher`](crate::Fetcher), so the network policy,
//! the rate limit, retries and robots.txt apply to sitemap files as to pages.
//!
//! # Bounds
//! - a file: 50,000 URLs and 50 MB uncompressed ([`MAX_URLS_PER_FILE`], [`MAX_FILE_BYTES`]);
//!   the rest is counted (`sitemap_url_cap`, `sitemap_too_large`), what was read is used;
//! - index nesting [`MAX_INDEX_DEPTH`] levels, [`MAX_FILES`] files per crawl, each file read
//!   once (`sitemap_depth_cap`, `sitemap_file_cap`, `sitemap_loop`);
//! - memory: files are parsed as a stream, URLs go to the target in batches of
//!   [`BATCH`]; once the target says the page budget is spent no more URLs are taken (the
//!   rest of the file is counted `sitemap_over_budget`) and no more files are fetched.
//!
//! A problem with a sitemap never fails the crawl: it is counted under a reason and the
//! crawl goes on with the links.

mod parse;

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::io::{BufRead, BufReader, Read};

use async_trait::async_trait;
use time::OffsetDateTime;
use url::Url;

use crate::engine::PageContext;
use crate::error::Result;
use crate::page::FetchRequest;
use crate::url::{normalize, Scope};

pub use parse::parse_lastmod;

/// The depth sitemap URLs are admitted at: as if the root linked to them (embedded and
/// serverless alike; none are read when the crawl's depth is 0).
pub const SITEMAP_DEPTH: u32 = 1;
/// Most URLs read from one sitemap file (the protocol's cap).
pub const MAX_URLS_PER_FILE: u64 = 50_000;
/// Most bytes read from one sitemap file, uncompressed (the protocol's cap, 50 MB).
pub const MAX_FILE_BYTES: usize = 50 * 1024 * 1024;
/// Deepest level read: a file named by robots.txt (or `/sitemap.xml`) is level 0, a file
/// its index names is level 1, and so on.
pub const MAX_INDEX_DEPTH: u32 = 2;
/// Most sitemap files fetched per crawl.
pub const MAX_FILES: usize = 50;
/// URLs handed to the target at once.
pub const BATCH: usize = 64;
/// Redirect hops followed for one sitemap file.
const MAX_REDIRECTS: usize = 5;

/// A page URL from a sitemap, with its `<lastmod>` when it had a valid one.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SitemapUrl {
    /// The URL, normalized and in the crawl's scope.
    pub url: Url,
    /// When the site says the page last changed.
    pub lastmod: Option<OffsetDateTime>,
}

/// Where sitemap URLs go (the engine's admission).
#[async_trait]
pub trait SitemapTarget: Send {
    /// Takes a batch of in-scope URLs; returns `false` once the page budget is spent (no
    /// more URLs are then offered). Errors only when a backend failed.
    async fn take(&mut self, urls: Vec<SitemapUrl>) -> Result<bool>;
}

/// What reading the sitemaps gave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SitemapReport {
    /// Sitemap files fetched and parsed.
    pub files_read: u64,
    /// Page URLs handed to the target.
    pub urls_offered: u64,
    /// Counts by reason (`sitemap_off_site`, `sitemap_malformed`...); the engine adds them
    /// to the job's `excluded` counters.
    pub counts: BTreeMap<String, u64>,
}

impl SitemapReport {
    fn count(&mut self, reason: &str, n: u64) {
        if n > 0 {
            *self.counts.entry(reason.to_owned()).or_default() += n;
        }
    }
}

/// Reads the sitemaps of the crawl's site and hands their in-scope URLs to `target`. See
/// the [module docs](self). Errors only when the target fails.
pub async fn read_sitemaps(
    ctx: &PageContext,
    target: &mut dyn SitemapTarget,
) -> Result<SitemapReport> {
    let mut report = SitemapReport::default();
    let root = &ctx.request.url;
    // Sitemap files live anywhere on the root's site, also outside a path prefix.
    let site = Scope::new(root, ctx.request.www, None);
    let named = robots_sitemaps(ctx, root).await;
    let implicit = named.is_empty();
    let mut queue: VecDeque<(Url, u32)> = VecDeque::new();
    let mut seen: HashSet<String> = HashSet::new();
    let tops = if implicit {
        root.join("/sitemap.xml").ok().into_iter().collect()
    } else {
        named
    };
    for u in tops {
        enqueue(&mut queue, &mut seen, &mut report, &site, u, 0);
    }

    let mut budget_left = true;
    let mut fetched = 0usize;
    while let Some((url, level)) = queue.pop_front() {
        if !budget_left {
            break;
        }
        fetched += 1;
        let Some(body) = fetch_file(ctx, &site, &url, implicit && level == 0, &mut report).await
        else {
            continue;
        };
        report.files_read += 1;
        let (input, gz) = open(&body.bytes);
        let mut parser = parse::Parser::new(input);
        let mut batch = Vec::new();
        let mut taken = 0u64;
        let mut malformed = None;
        loop {
            let entry = match parser.next_entry() {
                Ok(Some(e)) => e,
                Ok(None) => break,
                Err(why) => {
                    malformed = Some(why);
                    break;
                }
            };
            taken += 1;
            if taken > MAX_URLS_PER_FILE {
                report.count("sitemap_url_cap", 1);
                continue;
            }
            let Some(loc) = entry.loc.as_deref() else {
                report.count("sitemap_bad_url", 1);
                continue;
            };
            let Some(u) = Url::parse(loc).ok().as_ref().and_then(normalize) else {
                report.count("sitemap_bad_url", 1);
                continue;
            };
            match parser.kind() {
                Some(parse::Kind::Index) => {
                    if level >= MAX_INDEX_DEPTH {
                        report.count("sitemap_depth_cap", 1);
                    } else if fetched + queue.len() >= MAX_FILES {
                        report.count("sitemap_file_cap", 1);
                    } else {
                        enqueue(&mut queue, &mut seen, &mut report, &site, u, level + 1);
                    }
                }
                _ if !budget_left => report.count("sitemap_over_budget", 1),
                _ => {
                    if !ctx.gate.scope().contains(&u) {
                        report.count("sitemap_off_site", 1);
                        continue;
                    }
                    batch.push(SitemapUrl {
                        url: u,
                        lastmod: entry.lastmod,
                    });
                    if batch.len() >= BATCH {
                        report.urls_offered += batch.len() as u64;
                        budget_left = target.take(std::mem::take(&mut batch)).await?;
                    }
                }
            }
        }
        if !batch.is_empty() && budget_left {
            report.urls_offered += batch.len() as u64;
            budget_left = target.take(batch).await?;
        }
        let too_large = if gz {
            parser.position() >= MAX_FILE_BYTES as u64
        } else {
            body.truncated
        };
        if too_large {
            tracing::info!(sitemap = %url, "sitemap over 50 MB uncompressed; the rest is ignored");
            report.count("sitemap_too_large", 1);
        } else if implicit && level == 0 && parser.kind().is_none() {
            // `/sitemap.xml` was only a guess: a site that answers it with a page (a soft
            // 404) has no sitemap, nothing is wrong.
            tracing::debug!(sitemap = %url, "no sitemap at the default location");
        } else if let Some(why) = malformed {
            tracing::info!(sitemap = %url, %why, "malformed sitemap");
            report.count("sitemap_malformed", 1);
        }
    }
    if !budget_left && !queue.is_empty() {
        tracing::debug!(
            files = queue.len(),
            "page budget spent: sitemap files left unread"
        );
    }
    Ok(report)
}

fn enqueue(
    queue: &mut VecDeque<(Url, u32)>,
    seen: &mut HashSet<String>,
    report: &mut SitemapReport,
    site: &Scope,
    url: Url,
    level: u32,
) {
    if !site.contains(&url) {
        report.count("sitemap_off_site", 1);
    } else if !seen.insert(url.as_str().to_owned()) {
        report.count("sitemap_loop", 1);
    } else {
        queue.push_back((url, level));
    }
}

struct Body {
    bytes: Vec<u8>,
    truncated: bool,
}

/// Fetches one sitemap file, following redirects on the site. `None` (counted) when it
/// cannot be had; a missing `/sitemap.xml` that nothing named is not counted.
async fn fetch_file(
    ctx: &PageContext,
    site: &Scope,
    start: &Url,
    implicit: bool,
    report: &mut SitemapReport,
) -> Option<Body> {
    let mut url = start.clone();
    for _ in 0..=MAX_REDIRECTS {
        let req = FetchRequest::sitemap(url.clone()).with_job(&ctx.job);
        let resp = match ctx.fetcher.fetch(&req).await {
            Ok(r) => r,
            Err(e) => {
                tracing::info!(sitemap = %url, error = %e, "sitemap unavailable");
                report.count("sitemap_unavailable", 1);
                return None;
            }
        };
        if let Some(next) = resp.redirect_target() {
            match normalize(&next) {
                Some(n) if site.contains(&n) => {
                    url = n;
                    continue;
                }
                _ => {
                    report.count("sitemap_off_site", 1);
                    return None;
                }
            }
        }
        if !(200..300).contains(&resp.status) {
            if !(implicit && matches!(resp.status, 404 | 410)) {
                tracing::info!(sitemap = %url, status = resp.status, "sitemap unavailable");
                report.count("sitemap_unavailable", 1);
            }
            return None;
        }
        return Some(Body {
            bytes: resp.body,
            truncated: resp.truncated,
        });
    }
    report.count("sitemap_unavailable", 1);
    None
}

/// The file's XML as a stream: gunzipped (at most [`MAX_FILE_BYTES`]) when the body starts
/// with the gzip magic bytes. The flag says whether it was gzip.
fn open(body: &[u8]) -> (Box<dyn BufRead + Send + '_>, bool) {
    if body.starts_with(&[0x1f, 0x8b]) {
        let gz = flate2::read::GzDecoder::new(body).take(MAX_FILE_BYTES as u64);
        (Box::new(BufReader::new(gz)), true)
    } else {
        (Box::new(body), false)
    }
}

/// The `Sitemap:` URLs of the root's robots.txt (fetched through the crawl's fetcher, as the
/// robots layer does, following up to five redirects). Empty when there is none or it
/// cannot be read.
async fn robots_sitemaps(ctx: &PageContext, root: &Url) -> Vec<Url> {
    let Ok(mut target) = root.join("/robots.txt") else {
        return Vec::new();
    };
    for _ in 0..=MAX_REDIRECTS {
        let req = FetchRequest::robots(target.clone()).with_job(&ctx.job);
        let Ok(resp) = ctx.fetcher.fetch(&req).await else {
            return Vec::new();
        };
        if let Some(next) = resp.redirect_target() {
            target = next;
            continue;
        }
        if !(200..300).contains(&resp.status) {
            return Vec::new();
        }
        return sitemap_lines(&resp.body, &target);
    }
    Vec::new()
}

/// The `Sitemap:` lines of a robots.txt body, resolved against its URL (at most
/// [`MAX_FILES`], first ones first, duplicates dropped).
pub fn sitemap_lines(body: &[u8], base: &Url) -> Vec<Url> {
    let body = &body[..body.len().min(crate::politeness::PARSE_LIMIT)];
    let text = String::from_utf8_lossy(body);
    let mut out: Vec<Url> = Vec::new();
    for line in text.split(['\n', '\r']) {
        let line = line.split('#').next().unwrap_or("");
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if !key.trim().eq_ignore_ascii_case("sitemap") || value.is_empty() {
            continue;
        }
        let Some(u) = base.join(value).ok().as_ref().and_then(normalize) else {
            continue;
        };
        if !out.contains(&u) {
            out.push(u);
        }
        if out.len() == MAX_FILES {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robots_sitemap_lines() {
        let base = Url::parse("https://example.com/robots.txt").unwrap();
        let body = b"User-agent: *\nDisallow: /x\nSitemap: https://example.com/s.xml\n\
                     sitemap: /rel.xml # comment\nSITEMAP:https://example.com/s.xml\nSitemap:\n";
        let got: Vec<String> = sitemap_lines(body, &base)
            .into_iter()
            .map(String::from)
            .collect();
        assert_eq!(
            got,
            vec!["https://example.com/s.xml", "https://example.com/rel.xml"]
        );
    }

    #[test]
    fn gzip_is_recognised_by_its_magic_bytes() {
        use std::io::Write;
        let xml = b"<urlset><url><loc>https://e.com/a</loc></url></urlset>";
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(xml).unwrap();
        let gz = enc.finish().unwrap();
        for (body, want_gz) in [(&gz[..], true), (&xml[..], false)] {
            let (input, is_gz) = open(body);
            assert_eq!(is_gz, want_gz);
            let mut p = parse::Parser::new(input);
            let e = p.next_entry().unwrap().unwrap();
            assert_eq!(e.loc.as_deref(), Some("https://e.com/a"));
        }
    }
}

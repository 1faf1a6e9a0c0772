//! spider-md: peer baseline for kb-crawl's benchmark.
//!
//! Crawls one start URL with spider-rs (HTTP only, no chrome), converts every page to markdown
//! with spider_transformations (`transform_content`, `ReturnFormat::Markdown`), writes one `.md`
//! file per page under `--out`, and prints `{"pages": N, ...}` on stdout.
//!
//! Usage: spider-md URL --out DIR --max-pages N [--concurrency N] [--depth N]
//! Politeness delay 0, robots.txt respected.

use spider::page::Page;
use spider::website::Website;
use spider_transformations::transformation::content::{ReturnFormat, TransformConfig};
use std::path::{Path, PathBuf};
use std::process::exit;
use tokio::sync::{broadcast::error::RecvError, mpsc};

struct Args {
    url: String,
    out: PathBuf,
    max_pages: u32,
    concurrency: Option<usize>,
    depth: usize,
}

fn usage() -> ! {
    eprintln!("usage: spider-md URL --out DIR --max-pages N [--concurrency N] [--depth N]");
    exit(2)
}

fn parse_args() -> Args {
    let mut it = std::env::args().skip(1);
    let (mut url, mut out, mut max_pages, mut concurrency, mut depth) = (None, None, None, None, 30);
    while let Some(a) = it.next() {
        let mut val = || it.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--out" => out = Some(PathBuf::from(val())),
            "--max-pages" => max_pages = Some(val().parse().unwrap_or_else(|_| usage())),
            "--concurrency" => concurrency = Some(val().parse().unwrap_or_else(|_| usage())),
            "--depth" => depth = val().parse().unwrap_or_else(|_| usage()),
            "-h" | "--help" => usage(),
            s if s.starts_with("--") => usage(),
            _ if url.is_none() => url = Some(a),
            _ => usage(),
        }
    }
    Args {
        url: url.unwrap_or_else(|| usage()),
        out: out.unwrap_or_else(|| usage()),
        max_pages: max_pages.unwrap_or_else(|| usage()),
        concurrency,
        depth,
    }
}

/// Map a page URL to a relative `.md` path: `/a/b.html` -> `a/b.md`, `/a/` -> `a/index.md`,
/// a query string becomes a `_q<hash>` suffix.
fn md_path(url: &str) -> PathBuf {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path_q = rest.find('/').map_or("", |i| &rest[i + 1..]);
    let path_q = path_q.split('#').next().unwrap_or("");
    let (path, query) = match path_q.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (path_q, None),
    };
    let mut rel = PathBuf::new();
    for seg in path.split('/').filter(|s| !s.is_empty() && *s != "." && *s != "..") {
        rel.push(seg);
    }
    if path.is_empty() || path.ends_with('/') {
        rel.push("index");
    }
    let stem = rel.with_extension("");
    let mut name = stem.into_os_string();
    if let Some(q) = query {
        let h = q.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3));
        name.push(format!("_q{h:016x}"));
    }
    name.push(".md");
    PathBuf::from(name)
}

fn write_page(out: &Path, page: &Page, conf: &TransformConfig) -> std::io::Result<()> {
    let md = spider_transformations::transform_content(page, conf, &None, &None, &None);
    let path = out.join(md_path(page.get_url()));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, md)
}

#[tokio::main]
async fn main() {
    let args = parse_args();
    std::fs::create_dir_all(&args.out).unwrap_or_else(|e| {
        eprintln!("spider-md: cannot create {}: {e}", args.out.display());
        exit(1)
    });

    let mut website = Website::new(&args.url);
    website
        .with_respect_robots_txt(true)
        .with_delay(0)
        .with_depth(args.depth)
        .with_limit(args.max_pages)
        .with_subdomains(false)
        .with_tld(false)
        .with_concurrency_limit(args.concurrency);

    // The broadcast ring keeps up to `capacity` pages alive (the Website holds a never-read
    // receiver), so keep it small and drain it at once into an mpsc queue that the markdown
    // writer consumes; a lagged receiver would lose pages, which we count and report.
    let mut rx = website.subscribe(256);
    let (tx, mut work) = mpsc::unbounded_channel::<Page>();
    let forward = tokio::spawn(async move {
        let mut lagged = 0u64;
        loop {
            match rx.recv().await {
                Ok(page) => {
                    if tx.send(page).is_err() {
                        break;
                    }
                }
                Err(RecvError::Lagged(n)) => lagged += n,
                Err(RecvError::Closed) => break,
            }
        }
        lagged
    });
    let out = args.out.clone();
    let writer = tokio::task::spawn_blocking(move || {
        let conf = TransformConfig { return_format: ReturnFormat::Markdown, ..Default::default() };
        let (mut pages, mut skipped, mut errors) = (0u64, 0u64, 0u64);
        while let Some(page) = work.blocking_recv() {
            if !page.status_code.is_success() {
                skipped += 1;
                continue;
            }
            match write_page(&out, &page, &conf) {
                Ok(()) => pages += 1,
                Err(e) => {
                    errors += 1;
                    eprintln!("spider-md: {}: {e}", page.get_url());
                }
            }
        }
        (pages, skipped, errors)
    });

    website.crawl().await;
    website.unsubscribe();
    drop(website);

    let lagged = forward.await.unwrap_or(0);
    let (pages, skipped, errors) = writer.await.unwrap_or((0, 0, 0));
    if lagged > 0 {
        eprintln!("spider-md: warning: subscriber lagged, {lagged} pages not written");
    }
    println!(r#"{{"pages": {pages}, "skipped_non_2xx": {skipped}, "write_errors": {errors}, "lagged": {lagged}}}"#);
}

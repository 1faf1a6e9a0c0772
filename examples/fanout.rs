//! Link fan-out benchmark (issue 18, item 5): a site whose every page carries `--links`
//! links to pages no other page links to, crawled with a small page cap into a durable
//! state file. Prints the state file's size and the crawler's peak memory.
//!
//! `cargo run --release --example fanout -- [--links 300000] [--max-pages 12]`
//!
//! The site is served on 127.0.0.1 by a child process (this program run with `--serve`),
//! so the peak memory printed (`VmHWM` of this process) is the crawler's alone.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::Router;
use clap::Parser;
use kb_crawl::store::{FsSink, RedbStore};
use kb_crawl::{CrawlRequest, Crawler, Guardrails};

#[derive(Debug, Parser)]
struct Args {
    /// Links on every page, each to a page of its own.
    #[arg(long, default_value_t = 300_000)]
    links: usize,
    /// The crawl's page cap.
    #[arg(long, default_value_t = 12)]
    max_pages: u32,
    /// Link hops from the root.
    #[arg(long, default_value_t = 2)]
    depth: u32,
    /// Pages in flight at once.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Serve the site on 127.0.0.1 and print its address (the child process).
    #[arg(long, hide = true)]
    serve: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(4)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let r = if args.serve {
        rt.block_on(serve(args.links))
    } else {
        rt.block_on(bench(&args))
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Every page `/a/b/` links to `/a/b/0/` .. `/a/b/{links-1}/`: no two pages share a link.
async fn page(State(links): State<usize>, req: Request) -> impl IntoResponse {
    let mut html = String::with_capacity(links * 22 + 300);
    html.push_str(
        "<!doctype html><html lang=en><head><title>Fan-out</title></head><body><main>\
         <h1>Fan-out</h1><p>A page with very many links, each to a page that no other page \
         links to; enough words here to count as content.</p>",
    );
    for i in 0..links {
        html.push_str("<a href=");
        html.push_str(&i.to_string());
        html.push_str("/>x</a>");
    }
    html.push_str("</main></body></html>");
    let _ = req;
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html)
}

async fn serve(links: usize) -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("{}", listener.local_addr()?);
    let app = Router::new().fallback(page).with_state(links);
    axum::serve(listener, app).await?;
    Ok(())
}

async fn bench(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let mut child = Command::new(std::env::current_exe()?)
        .args(["--serve", "--links", &args.links.to_string()])
        .stdout(Stdio::piped())
        .spawn()?;
    let mut addr = String::new();
    if let Some(out) = child.stdout.take() {
        BufReader::new(out).read_line(&mut addr)?;
    }
    let result = crawl(args, addr.trim()).await;
    let _ = child.kill();
    let _ = child.wait();
    result
}

async fn crawl(args: &Args, addr: &str) -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let state_path = dir.path().join("state.redb");
    let sink = Arc::new(FsSink::new(dir.path().join("kb"))?);
    let state = Arc::new(RedbStore::open(&state_path)?);
    let crawler = Crawler::builder().sink(sink).state(state).build()?;
    let req = CrawlRequest::builder(format!("http://{addr}/"))
        .max_depth(args.depth)
        .max_pages(args.max_pages)
        .concurrency(args.concurrency)
        .rate(None)
        .allow_private_network(true)
        .detect_soft_404(false)
        .guardrails(Guardrails::lifted())
        .build()?;
    let started = std::time::Instant::now();
    let rec = crawler.run(req).await?;
    let wall = started.elapsed();
    drop(crawler);
    let p = &rec.progress;
    println!(
        "links/page {}  max_pages {}  status {}  pages {}/{}  stored {}  wall {:.1} s",
        args.links,
        args.max_pages,
        rec.status,
        p.pages_processed,
        p.pages_total,
        p.stored,
        wall.as_secs_f64()
    );
    println!("excluded {:?}", p.excluded);
    println!(
        "state file {:.1} MiB",
        file_size(&state_path) as f64 / (1 << 20) as f64
    );
    println!(
        "peak memory (VmHWM) {:.1} MiB",
        peak_rss_kib() as f64 / 1024.0
    );
    Ok(())
}

fn file_size(p: &Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// This process's peak resident set, KiB (Linux; 0 elsewhere).
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

//! Memory of a whole crawl (issue 17 item 3): crawls a generated site of 1,000 / 5,000 /
//! 10,000 pages on 127.0.0.1 into the filesystem sink (durable redb state), handing the
//! job to a loopback webhook, and prints the peak of live heap bytes above what was live
//! before the crawl, counted by a global allocator. Then it measures the hand-off alone
//! (the job's diff read from the sink and given to an ingestor: the webhook and the
//! ChunkIngestor), and, for comparison, the same hand-off from a diff listed whole
//! (`Sink::list`, the old way).
//!
//! `cargo run --example crawl_memory --features api,fs [-- 1000 5000 10000]`
//!
//! The site and the webhook's receiver are served by a child process (this program run
//! with `--serve`), so the heap counted is the crawler's alone.
//!
//! Measured (debug build, 1,000 / 5,000 / 10,000 pages): whole crawl +1.10 / +1.22 /
//! +1.57 MiB, without a hand-off +0.88 / +0.96 / +1.45 MiB (before the filesystem sink's
//! index went to disk and redb's cache from 2 MiB to 256 KiB: +1.25 / +2.49 / +3.90 MiB
//! and +1.09 / +2.24 / +3.86 MiB); the hand-off alone: webhook +0.68 / +0.78 / +0.79 MiB
//! (the diff listed whole first: +0.98 / +2.58 / +4.65 MiB), `ChunkIngestor` +0.51 /
//! +0.58 / +0.65 MiB (streamed with `Sink::aux_writer`; built in memory before: +1.03 /
//! +6.26 / +12.22 MiB); a run of a source's hand-off +0.71 / +0.80 / +0.82 MiB (its
//! `changes.jsonl` read whole first: +0.90 / +1.95 / +3.94 MiB); a source's first run,
//! crawl to hand-off, +1.17 / +1.32 / +1.54 MiB (its `changes.jsonl` built as one buffer at
//! finalise, before it was streamed with `Sink::aux_writer`: +1.18 / +2.66 / +5.05 MiB).
//! Last, a run of a source's hand-off: a `changes.jsonl` adding every stored page, read
//! from the sink in windows, and (the old way) read whole first.

use std::io::{BufRead, BufReader};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use kb_crawl::api::ingest::{ChunkIngestor, WebhookIngestor};
use kb_crawl::store::{FsSink, RedbStore};
use kb_crawl::{
    CrawlRequest, Crawler, DynSink, Guardrails, Ingestor, JobStatus, RunDiff, Sink, SitemapMode,
};
use peak_alloc::PeakAlloc;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

/// Section pages under the root; each links to its share of the pages.
const SECTIONS: usize = 50;

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Peak live heap above the live heap at the start, while `f` runs.
async fn peak_of<T>(f: impl std::future::Future<Output = T>) -> (T, usize) {
    let base = HEAP.current_usage();
    HEAP.reset_peak_usage();
    let out = f.await;
    (out, HEAP.peak_usage().saturating_sub(base))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let r = if args.first().map(String::as_str) == Some("--serve") {
        rt.block_on(serve())
    } else {
        let sizes: Result<Vec<usize>, _> = args.iter().map(|a| a.parse::<usize>()).collect();
        match sizes {
            Ok(s) if s.iter().all(|n| *n > SECTIONS + 1) => {
                let s = if s.is_empty() {
                    vec![1_000, 5_000, 10_000]
                } else {
                    s
                };
                rt.block_on(bench(&s))
            }
            _ => Err(format!("pages: each size must be a number above {}", SECTIONS + 1).into()),
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

const NAV: &str =
    "<nav><a href=/>Home</a> <a href=/about>About</a> <a href=/contact>Contact</a></nav>";
const FOOTER: &str = "<footer>© Example University · 1910 University Dr · Privacy</footer>";

fn html(title: &str, body: &str) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        format!(
            "<!doctype html><html lang=en><head><title>{title}</title></head><body>{NAV}\
             <main><h1>{title}</h1>{body}</main>{FOOTER}</body></html>"
        ),
    )
}

/// `/{pages}/` links to its sections, `/{pages}/s{i}/` to its pages `/{pages}/s{i}/p{j}`:
/// `pages` pages in all (the crawl is capped there).
async fn section(Path((pages, s)): Path<(usize, String)>) -> impl IntoResponse {
    let per = (pages - 1 - SECTIONS).div_ceil(SECTIONS);
    let i = s.trim_start_matches('s');
    let mut links = String::new();
    for j in 0..per {
        links.push_str(&format!("<li><a href=/{pages}/s{i}/p{j}>Page {j}</a></li>"));
    }
    html(
        &format!("Section {i}"),
        &format!("<p>The pages of section {i} of the site.</p><ul>{links}</ul>"),
    )
}

async fn root(Path(pages): Path<usize>) -> impl IntoResponse {
    let mut links = String::new();
    for i in 0..SECTIONS {
        links.push_str(&format!("<li><a href=/{pages}/s{i}/>Section {i}</a></li>"));
    }
    html(
        "Home",
        &format!("<p>Every section of the site.</p><ul>{links}</ul>"),
    )
}

async fn leaf(Path((_, s, p)): Path<(usize, String, String)>) -> impl IntoResponse {
    html(
        &format!("Page {s} {p}"),
        &format!(
            "<p>The text of page {p} of section {s}: what the office does, when it opens \
             and whom to ask.</p><p>More about {p}, with enough words to be content.</p>"
        ),
    )
}

/// The webhook's receiver: reads each manifest as a stream, counting its bytes.
async fn hook(State(bytes): State<Arc<AtomicU64>>, body: Body) -> impl IntoResponse {
    use futures::StreamExt;
    let mut data = body.into_data_stream();
    while let Some(Ok(d)) = data.next().await {
        bytes.fetch_add(d.len() as u64, Ordering::SeqCst);
    }
    axum::http::StatusCode::NO_CONTENT
}

async fn received(State(bytes): State<Arc<AtomicU64>>) -> String {
    bytes.swap(0, Ordering::SeqCst).to_string()
}

async fn serve() -> Result<(), Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("{}", listener.local_addr()?);
    let app = Router::new()
        .route("/{pages}/", get(root))
        .route("/{pages}/{s}/", get(section))
        .route("/{pages}/{s}/{p}", get(leaf))
        .route("/hook", post(hook))
        .route("/received", get(received))
        .with_state(Arc::new(AtomicU64::new(0)));
    axum::serve(listener, app).await?;
    Ok(())
}

async fn bench(sizes: &[usize]) -> Result<(), Box<dyn std::error::Error>> {
    let mut child = Command::new(std::env::current_exe()?)
        .arg("--serve")
        .stdout(Stdio::piped())
        .spawn()?;
    let mut addr = String::new();
    if let Some(out) = child.stdout.take() {
        BufReader::new(out).read_line(&mut addr)?;
    }
    let addr = addr.trim().to_owned();
    let mut result = Ok(());
    for &pages in sizes {
        result = crawl(&addr, pages).await;
        if result.is_err() {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    result
}

/// A crawl's sink, record, peak heap and folder.
type Crawled = (DynSink, kb_crawl::JobRecord, usize, tempfile::TempDir);

/// Crawls the site of `pages` pages into a fresh folder, handing the job to `ingestor`;
/// returns the sink, the job's record and the crawl's peak heap.
async fn crawl_once(
    addr: &str,
    pages: usize,
    ingestor: Arc<dyn Ingestor>,
) -> Result<Crawled, Box<dyn std::error::Error>> {
    crawl_with(addr, pages, ingestor, false).await
}

/// As [`crawl_once`]; with `source`, as the first run of a source (`Crawler::start_sync`:
/// the pages' state kept, finalise deciding every page and writing its `changes.jsonl`).
async fn crawl_with(
    addr: &str,
    pages: usize,
    ingestor: Arc<dyn Ingestor>,
    source: bool,
) -> Result<Crawled, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let sink: DynSink = Arc::new(FsSink::new(dir.path().join("kb"))?);
    let state = Arc::new(RedbStore::open(dir.path().join("state.redb"))?);
    let crawler = Crawler::builder()
        .sink(Arc::clone(&sink))
        .state(Arc::clone(&state) as _)
        .sources(state)
        .ingestor(ingestor)
        .build()?;
    let req = CrawlRequest::builder(format!("http://{addr}/{pages}/"))
        .max_depth(2)
        .max_pages(u32::try_from(pages)?)
        .concurrency(8)
        .rate(None)
        .allow_private_network(true)
        .detect_soft_404(false)
        .sitemap(SitemapMode::Off)
        .guardrails(Guardrails::lifted())
        .build()?;
    let (rec, peak) = if source {
        peak_of(async {
            let (_, handle) = crawler.start_sync("bench", req).await?;
            handle.wait().await
        })
        .await
    } else {
        peak_of(crawler.run(req)).await
    };
    let rec = rec?;
    if rec.status != JobStatus::Completed {
        return Err(format!("the crawl of {pages} pages ended {}", rec.status).into());
    }
    Ok((sink, rec, peak, dir))
}

async fn crawl(addr: &str, pages: usize) -> Result<(), Box<dyn std::error::Error>> {
    let hook_url = format!("http://{addr}/hook");
    let webhook = WebhookIngestor::new(hook_url.as_str(), b"secret".to_vec())?;
    // The same crawl without a hand-off, to tell the crawl's own growth from the hand-off's.
    let (_, _, bare_peak, _dir) = crawl_once(addr, pages, Arc::new(kb_crawl::NoopIngestor)).await?;
    drop(_dir);
    reqwest::get(format!("http://{addr}/received")).await?;
    // The first run of a source, handed to the webhook: its finalise decides every page and
    // writes a `changes.jsonl` line for each.
    let (_, _, source_peak, _dir) =
        crawl_with(addr, pages, Arc::new(webhook.clone()), true).await?;
    drop(_dir);
    reqwest::get(format!("http://{addr}/received")).await?;
    let (sink, rec, crawl_peak, _dir) = crawl_once(addr, pages, Arc::new(webhook.clone())).await?;
    let delivered = reqwest::get(format!("http://{addr}/received"))
        .await?
        .text()
        .await?;
    let job = rec.id.clone();

    // The hand-off alone, as the engine makes it: the diff read from the sink.
    let (r, webhook_peak) = peak_of(async {
        let diff = RunDiff::of_job(sink.as_ref(), &job).await?;
        webhook.on_completed(&rec, &diff).await
    })
    .await;
    r?;
    let chunks = ChunkIngestor::new(Arc::clone(&sink));
    let (r, chunks_peak) = peak_of(async {
        let diff = RunDiff::of_job(sink.as_ref(), &job).await?;
        chunks.on_completed(&rec, &diff).await
    })
    .await;
    r?;
    // A run of a source's hand-off: its `changes.jsonl` (one line a stored page) read in
    // windows from the sink, and, the old way, read whole first.
    let (run_rec, changes_key) = run_of_source(&sink, &rec).await?;
    let (r, run_peak) = peak_of(async {
        let diff = kb_crawl::engine::stored_diff(sink.as_ref(), &run_rec).await?;
        webhook.on_completed(&run_rec, &diff).await
    })
    .await;
    r?;
    let (r, run_whole_peak) = peak_of(async {
        let bytes = sink.get(&changes_key).await?.unwrap_or_default();
        let diff = RunDiff::of_changes(&changes_key, bytes, run_rec.progress.changes)?;
        webhook.on_completed(&run_rec, &diff).await
    })
    .await;
    r?;
    // The old way: every document listed at once, then handed over.
    let (r, whole_peak) = peak_of(async {
        let diff = RunDiff::all_added(sink.list(&job).await?);
        webhook.on_completed(&rec, &diff).await
    })
    .await;
    r?;
    println!(
        "{pages:>6} pages ({} stored, manifest {} bytes): crawl +{:.2} MiB (without a hand-off \
         +{:.2} MiB); hand-off alone: webhook +{:.2} MiB, chunks +{:.2} MiB (listed whole \
         first: webhook +{:.2} MiB)",
        rec.progress.stored,
        delivered,
        mib(crawl_peak),
        mib(bare_peak),
        mib(webhook_peak),
        mib(chunks_peak),
        mib(whole_peak),
    );
    println!(
        "{pages:>6} pages: a run of a source's hand-off to the webhook +{:.2} MiB \
         (its changes.jsonl read whole first: +{:.2} MiB); a source's first run, crawl to \
         hand-off, +{:.2} MiB",
        mib(run_peak),
        mib(run_whole_peak),
        mib(source_peak),
    );
    Ok(())
}

/// A record of a run of a source that added every document of `rec`'s job, with its
/// `changes.jsonl` written to the sink (as the engine writes it); returns it and the key.
async fn run_of_source(
    sink: &DynSink,
    rec: &kb_crawl::JobRecord,
) -> Result<(kb_crawl::JobRecord, String), Box<dyn std::error::Error>> {
    let run = kb_crawl::JobId::new();
    let mut req = rec.request.clone();
    req.sync = Some(kb_crawl::SyncTarget::new(
        kb_crawl::SourceId::derive("bench", &req.url),
        rec.id.clone(),
    ));
    let mut run_rec = kb_crawl::JobRecord::new(run.clone(), req, rec.started_at);
    run_rec.progress.changes = kb_crawl::ChangeCounts::new(rec.progress.stored, 0, 0, 0);
    let mut w = sink.aux_writer(&run, kb_crawl::ChangeLine::FILE).await?;
    let mut after: Option<String> = None;
    loop {
        let page = sink
            .list_page(&rec.id, after.as_deref(), kb_crawl::LIST_PAGE)
            .await?;
        let mut buf = Vec::new();
        for d in page.docs {
            let line = serde_json::json!({
                "url": d.url, "key": d.key, "change": "added", "contentHash": d.content_hash,
            });
            buf.extend_from_slice(line.to_string().as_bytes());
            buf.push(b'\n');
        }
        w.write(&buf).await?;
        match page.next {
            Some(n) => after = Some(n),
            None => break,
        }
    }
    let key = w.finish().await?;
    Ok((run_rec, key))
}

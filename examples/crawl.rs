//! Crawl one site into markdown files: `cargo run --release --example crawl -- URL`.
//!
//! Files land in `OUT/{job-id}/{domain}/{page-title}.md`. The site is kept in `OUT` as a
//! source: running the command again with the same URL and `--out` syncs it (only pages
//! added, changed or removed are written, under the first run's job id) and prints the diff;
//! `--fresh` starts a new source instead. A progress bar goes to stderr, then a summary;
//! `--json` prints the summary as one JSON object on stdout. Exit status 0 when the job
//! completed, 1 when it failed, 2 when the input was refused.
//!
//! `--kb URI` (build with `--features aws-kb`) also puts the pages into a knowledge base and
//! keeps them current on every later run: `agentcore://TABLE/BUCKET?assistant=ID&index=
//! VECTOR_BUCKET/INDEX` (the host's document contract) or `bedrock://BUCKET/PREFIX?kb=KB_ID&
//! ds=DATA_SOURCE_ID` (Amazon Bedrock Knowledge Bases). AWS endpoint, region and credentials
//! come from the SDK's environment (`AWS_ENDPOINT_URL` points it at a local stand-in;
//! `AWS_ENDPOINT_URL_BEDROCK_AGENT` at another one for `StartIngestionJob` alone). A bad URI
//! exits 2 before anything is written; with `--kb`, a refused hand-off exits 1.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};
use kb_crawl::store::{FsSink, RedbStore};
use kb_crawl::{
    CrawlRequest, Crawler, Guardrails, IngestionState, JobHandle, JobId, JobStatus, RenderMode,
    SitemapMode,
};
use serde::Serialize;

/// Crawl one website politely into clean markdown files for a knowledge base.
#[derive(Debug, Parser)]
#[command(name = "crawl", version, long_version = LONG_VERSION, args_override_self = true)]
struct Args {
    /// Root URL (http or https); the crawl stays on its host.
    #[arg(required_unless_present = "resume")]
    url: Option<String>,
    /// Link hops from the root (the root is depth 0).
    #[arg(long, default_value_t = 2)]
    depth: u32,
    /// Cap on page URLs fetched.
    #[arg(long, default_value_t = 100)]
    max_pages: u32,
    /// Output folder.
    #[arg(long, default_value = "./kb")]
    out: PathBuf,
    /// Pages in flight at once.
    #[arg(long, default_value_t = 4)]
    concurrency: usize,
    /// Requests per second per host; 0 removes the limit.
    #[arg(long, default_value_t = 2.0)]
    rate: f64,
    /// Allow hosts on loopback, private and link-local networks (intranets, local tests).
    #[arg(long)]
    allow_private_network: bool,
    /// Remove the depth 5 / 500 pages / 2 req/s guardrails.
    #[arg(long)]
    lift_guardrails: bool,
    /// Print the summary as one JSON object on stdout.
    #[arg(long)]
    json: bool,
    /// When to use headless Chromium: never, always, or auto (only pages that need
    /// JavaScript). always/auto need the `render-chrome` feature and Debian's chromium.
    #[arg(long, value_enum, default_value_t = Render::Never)]
    render: Render,
    /// Crawl only pages whose path (or path?query) matches this glob, e.g. '/docs/**'
    /// (repeatable; `*` stays within a segment, `**` spans segments).
    #[arg(long, value_name = "PATTERN")]
    include: Vec<String>,
    /// Never crawl pages whose path (or path?query) matches this glob, e.g. '**/print/**'
    /// (repeatable; wins over --include).
    #[arg(long, value_name = "PATTERN")]
    exclude: Vec<String>,
    /// Add the URLs of the site's sitemaps (robots.txt `Sitemap:` lines, else
    /// /sitemap.xml) to those found by links: auto, or off for links only.
    #[arg(long, value_enum, default_value_t = Sitemap::Auto)]
    sitemap: Sitemap,
    /// Resume an interrupted job (same --out); URL and limits come from the job's record.
    #[arg(long, value_name = "JOB_ID")]
    resume: Option<String>,
    /// Start a new source instead of syncing the one kept in --out for this URL (the old
    /// documents stay where they are; the new run writes under its own job id).
    #[arg(long)]
    fresh: bool,
    /// Also deliver every run into a knowledge base: agentcore://TABLE/BUCKET?assistant=ID&
    /// index=VECTOR_BUCKET/INDEX or bedrock://BUCKET/PREFIX?kb=KB_ID&ds=DATA_SOURCE_ID (needs
    /// the `aws-kb` feature; AWS settings from the SDK's environment).
    #[arg(long, value_name = "URI")]
    kb: Option<String>,
    /// With --kb: pass same-site PDF and Word (DOCX) links through to the knowledge base as
    /// documents of their own type (checked by Content-Type and signature, at most 20 MB,
    /// counted in --max-pages). Without this flag they are skipped as not_html.
    #[arg(long)]
    linked_docs: bool,
}

/// `--version`: the version and the `--kb` targets this build has.
#[cfg(all(feature = "aws-agentcore", feature = "aws-bedrock-kb"))]
const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (kb targets: agentcore, bedrock)"
);
#[cfg(all(feature = "aws-agentcore", not(feature = "aws-bedrock-kb")))]
const LONG_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (kb targets: agentcore)");
#[cfg(all(not(feature = "aws-agentcore"), feature = "aws-bedrock-kb"))]
const LONG_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (kb targets: bedrock)");
#[cfg(not(any(feature = "aws-agentcore", feature = "aws-bedrock-kb")))]
const LONG_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (kb targets: none)");

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Render {
    Never,
    Always,
    Auto,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Sitemap {
    Auto,
    Off,
}

impl From<Sitemap> for SitemapMode {
    fn from(s: Sitemap) -> SitemapMode {
        match s {
            Sitemap::Auto => SitemapMode::Auto,
            Sitemap::Off => SitemapMode::Off,
        }
    }
}

impl From<Render> for RenderMode {
    fn from(r: Render) -> RenderMode {
        match r {
            Render::Never => RenderMode::Never,
            Render::Always => RenderMode::Always,
            Render::Auto => RenderMode::Auto,
        }
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Summary {
    crawl_job_id: String,
    status: JobStatus,
    pages_processed: u64,
    pages_total: u64,
    stored: u64,
    skipped: BTreeMap<String, u64>,
    excluded: BTreeMap<String, u64>,
    failure: Option<String>,
    out_dir: String,
    /// The source this run synced.
    source_id: Option<String>,
    /// What the run changed in the knowledge base.
    changes: Changes,
    /// The hand-off to the knowledge base: `pending`, `delivered` or `failed`.
    ingestion: IngestionState,
    /// Why the last hand-off failed.
    ingestion_reason: Option<String>,
    /// Hand-offs started.
    ingestion_attempts: u32,
    /// What the delivery to `--kb` did (only with `--kb`).
    #[serde(skip_serializing_if = "Option::is_none")]
    kb: Option<serde_json::Value>,
}

#[derive(Debug, Serialize)]
struct Changes {
    added: u64,
    changed: u64,
    unchanged: u64,
    removed: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    // File and state writes run on tokio's blocking pool. Its default of up to 512 threads
    // lets a long crawl start dozens, each with its own malloc arena holding freed memory
    // (about 10 MB of peak RSS at 10,000 pages here); a few threads keep up with the disk.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(cli(args))
}

/// Most threads of the blocking pool (file and durable-state writes).
const BLOCKING_THREADS: usize = 4;

async fn cli(args: Args) -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("KB_CRAWL_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(args).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

async fn run(args: Args) -> kb_crawl::Result<ExitCode> {
    // A bad --kb URI is refused (naming the wrong part) before anything is written.
    let kb_uri = args.kb.as_deref().map(kb::parse).transpose()?;
    if args.linked_docs && kb_uri.is_none() {
        return Err(kb_crawl::Error::invalid(
            "linked-docs: needs --kb (only a knowledge base takes PDF and DOCX documents; \
             the markdown folder keeps skipping them as not_html)",
        ));
    }
    let sink = Arc::new(FsSink::new(&args.out)?);
    let kb = match &kb_uri {
        Some(uri) => Some(kb::connect(uri, Arc::clone(&sink) as kb_crawl::DynSink).await?),
        None => None,
    };
    // Crawl state (frontier, dedup, counters) is durable so a killed crawl can --resume.
    let state = Arc::new(RedbStore::open(
        args.out.join(".kb-crawl").join("state.redb"),
    )?);
    let mut builder = Crawler::builder()
        .sink(sink)
        .sources(Arc::clone(&state) as kb_crawl::DynSourceStore)
        .state(state);
    let browser = match args.render {
        Render::Never => None,
        _ => Some(renderer(args.concurrency)?),
    };
    if let Some(r) = &browser {
        builder = builder.renderer(Arc::clone(r));
    }
    if let Some(k) = &kb {
        builder = builder.ingestor(k.ingestor());
    }
    let crawler = builder.build()?;
    let handle = match &args.resume {
        Some(id) => crawler.resume(&id.parse::<JobId>()?).await?,
        None => {
            let url = args.url.as_deref().unwrap_or_default();
            let request = build_request(&args, url)?;
            if args.fresh {
                if let Some(root) = kb_crawl::url::normalize(&request.url) {
                    let id = kb_crawl::SourceId::derive(TENANT, &root);
                    crawler.sources().delete_source(&id).await?;
                }
            }
            let (source, handle) = crawler.start_sync(TENANT, request).await?;
            eprintln!("{} started (source {})", handle.id(), source.id);
            handle
        }
    };
    let code = report(&args, &crawler, handle, kb.as_ref()).await;
    // Stops Chromium and removes its profile folder before the process exits.
    if let Some(r) = browser {
        r.shutdown().await;
    }
    code
}

/// The tenant the CLI keeps its sources under.
const TENANT: &str = "local";

/// `--kb`: the knowledge-base targets of crawl-aws.
#[cfg(any(feature = "aws-agentcore", feature = "aws-bedrock-kb"))]
mod kb {
    use kb_crawl::aws::kb::{KbIngestor, KbUri};

    /// A parsed `--kb` URI.
    pub(crate) type Uri = KbUri;

    /// The knowledge base a run is delivered to.
    pub(crate) struct Target(KbIngestor);

    /// Parses `uri`; an error names the wrong part.
    pub(crate) fn parse(uri: &str) -> kb_crawl::Result<Uri> {
        uri.parse()
    }

    /// Connects the standard SDK way (environment, `AWS_ENDPOINT_URL`, credential chain).
    pub(crate) async fn connect(uri: &Uri, sink: kb_crawl::DynSink) -> kb_crawl::Result<Target> {
        Ok(Target(uri.connect(sink).await?))
    }

    impl Target {
        pub(crate) fn ingestor(&self) -> kb_crawl::DynIngestor {
            self.0.as_dyn()
        }

        pub(crate) fn report(&self) -> serde_json::Value {
            self.0.last_report().to_json()
        }
    }
}

/// `--kb` in a build without the knowledge-base targets.
#[cfg(not(any(feature = "aws-agentcore", feature = "aws-bedrock-kb")))]
mod kb {
    /// Never made: every `parse` fails.
    pub(crate) enum Uri {}

    /// Never made.
    pub(crate) enum Target {}

    pub(crate) fn parse(_uri: &str) -> kb_crawl::Result<Uri> {
        Err(kb_crawl::Error::invalid(
            "kb: this build has no knowledge-base targets; rebuild with --features aws-kb",
        ))
    }

    pub(crate) async fn connect(uri: &Uri, _sink: kb_crawl::DynSink) -> kb_crawl::Result<Target> {
        match *uri {}
    }

    impl Target {
        pub(crate) fn ingestor(&self) -> kb_crawl::DynIngestor {
            match *self {}
        }

        pub(crate) fn report(&self) -> serde_json::Value {
            match *self {}
        }
    }
}

#[cfg(feature = "render-chrome")]
fn renderer(tabs: usize) -> kb_crawl::Result<kb_crawl::DynRenderer> {
    let config = kb_crawl::render::ChromeConfig::default().with_max_tabs(tabs.max(1));
    Ok(Arc::new(kb_crawl::render::ChromeRenderer::new(config)?))
}

#[cfg(not(feature = "render-chrome"))]
fn renderer(_tabs: usize) -> kb_crawl::Result<kb_crawl::DynRenderer> {
    Err(kb_crawl::Error::invalid(
        "render: this build has no browser; rebuild with --features render-chrome",
    ))
}

fn build_request(args: &Args, url: &str) -> kb_crawl::Result<CrawlRequest> {
    let guardrails = if args.lift_guardrails {
        Guardrails::lifted()
    } else {
        Guardrails::default()
    };
    CrawlRequest::builder(url)
        .max_depth(args.depth)
        .max_pages(args.max_pages)
        .concurrency(args.concurrency)
        .rate(Some(args.rate))
        .allow_private_network(args.allow_private_network)
        .render(args.render.into())
        .include(args.include.iter().cloned())
        .exclude(args.exclude.iter().cloned())
        .sitemap(args.sitemap.into())
        .linked_documents(args.linked_docs)
        .guardrails(guardrails)
        .build()
}

/// Sources whose documents a knowledge base has had from the start: `OUT/.kb-crawl/kb-seeded`,
/// one `SOURCE_ID URI` a line.
fn seeded_file(args: &Args) -> PathBuf {
    args.out.join(".kb-crawl").join("kb-seeded")
}

/// A run of a source only hands its changes over. When `--kb URI` is new for the source (it
/// was crawled before without it, or into another knowledge base), the pages that did not
/// change would never reach the knowledge base: after the run's own hand-off this hands it
/// every current document once (the ingestors write only what they do not have yet), then
/// records the source as seeded. A failed seed is the run's failed hand-off.
async fn seed(
    args: &Args,
    crawler: &Crawler,
    kb: &kb::Target,
    uri: &str,
    record: &mut kb_crawl::JobRecord,
) -> kb_crawl::Result<()> {
    let Some(sync) = record.request.sync.clone() else {
        return Ok(());
    };
    if record.status != JobStatus::Completed || record.ingestion.state != IngestionState::Delivered
    {
        return Ok(());
    }
    let line = format!("{} {uri}", sync.source);
    let file = seeded_file(args);
    let seeded = std::fs::read_to_string(&file).unwrap_or_default();
    if seeded.lines().any(|l| l == line) {
        return Ok(());
    }
    // The source's first run handed every page over already.
    if sync.documents != record.id {
        let sink = crawler.sink();
        let all = kb_crawl::RunDiff::of_job(sink.as_ref(), &sync.documents).await?;
        if let Err(e) = kb.ingestor().on_completed(record, &all).await {
            eprintln!("error: kb: handing the source's earlier pages to {uri} failed: {e}");
            record.ingestion.state = IngestionState::Failed;
            record.ingestion.reason = Some(format!("kb seed: {e}"));
            return Ok(());
        }
    }
    let mut text = seeded;
    text.push_str(&line);
    text.push('\n');
    std::fs::write(&file, text).map_err(|e| {
        kb_crawl::Error::new(
            kb_crawl::ErrorKind::Storage,
            format!("kb: cannot write {}: {e}", file.display()),
        )
    })
}

async fn report(
    args: &Args,
    crawler: &Crawler,
    handle: JobHandle,
    kb: Option<&kb::Target>,
) -> kb_crawl::Result<ExitCode> {
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:40} {pos}/{len} pages {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let job = handle.id().clone();
    let jobs = Arc::clone(crawler.jobs());
    let poll = {
        let bar = bar.clone();
        tokio::spawn(async move {
            loop {
                if let Ok(Some(r)) = jobs.get(&job).await {
                    bar.set_length(r.progress.pages_total);
                    bar.set_position(r.progress.pages_processed);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    let record = handle.wait().await;
    poll.abort();
    let mut record = record?;
    if let (Some(k), Some(uri)) = (kb, &args.kb) {
        seed(args, crawler, k, uri, &mut record).await?;
    }
    bar.set_length(record.progress.pages_total);
    bar.set_position(record.progress.pages_processed);
    bar.finish_and_clear();

    let p = &record.progress;
    let documents = record
        .request
        .sync
        .as_ref()
        .map_or(&record.id, |s| &s.documents);
    let summary = Summary {
        crawl_job_id: record.id.to_string(),
        status: record.status,
        pages_processed: p.pages_processed,
        pages_total: p.pages_total,
        stored: p.stored,
        skipped: p.skipped.clone(),
        excluded: p.excluded.clone(),
        failure: record.failure.clone(),
        out_dir: args.out.join(documents.as_str()).display().to_string(),
        source_id: record.request.sync.as_ref().map(|s| s.source.to_string()),
        changes: Changes {
            added: p.changes.added,
            changed: p.changes.changed,
            unchanged: p.changes.unchanged,
            removed: p.changes.removed,
        },
        ingestion: record.ingestion.state,
        ingestion_reason: record.ingestion.reason.clone(),
        ingestion_attempts: record.ingestion.attempts,
        kb: kb
            .filter(|_| record.ingestion.state == IngestionState::Delivered)
            .map(kb::Target::report),
    };
    eprintln!(
        "{} {}: {}/{} pages processed, {} stored in {}",
        summary.crawl_job_id,
        summary.status,
        summary.pages_processed,
        summary.pages_total,
        summary.stored,
        summary.out_dir
    );
    for (reason, n) in &summary.skipped {
        eprintln!("  skipped {n:>5}  {reason}");
    }
    for (reason, n) in &summary.excluded {
        eprintln!("  excluded {n:>4}  {reason}");
    }
    if record.request.sync.is_some() && record.status == JobStatus::Completed {
        let c = &summary.changes;
        eprintln!(
            "  changes: +{} added, ~{} changed, ={} unchanged, -{} removed ({}/changes.jsonl)",
            c.added,
            c.changed,
            c.unchanged,
            c.removed,
            args.out.join(record.id.as_str()).display()
        );
    }
    if let (Some(k), Some(uri)) = (&summary.kb, &args.kb) {
        eprintln!(
            "  kb: {} written, {} already current, {} removed in {uri}",
            k["written"], k["alreadyCurrent"], k["deleted"]
        );
        for s in k["skipped"].as_array().into_iter().flatten() {
            eprintln!("  kb skipped {}: {}", s["url"], s["reason"]);
        }
    }
    if let Some(f) = &summary.failure {
        eprintln!("  failure: {f}");
    }
    if let Some(r) = &summary.ingestion_reason {
        eprintln!(
            "  knowledge-base hand-off {} after {} attempt(s): {r}",
            summary.ingestion, summary.ingestion_attempts
        );
    }
    if args.json {
        match serde_json::to_string(&summary) {
            Ok(j) => println!("{j}"),
            Err(e) => eprintln!("error: cannot print JSON summary: {e}"),
        }
    }
    // With --kb the run's purpose is the knowledge base: a refused hand-off fails the command.
    let delivered = kb.is_none() || record.ingestion.state == IngestionState::Delivered;
    Ok(if record.status == JobStatus::Completed && delivered {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

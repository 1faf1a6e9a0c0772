//! Serves the job API and the "Website Sources" page with the embedded backends: documents
//! and chunks on disk (`FsSink`); job records, sources and schedules in the durable state
//! file (`{data}/.kb-crawl/state.redb`); due scheduled runs start every 30 s.
//!
//! ```text
//! cargo run --release --example serve -- [--addr 127.0.0.1:8080] [--data ./kb] [--allow-private-network]
//!     [--allowed-host NAME[:PORT]]...
//! ```
//!
//! The API answers only for the `Host` names of `--addr` (plus `localhost`, `127.0.0.1` and
//! `[::1]` on its port when it listens on loopback or all addresses) and the `--allowed-host`
//! names (the public name behind a proxy).
//!
//! Open `http://127.0.0.1:8080/` (assistant `demo`). The API is under `/assistants/...`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use kb_crawl::api::ingest::ChunkIngestor;
use kb_crawl::api::{ui, ApiState, InProcessRunner, Scheduler};
use kb_crawl::store::{FsSink, RedbStore};
use kb_crawl::{Crawler, DynIngestor, DynSink};

/// The assistant the page works for.
const ASSISTANT: &str = "demo";

#[derive(Debug, Parser)]
#[command(about = "Serve the kb-crawl job API and the Website Sources page")]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Folder documents and chunks are written to.
    #[arg(long, default_value = "./kb")]
    data: PathBuf,
    /// Allow crawling private, loopback and link-local hosts (needed for 127.0.0.1).
    #[arg(long)]
    allow_private_network: bool,
    /// Another `Host` name the API answers for (repeatable), e.g. its name behind a proxy.
    #[arg(long)]
    allowed_host: Vec<String>,
}

/// The `Host` values a browser sends for `addr`, plus `extra`.
fn allowed_hosts(addr: SocketAddr, extra: &[String]) -> Vec<String> {
    let mut hosts = vec![addr.to_string()];
    if addr.ip().is_loopback() || addr.ip().is_unspecified() {
        let port = addr.port();
        hosts.extend([
            format!("localhost:{port}"),
            format!("127.0.0.1:{port}"),
            format!("[::1]:{port}"),
        ]);
    }
    hosts.extend(extra.iter().cloned());
    hosts
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let sink: DynSink = Arc::new(FsSink::new(&args.data)?);
    let ingestor: DynIngestor = Arc::new(ChunkIngestor::new(Arc::clone(&sink)));
    // Durable crawl state beside the documents: jobs survive a restart and resume.
    let state_db = Arc::new(RedbStore::open(
        args.data.join(".kb-crawl").join("state.redb"),
    )?);
    let crawler = Crawler::builder()
        .sink(sink)
        .state(Arc::clone(&state_db))
        // Sources, their pages' state and schedules survive a restart too.
        .sources(state_db)
        .ingestor(Arc::clone(&ingestor))
        .build()?;
    let runner = InProcessRunner::new(crawler);
    let resumed = runner.resume_interrupted().await?;
    if !resumed.is_empty() {
        eprintln!("resumed {} interrupted crawl(s)", resumed.len());
    }
    // A hand-off to the knowledge base the last process did not finish is made again, once.
    let handed = runner.resume_hand_offs().await?;
    if !handed.is_empty() {
        eprintln!(
            "handing over {} interrupted hand-off(s) again",
            handed.len()
        );
    }
    let listener = tokio::net::TcpListener::bind(args.addr).await?;
    let state = ApiState::in_process(runner, ingestor)
        .allow_private_network(args.allow_private_network)
        .allowed_hosts(allowed_hosts(listener.local_addr()?, &args.allowed_host));
    // Starts the sources' scheduled runs (a window missed while the server was down runs
    // once now); the due times live in the state file.
    let _scheduler = Scheduler::new(state.clone()).spawn(
        std::time::Duration::from_secs(30),
        tokio_util::sync::CancellationToken::new(),
    );
    eprintln!(
        "Website Sources: http://{}/ (assistant {ASSISTANT}); documents in {}",
        listener.local_addr()?,
        args.data.display()
    );
    axum::serve(listener, ui::app(state, ASSISTANT)).await?;
    Ok(())
}

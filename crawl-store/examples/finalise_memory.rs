//! Memory at finalise (issue 17 item 3): stores 1,000 / 5,000 / 10,000 generated pages of one
//! site (a shared navigation and footer around each page's own text) in an [`FsSink`], then
//! runs what a crawl's finalise does over them (the site-template pass and `finish_job`'s
//! manifests) and prints the peak of live heap bytes above what was live before it, counted
//! by a global allocator. For comparison it also prints what listing every document at once
//! (`Sink::list`, the old way) peaks at.
//!
//! `cargo run -p crawl-store --example finalise_memory [-- 1000 5000 10000]`

use std::process::ExitCode;

use crawl_core::conformance::sample_doc;
use crawl_core::engine::strip_site_template;
use crawl_core::{JobId, Sink, TemplateOptions};
use crawl_store::FsSink;
use peak_alloc::PeakAlloc;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

const NAV: &str = "[Home](/) · [About](/about) · [Docs](/docs) · [Contact](/contact)";
const FOOTER: &str = "© Example University · 1910 University Dr · Privacy · Accessibility";

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

async fn run(pages: usize) -> crawl_core::Result<()> {
    let dir = std::env::temp_dir().join(format!("kb-finalise-{pages}-{}", std::process::id()));
    let sink = FsSink::new(&dir)?;
    let job = JobId::new();
    for n in 0..pages {
        let body = format!(
            "{NAV}\n\n# Page {n}\n\nThe text of page {n}, section {}, about topic {}.\n\n{FOOTER}\n",
            n % 37,
            n * 7919 % 1009
        );
        let url = format!("https://site.example/s{}/page-{n}", n % 50);
        sink.put(&sample_doc(&job, &url, Some(&format!("Page {n}")), &body))
            .await?;
    }
    let live = HEAP.current_usage();
    let opts = TemplateOptions::default();
    let (changed, finalise): (crawl_core::Result<usize>, usize) = peak_of(async {
        let changed = strip_site_template(&sink, &job, &opts).await?;
        sink.finish_job(&job).await?;
        Ok(changed)
    })
    .await;
    let changed = changed?;
    let (listed, list_all) = peak_of(sink.list(&job)).await;
    let listed = listed?.len();
    println!(
        "{pages:>6} pages: finalise peak +{:.3} MiB (template stripped from {changed}), \
         list-all peak +{:.3} MiB ({listed} documents), live before {:.3} MiB",
        mib(finalise),
        mib(list_all),
        mib(live)
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn main() -> ExitCode {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000, 5_000, 10_000]
    } else {
        sizes
    };
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    for n in sizes {
        if let Err(e) = rt.block_on(run(n)) {
            eprintln!("error: {n} pages: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

//! Converts every `*.html` file of a folder to markdown with kb-crawl's extractor.
//!
//! ```text
//! cargo run --release --example extract -- --in DIR --out DIR [--threads N] [--no-main-content]
//! ```
//!
//! Bytes are decoded with [`crawl_extract::decode_html`] (BOM, `<meta charset>`,
//! else UTF-8). Each `name.html` becomes `name.md`.

use clap::Parser;
use crawl_extract::{decode_html, extract, ExtractOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Command-line arguments.
#[derive(Debug, Parser)]
#[command(about = "Convert every *.html in a folder to markdown")]
struct Args {
    /// Folder with the `*.html` files.
    #[arg(long = "in")]
    input: PathBuf,
    /// Folder for the `*.md` files (created if missing).
    #[arg(long = "out")]
    output: PathBuf,
    /// Worker threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Convert the whole page instead of its main content.
    #[arg(long)]
    no_main_content: bool,
}

fn convert(
    path: &Path,
    out_dir: &Path,
    opts: &ExtractOptions,
) -> Result<(), Box<dyn std::error::Error>> {
    let bytes = std::fs::read(path)?;
    let html = decode_html(&bytes, None);
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("page.html");
    let page_url = url::Url::parse("https://example.invalid/")?.join(name)?;
    let md = extract(&html, &page_url, opts).markdown;
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("page");
    std::fs::write(out_dir.join(format!("{stem}.md")), md)?;
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    std::fs::create_dir_all(&args.output)?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&args.input)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "html"))
        .collect();
    files.sort();
    let mut opts = ExtractOptions::default();
    opts.main_content = !args.no_main_content;
    // The files have no site of their own (they are read as pages of example.invalid), so
    // "same-site images only" would drop every absolute image: keep them all here.
    opts.cross_site_images = true;
    let next = AtomicUsize::new(0);
    let failures = AtomicUsize::new(0);
    let start = std::time::Instant::now();
    let bytes: u64 = files
        .iter()
        .filter_map(|f| f.metadata().ok())
        .map(|m| m.len())
        .sum();
    std::thread::scope(|s| {
        for _ in 0..args.threads.max(1) {
            s.spawn(|| {
                while let Some(f) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Err(e) = convert(f, &args.output, &opts) {
                        eprintln!("{}: {e}", f.display());
                        failures.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "{} files, {:.1} MB in {secs:.2} s ({:.1} MB/s, reading and writing included)",
        files.len(),
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 / secs.max(1e-9)
    );
    if failures.load(Ordering::Relaxed) > 0 {
        return Err(format!("{} files failed", failures.load(Ordering::Relaxed)).into());
    }
    Ok(())
}

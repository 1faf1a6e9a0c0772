//! Converts every `*.html` file of a folder to markdown with kb-crawl's extractor.
//!
//! ```text
//! cargo run --release --example extract -- --in DIR --out DIR [--threads N] [--no-main-content]
//!     [--keep-hidden] [--model FILE] [--dump-features FILE]
//! ```
//!
//! `--model` replaces the committed block model (`none`: the rules alone), for the
//! leave-one-source-out evaluation of `scripts/train-extract.py`; `--dump-features` also
//! writes every block's text, features and ancestry (`path`: `tag.class#id` up to the rules'
//! root) and place relative to that root (`rel`: `0` inside, else `K|before|BRANCH|OWN` or
//! `K|after|BRANCH|OWN`, see `learned::block_relations`) as JSON lines, the script's training
//! input and the input of the chrome and left-out-content analyses.
//!
//! Bytes are decoded with [`crawl_extract::decode_html`] (BOM, `<meta charset>`,
//! else UTF-8). Each `name.html` becomes `name.md`.

use clap::Parser;
use crawl_extract::learned::{self, BlockModel};
use crawl_extract::{decode_html, ExtractOptions};
use std::io::Write;
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
    /// Keep hidden text too (`ExtractOptions::keep_hidden`).
    #[arg(long)]
    keep_hidden: bool,
    /// Block model file to use instead of the committed one; `none` for the rules alone.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Also write every block's features as JSON lines to this file.
    #[arg(long)]
    dump_features: Option<PathBuf>,
}

/// What every worker shares.
struct Ctx<'a> {
    out_dir: &'a Path,
    opts: &'a ExtractOptions,
    model: Option<&'a BlockModel>,
    /// Use the committed model (no `--model`).
    default_model: bool,
    dump: Option<&'a std::sync::Mutex<std::io::BufWriter<std::fs::File>>>,
}

fn convert(path: &Path, ctx: &Ctx<'_>) -> Result<(), Box<dyn std::error::Error>> {
    let bytes = std::fs::read(path)?;
    let html = decode_html(&bytes, None);
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("page.html");
    let page_url = url::Url::parse("https://example.invalid/")?.join(name)?;
    let md = if ctx.default_model {
        crawl_extract::extract(&html, &page_url, ctx.opts).markdown
    } else {
        learned::extract_with(&html, &page_url, ctx.opts, ctx.model).markdown
    };
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("page");
    std::fs::write(ctx.out_dir.join(format!("{stem}.md")), md)?;
    if let Some(dump) = ctx.dump {
        let mut lines = String::new();
        let paths = learned::block_paths(&html, ctx.opts);
        let rels = learned::block_relations(&html, ctx.opts);
        for (k, (((text, f), path), rel)) in learned::block_features(&html, ctx.opts)
            .into_iter()
            .zip(paths)
            .zip(rels)
            .enumerate()
        {
            let f: Vec<String> = f.iter().map(|x| format!("{x}")).collect();
            lines.push_str(&format!(
                "{{\"id\":{},\"block\":{k},\"text\":{},\"path\":{},\"rel\":{},\"f\":[{}]}}\n",
                json_string(stem),
                json_string(&text),
                json_string(&path),
                json_string(&rel),
                f.join(",")
            ));
        }
        let mut w = dump.lock().map_err(|_| "feature file lock poisoned")?;
        w.write_all(lines.as_bytes())?;
    }
    Ok(())
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
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
    opts.keep_hidden = args.keep_hidden;
    // The files have no site of their own (they are read as pages of example.invalid), so
    // "same-site images only" would drop every absolute image: keep them all here.
    opts.cross_site_images = true;
    let model = match &args.model {
        Some(p) if p.as_os_str() == "none" => None,
        Some(p) => Some(
            BlockModel::parse(&std::fs::read_to_string(p)?)
                .map_err(|e| format!("--model {}: {e}", p.display()))?,
        ),
        None => None,
    };
    let dump = match &args.dump_features {
        Some(p) => Some(std::sync::Mutex::new(std::io::BufWriter::new(
            std::fs::File::create(p)
                .map_err(|e| format!("--dump-features {}: {e}", p.display()))?,
        ))),
        None => None,
    };
    let ctx = Ctx {
        out_dir: &args.output,
        opts: &opts,
        model: model.as_ref(),
        default_model: args.model.is_none(),
        dump: dump.as_ref(),
    };
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
                    // A page the extractor panics on fails alone; the others go on.
                    let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        convert(f, &ctx).map_err(|e| e.to_string())
                    }));
                    let err = match done {
                        Ok(Ok(())) => continue,
                        Ok(Err(e)) => e,
                        Err(_) => "the extractor panicked on this page (a bug)".to_owned(),
                    };
                    eprintln!("{}: {err}", f.display());
                    failures.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    if let Some(d) = dump {
        d.into_inner()
            .map_err(|_| "feature file lock poisoned")?
            .flush()?;
    }
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

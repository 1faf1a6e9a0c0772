//! Throughput of `crawl_extract::extract` against `htmd::convert` on the same
//! whole pages. Pages: `benches/data/*.html`, plus `$KB_EXTRACT_BENCH_DIR/*.html`
//! when that variable names a folder.

use crawl_extract::{decode_html, extract, ExtractOptions};
use criterion::{BenchmarkId, Criterion, Throughput};
use std::path::{Path, PathBuf};

fn pages_in(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|x| x == "html"));
    files.sort();
    files
        .iter()
        .filter_map(|p| {
            let bytes = std::fs::read(p).ok()?;
            let name = p.file_stem()?.to_string_lossy().into_owned();
            Some((name, decode_html(&bytes, None)))
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut pages = pages_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data"));
    if let Some(dir) = std::env::var_os("KB_EXTRACT_BENCH_DIR") {
        pages.extend(pages_in(Path::new(&dir)));
    }
    let url = url::Url::parse("https://example.com/docs/page.html").expect("static URL");
    let opts = ExtractOptions::default();
    // Every page on its own, ours and the baseline side by side.
    let mut g = c.benchmark_group("extract");
    for (name, html) in &pages {
        g.throughput(Throughput::Bytes(html.len() as u64));
        g.bench_with_input(BenchmarkId::new("kb-crawl", name), html, |b, h| {
            b.iter(|| extract(h, &url, &opts))
        });
        g.bench_with_input(BenchmarkId::new("htmd", name), html, |b, h| {
            b.iter(|| htmd::convert(h))
        });
    }
    g.finish();
    // All pages in one iteration: the aggregate MB/s of each.
    let total: u64 = pages.iter().map(|(_, h)| h.len() as u64).sum();
    let mut g = c.benchmark_group("extract-all");
    g.throughput(Throughput::Bytes(total));
    g.sample_size(10);
    g.bench_function("kb-crawl", |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|(_, h)| extract(h, &url, &opts).markdown.len())
                .sum::<usize>()
        })
    });
    g.bench_function("htmd", |b| {
        b.iter(|| {
            pages
                .iter()
                .map(|(_, h)| htmd::convert(h).map(|m| m.len()).unwrap_or(0))
                .sum::<usize>()
        })
    });
    g.finish();
}

fn main() {
    // What `criterion_group!`/`criterion_main!` expand to, without their undocumented items.
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}

#!/usr/bin/env bash
# rs-trafilatura's text for every *.html of a folder, to score beside ours, and the wall
# time of both on one thread in the same run.
#
# rs-trafilatura (crates.io, by the author of WCXB, the benchmark most of the quality set
# comes from) classifies each page into the quality set's seven types and extracts with a
# profile per type. It is built in a scratch crate outside this workspace, so the project
# never depends on it.
#
# run:   bash scripts/rs-trafilatura-baseline.sh /tmp/kb-quality/pages /tmp/rstraf-txt
#        python3 ../shared/quality/score.py /tmp/rstraf-txt --per-type --per-page /tmp/rstraf.tsv
#        python3 scripts/compare-scores.py --quality ../shared/quality /tmp/kb.tsv /tmp/rstraf.tsv
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: rs-trafilatura-baseline.sh HTML_DIR OUT_DIR" >&2; exit 2; }
src=$(cd "$1" && pwd); out=$2
root=$(cd "$(dirname "$0")/.." && pwd)
work=${RSTRAF_WORK:-/tmp/rs-trafilatura-baseline}
version=0.2.2

mkdir -p "$work/src" "$out"
cat > "$work/Cargo.toml" <<EOF
[package]
name = "rstraf-baseline"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
rs-trafilatura = "=$version"

[workspace]
EOF
cat > "$work/src/main.rs" <<'EOF'
//! `rstraf-baseline IN OUT`: rs_trafilatura::extract's content_text of every IN/*.html,
//! written to OUT/<stem>.txt (empty when it fails); prints the pages and the seconds.
use std::fs;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (src, out) = (&args[1], &args[2]);
    let mut pages: Vec<_> = fs::read_dir(src)
        .expect("read the input folder")
        .map(|e| e.expect("list the input folder").path())
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .collect();
    pages.sort();
    let start = Instant::now();
    for p in &pages {
        let bytes = fs::read(p).expect("read a page");
        let html = String::from_utf8_lossy(&bytes);
        let text = match std::panic::catch_unwind(|| rs_trafilatura::extract(&html)) {
            Ok(Ok(r)) => r.content_text,
            _ => String::new(),
        };
        let stem = p.file_stem().expect("a page name").to_string_lossy();
        fs::write(format!("{out}/{stem}.txt"), text).expect("write the text");
    }
    println!("rs-trafilatura {VERSION}: {} pages in {:.2} s", pages.len(), start.elapsed().as_secs_f64());
}
EOF
echo "const VERSION: &str = \"$version\";" >> "$work/src/main.rs"
(cd "$work" && cargo build --release --quiet)
(cd "$root" && cargo build --release --quiet --example extract)

"$work/target/release/rstraf-baseline" "$src" "$out" 2>/dev/null
ours=$(mktemp -d)
t0=$EPOCHREALTIME
"$root/target/release/examples/extract" --in "$src" --out "$ours" --threads 1 > /dev/null 2>&1
t1=$EPOCHREALTIME
awk -v a="$t0" -v b="$t1" -v n="$(ls "$ours" | wc -l)" \
    'BEGIN { printf "kb-crawl examples/extract --threads 1: %d pages in %.2f s\n", n, b - a }'
rm -rf "$ours"

#!/usr/bin/env bash
# Crawl benchmark: serves real sites with nginx on 127.0.0.1 (nginx costs < 0.1 ms CPU a
# page) and crawls them with the release example CLI, politeness off (--rate 0, robots kept),
# printing pages/s, CPU ms per page and peak RSS (from /usr/bin/time) for:
#   - ten linked copies of Debian's python3.11-doc HTML (~5,300 pages), capped at 500 and
#     unlimited, to show memory stays flat as the crawl grows;
#   - a generated site at 1,000 / 5,000 / 10,000 pages (the load benchmark);
#   - if bench/peers/spider-md exists, the spider-rs + markdown peer baseline on the pydocs runs.
# Usage: bash bench/crawl.sh [concurrency]
set -euo pipefail
cd "$(dirname "$0")/.."
conc=${1:-16}
need=()
command -v nginx >/dev/null || need+=(nginx-light)
[[ -d /usr/share/doc/python3.11/html ]] || need+=(python3.11-doc)
[[ -x /usr/bin/time ]] || need+=(time)
command -v heaptrack >/dev/null || need+=(heaptrack)
if ((${#need[@]})); then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
work=$PWD/target/bench-crawl
mkdir -p "$work/nginx/logs" "$work/out"
python3 bench/make_sites.py --out "$work/sites"
port=${BENCH_PORT:-8089}
cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  types { text/html html; text/css css; application/javascript js; image/png png; text/plain txt; }
  default_type application/octet-stream;
  server { listen 127.0.0.1:$port; root $work/sites; }
}
CONF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx"
trap 'nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" -s stop || true' EXIT
cargo build --release --example crawl --quiet
bin=target/release/examples/crawl

printf '%-28s %7s %8s %9s %11s %9s\n' run pages wall_s pages/s cpu_ms/page rss_MB
# Prints one table row from $work/time.txt and the page count under key $2 of JSON file $3.
report() {
  local name=$1 key=$2 json=$3
  read -r wall user sys rss < "$work/time.txt"
  python3 - "$name" "$wall" "$user" "$sys" "$rss" "$json" "$key" <<'PY'
import json, sys
name, wall, user, sys_, rss, path, key = sys.argv[1:]
s = json.loads(open(path).read().strip().splitlines()[-1])
n = s[key]; wall = float(wall); cpu = (float(user) + float(sys_)) * 1000
print(f"{name:<28} {n:>7} {wall:>8.2f} {n / wall:>9.1f} {cpu / max(n, 1):>11.2f} {int(rss) / 1024:>9.1f}")
PY
}
run() {
  local name=$1 url=$2 max=$3
  rm -rf "$work/out"
  /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" \
    "$bin" "$url" --out "$work/out" --depth 30 --max-pages "$max" --rate 0 \
    --concurrency "$conc" --allow-private-network --lift-guardrails --json > "$work/summary.json"
  report "$name" pagesProcessed "$work/summary.json"
}
run "pydocs x10, 500 pages" "http://127.0.0.1:$port/pydocs/index.html" 500
run "pydocs x10, all pages" "http://127.0.0.1:$port/pydocs/index.html" 100000
run "generated, 1k pages" "http://127.0.0.1:$port/gen/p0.html" 1000
run "generated, 5k pages" "http://127.0.0.1:$port/gen/p0.html" 5000
run "generated, 10k pages" "http://127.0.0.1:$port/gen/p0.html" 10000

# Peak heap (heaptrack counts every allocation: unlike peak RSS it does not move with the
# allocator's arenas and fragmentation, so it shows what the crawl itself holds).
printf '\n%-28s %7s %12s\n' "run (under heaptrack)" pages peak_heap_MB
for n in 1000 5000 10000; do
  rm -rf "$work/out" "$work/heap".*
  heaptrack -o "$work/heap" "$bin" "http://127.0.0.1:$port/gen/p0.html" --out "$work/out" \
    --depth 30 --max-pages "$n" --rate 0 --concurrency "$conc" --allow-private-network \
    --lift-guardrails --json > /dev/null 2>&1
  peak=$(heaptrack_print -f "$work"/heap.* 2>/dev/null | sed -n 's/^peak heap memory consumption: //p')
  printf '%-28s %7s %12s\n' "generated, $n pages" "$n" "$peak"
done

# Peer baseline: spider-rs (crates.io `spider`, HTTP only) + spider_transformations markdown,
# one .md file per page, no delay, robots.txt respected, depth 30 (bench/peers/spider-md).
run_spider() {
  local name=$1 url=$2 max=$3
  rm -rf "$work/out"
  /usr/bin/time -f '%e %U %S %M' -o "$work/time.txt" \
    "$spider_bin" "$url" --out "$work/out" --depth 30 --max-pages "$max" \
    --concurrency "$conc" > "$work/spider.json"
  report "$name" pages "$work/spider.json"
}
if [[ -d bench/peers/spider-md ]]; then
  cargo build --release --manifest-path bench/peers/spider-md/Cargo.toml --quiet
  spider_bin=bench/peers/spider-md/target/release/spider-md
  run_spider "spider-rs+md, 500 pages" "http://127.0.0.1:$port/pydocs/index.html" 500
  run_spider "spider-rs+md, all pages" "http://127.0.0.1:$port/pydocs/index.html" 100000
fi

#!/usr/bin/env bash
# Re-sync benchmark: the first crawl of a generated 5,000-page site served by nginx on
# 127.0.0.1 (nginx sends ETag and Last-Modified and answers If-None-Match with 304), then a
# sync of the unchanged site into the same --out, in one run. Prints, for both, the bytes
# nginx sent (its access log's $bytes_sent, headers included) and the crawler's CPU time
# (user + system, from /usr/bin/time), and the re-sync's share of each.
# Usage: bash bench/resync.sh [pages] [concurrency]
set -euo pipefail
cd "$(dirname "$0")/.."
pages=${1:-5000}
conc=${2:-16}
need=()
command -v nginx >/dev/null || need+=(nginx-light)
[[ -x /usr/bin/time ]] || need+=(time)
if ((${#need[@]})); then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
work=$PWD/target/bench-resync
mkdir -p "$work/nginx/logs"
python3 bench/make_sites.py --out "$work/sites" --copies 0 --generated "$pages" >/dev/null
port=${BENCH_PORT:-8090}
cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log;
events { worker_connections 1024; }
http {
  log_format sent '\$bytes_sent';
  access_log $work/nginx/logs/access.log sent;
  types { text/html html; text/plain txt; }
  default_type application/octet-stream;
  server { listen 127.0.0.1:$port; root $work/sites; }
}
CONF
nginx -c "$work/nginx/nginx.conf" -p "$work/nginx"
trap 'nginx -c "$work/nginx/nginx.conf" -p "$work/nginx" -s stop || true' EXIT
cargo build --release --example crawl --quiet
bin=target/release/examples/crawl
rm -rf "$work/out"
# One crawl: empties the access log, runs the CLI, prints "bytes cpu_s pages" for it.
crawl() {
  : > "$work/nginx/logs/access.log"
  /usr/bin/time -f '%U %S' -o "$work/time.txt" \
    "$bin" "http://127.0.0.1:$port/gen/p0.html" --out "$work/out" --depth 30 \
    --max-pages "$pages" --rate 0 --concurrency "$conc" --sitemap off \
    --allow-private-network --lift-guardrails --json > "$work/summary.json"
  sleep 0.2 # nginx writes its log lines as requests end
  python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
sent = sum(int(l) for l in open(f"{w}/nginx/logs/access.log") if l.strip())
user, sys_ = open(f"{w}/time.txt").read().split()[-2:]
s = json.loads(open(f"{w}/summary.json").read().strip().splitlines()[-1])
print(sent, float(user) + float(sys_), s["pagesProcessed"], json.dumps(s["changes"]))
PY
}
read -r b1 c1 p1 ch1 < <(crawl)
read -r b2 c2 p2 ch2 < <(crawl)
python3 - "$b1" "$c1" "$p1" "$ch1" "$b2" "$c2" "$p2" "$ch2" <<'PY'
import sys
b1, c1, p1, ch1, b2, c2, p2, ch2 = sys.argv[1:]
b1, c1, b2, c2 = int(b1), float(c1), int(b2), float(c2)
print(f"{'run':<16} {'pages':>6} {'bytes_sent':>12} {'cpu_s':>7}  changes")
print(f"{'first crawl':<16} {p1:>6} {b1:>12} {c1:>7.2f}  {ch1}")
print(f"{'re-sync':<16} {p2:>6} {b2:>12} {c2:>7.2f}  {ch2}")
print(f"re-sync / first: bytes {100 * b2 / b1:.1f} %, CPU {100 * c2 / c1:.1f} %")
PY

#!/usr/bin/env bash
# Every check and test of the project, on a fresh machine: installs and starts what the
# tests need, then fmt, clippy -D warnings, docs, all tests, the examples that run offline,
# and the default-features dependency check. A service the tests need that is missing is a
# failure here, never a silent skip (KB_CRAWL_REQUIRE_SERVICES=1).
set -euo pipefail
cd "$(dirname "$0")/.."
export KB_CRAWL_REQUIRE_SERVICES=1
export CARGO_TERM_COLOR=never
mkdir -p .ci-tmp

step() { printf '\n==> %s\n' "$*"; }

# openssl: the JWT tests make their RSA keys with it.
if ! command -v openssl >/dev/null; then
  step "openssl"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssl >/dev/null
fi
if [[ -f scripts/chromium.sh ]]; then
  step "chromium"
  bash scripts/chromium.sh
fi
if [[ -f scripts/moto.sh ]]; then
  step "moto (local AWS stand-in)"
  bash scripts/moto.sh start
  trap 'bash scripts/moto.sh stop || true' EXIT
  eval "$(bash scripts/moto.sh env)"
fi

step "cargo fmt --check"
cargo fmt --all -- --check
step "cargo clippy -D warnings (all targets, all features)"
cargo clippy --workspace --all-targets --all-features -- -D warnings
step "cargo doc -D warnings"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --all-features --no-deps --quiet
step "cargo test (all features)"
cargo test --workspace --all-features --no-fail-fast
step "offline example: crawl of the fixture site"
rm -rf .ci-tmp/kb
PROFILE=dev DEMO_PORT=8766 bash scripts/demo.sh --out .ci-tmp/kb --json > .ci-tmp/demo.json
python3 - <<'PY'
import json
s = json.load(open(".ci-tmp/demo.json"))
assert s["status"] == "COMPLETED", s
assert s["pagesProcessed"] == s["pagesTotal"] > 5, s
assert s["stored"] > 5, s
print("demo crawl:", s["stored"], "documents,", s["pagesProcessed"], "/", s["pagesTotal"], "pages")
PY
if [[ -f scripts/lint-deploy.sh ]]; then
  step "serverless deployment: cfn-lint and asl-validator"
  bash scripts/lint-deploy.sh
fi
if [[ -f scripts/check-default-deps.sh ]]; then
  step "default features pull no AWS SDK or Chromium client"
  bash scripts/check-default-deps.sh
fi
echo
echo "all checks passed"

#!/usr/bin/env bash
# Every check and test of the project, on a fresh machine: installs and starts what the
# tests need, then fmt, clippy -D warnings, docs, all tests, the examples that run offline,
# and the default-features dependency check. A service the tests need that is missing is a
# failure here, never a silent skip (KB_CRAWL_REQUIRE_SERVICES=1).
set -euo pipefail
cd "$(dirname "$0")/.."
export KB_CRAWL_REQUIRE_SERVICES=1
export CARGO_TERM_COLOR=never
# CI builds from a clean clone: incremental caches are written and never read, and debug
# info only slows compiling and linking (panics still name the test's file and line).
export CARGO_INCREMENTAL=0
export CARGO_PROFILE_DEV_DEBUG=false
export CARGO_PROFILE_TEST_DEBUG=false
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
# Node.js and npm (the CDK construct's tests and synth, asl-validator): Debian's, when missing.
if ! command -v npm >/dev/null; then
  step "node and npm"
  if command -v apt-get >/dev/null && [[ "$(id -u)" == 0 ]]; then
    apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
  else
    echo "node and npm are required (apt-get install nodejs npm)" >&2
    exit 1
  fi
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
step "cargo test: build (all features)"
cargo test --workspace --all-features --no-run
# The Lambda zip compiles everything again for its own target (glibc 2.34): in its own
# target dir, alongside the tests, which mostly wait on their servers.
lambda_pid=
if [[ -f scripts/build-lambda.sh ]]; then
  step "Lambda zip: build in the background (log: .ci-tmp/lambda-build.log)"
  CARGO_TARGET_DIR=target/lambda-ci PROFILE=lambda-ci setsid bash scripts/build-lambda.sh \
    > .ci-tmp/lambda-build.log 2>&1 &
  lambda_pid=$!
  # An early exit (a failed test) ends the background build too.
  trap '[[ -n "$lambda_pid" ]] && kill -- -"$lambda_pid" 2>/dev/null; bash scripts/moto.sh stop 2>/dev/null || true' EXIT
fi
step "cargo test: run (all features)"
cargo test --workspace --all-features --no-fail-fast
step "offline example: crawl of the fixture site"
rm -rf .ci-tmp/kb
# The test build's example binary (all features): the same CLI, built once.
PROFILE=dev DEMO_CARGO_FLAGS=--all-features DEMO_PORT=8766 \
  bash scripts/demo.sh --out .ci-tmp/kb --json > .ci-tmp/demo.json
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
if [[ -f crawl-aws/cdk/package.json ]]; then
  step "CDK construct: npm ci, jest + cdk-nag, cdk synth equals deploy/template.yaml"
  (
    cd crawl-aws/cdk
    npm ci --no-audit --no-fund --loglevel=error
    npm test --silent
    npx --no-install cdk synth --quiet >/dev/null
    cmp <(node -e 'process.stdout.write(JSON.stringify(JSON.parse(require("fs").readFileSync("cdk.out/KbCrawl.template.json","utf8"))))') \
        <(node -e 'process.stdout.write(JSON.stringify(JSON.parse(require("fs").readFileSync("../deploy/template.yaml","utf8"))))') \
      || { echo "cdk synth differs from crawl-aws/deploy/template.yaml: run npm run synth in crawl-aws/cdk" >&2; exit 1; }
  )
fi
if [[ -n "$lambda_pid" ]]; then
  step "Lambda zip: (cargo-lambda + zig) check the ELF, answer through a runtime API stand-in"
  if ! wait "$lambda_pid"; then
    lambda_pid=
    cat .ci-tmp/lambda-build.log >&2
    echo "the Lambda zip build failed (log above)" >&2
    exit 1
  fi
  lambda_pid=
  tail -n 3 .ci-tmp/lambda-build.log
  .venv/moto/bin/python scripts/check-lambda-zip.py .ci-tmp/lambda/kb-crawl-lambda/bootstrap.zip
fi
if [[ -f scripts/check-default-deps.sh ]]; then
  step "default features: they build, and pull no AWS SDK or Chromium client"
  cargo check -p kb-crawl --lib --example crawl --quiet
  bash scripts/check-default-deps.sh
fi
echo
echo "all checks passed"

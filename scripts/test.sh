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
# A CI machine's disk can be small (one run ran out of space building the tests): the test
# build's binaries go without their symbol tables (a third of their size; a panic still
# names its file and line), and clippy's and rustdoc's metadata build gets its own target
# directory, removed once the docs are checked (about 600 MB the test build never reads).
export CARGO_PROFILE_DEV_STRIP=symbols
export CARGO_PROFILE_TEST_STRIP=symbols
check_target=target/check
mkdir -p .ci-tmp

free_disk() { df -Pm . | awk 'NR == 2 { print $4 " MB free" }'; }
step() { printf '\n==> %s (%s)\n' "$*" "$(free_disk)"; }

# What the tests need is installed in the background while clippy, the docs and the test
# build compile: Debian's packages (openssl for the JWT tests' RSA keys, chromium, Node.js)
# one after another (dpkg has one lock), then the CDK construct's `npm ci`; moto's venv and
# server beside them. Each writes its own log in .ci-tmp; `need` waits for one and prints
# its log when it failed.
apt_install() {
  if command -v apt-get >/dev/null && [[ "$(id -u)" == 0 ]]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    echo "$* required (apt-get install $*)" >&2
    return 1
  fi
}
system_setup() {
  command -v openssl >/dev/null || apt_install openssl
  [[ -f scripts/chromium.sh ]] && bash scripts/chromium.sh
  command -v npm >/dev/null || apt_install nodejs npm
  if [[ -f crawl-aws/cdk/package.json ]]; then
    (cd crawl-aws/cdk && npm ci --no-audit --no-fund --loglevel=error)
  fi
}
declare -A setup_pid=()
background() {
  local name=$1
  shift
  "$@" > ".ci-tmp/setup-$name.log" 2>&1 &
  setup_pid[$name]=$!
}
need() {
  local name=$1
  [[ -n "${setup_pid[$name]:-}" ]] || return 0
  if ! wait "${setup_pid[$name]}"; then
    cat ".ci-tmp/setup-$name.log" >&2
    echo "setup step '$name' failed (log above: .ci-tmp/setup-$name.log)" >&2
    exit 1
  fi
  unset "setup_pid[$name]"
  step "$name: ready"
  tail -n 3 ".ci-tmp/setup-$name.log"
}
cleanup() {
  local status=$? pid
  if [[ $status != 0 ]]; then
    echo "test.sh: exit $status with $(free_disk) (target: $(du -sm target 2>/dev/null | cut -f1) MB)" >&2
  fi
  for pid in "${setup_pid[@]}"; do kill -- -"$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true; done
  if [[ -f scripts/moto.sh ]]; then bash scripts/moto.sh stop 2>/dev/null || true; fi
}
trap cleanup EXIT
step "setup in the background: system packages then npm ci, moto (logs: .ci-tmp/setup-*.log)"
background system system_setup
if [[ -f scripts/moto.sh ]]; then
  background moto bash scripts/moto.sh start
fi

step "cargo fmt --check"
cargo fmt --all -- --check
step "cargo clippy -D warnings (all targets, all features)"
CARGO_TARGET_DIR=$check_target cargo clippy --workspace --all-targets --all-features -- -D warnings
step "cargo doc -D warnings"
CARGO_TARGET_DIR=$check_target RUSTDOCFLAGS="-D warnings" \
  cargo doc --workspace --all-features --no-deps --quiet
rm -rf "$check_target"
step "cargo test: build (all features)"
cargo test --workspace --all-features --no-run
need system
need moto
if [[ -f scripts/moto.sh ]]; then
  eval "$(bash scripts/moto.sh env)"
fi
# The deploy zip (cargo-lambda + zig, linked against glibc 2.34) compiles every dependency
# again for its own target: about 690 CPU-seconds, a third of the test build. The test
# command checks the test build's own handler binary instead (below); KB_CRAWL_LAMBDA_ZIG=1
# also builds and checks the deploy zip, in the background beside the tests.
lambda_pid=
if [[ "${KB_CRAWL_LAMBDA_ZIG:-0}" == 1 && -f scripts/build-lambda.sh ]]; then
  step "Lambda deploy zip: build in the background (log: .ci-tmp/lambda-build.log)"
  CARGO_TARGET_DIR=target/lambda-ci PROFILE=lambda-ci setsid bash scripts/build-lambda.sh \
    > .ci-tmp/lambda-build.log 2>&1 &
  lambda_pid=$!
  trap 'cleanup; [[ -n "$lambda_pid" ]] && kill -- -"$lambda_pid" 2>/dev/null' EXIT
fi

# Two lanes run at once: most of the tests wait on their servers, moto or Chromium rather
# than on the CPU. Lane 2 takes the serverless end-to-end tests (each starts its own moto),
# then the deployment's lint and the CDK construct's checks; lane 1 all the other tests, the
# doc tests and the offline example. Cargo holds the build lock only while it builds, and
# both lanes select the same packages and features as the build above, so neither builds.
# Lane 1's tests are every test target but lane 2's, by name from cargo metadata: most
# crates' integration tests are one target `it` (tests/main.rs), a name several packages
# share and --test=it selects in each.
lane2_tests=(sfn_e2e sfn_cost)
mapfile -t lane1_tests < <(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
lane2 = set(sys.argv[1:])
packages = json.load(sys.stdin)["packages"]
names = {t["name"] for p in packages for t in p["targets"] if "test" in t["kind"]}
missing = lane2 - names
if missing:
    sys.exit(f"test.sh: lane 2 names tests that do not exist: {sorted(missing)}")
print("\n".join(sorted(names - lane2)))' "${lane2_tests[@]}")
lane2() {
  local tests=("$@")
  cargo test --workspace --all-features --no-fail-fast "${tests[@]/#/--test=}"
  if [[ -f scripts/lint-deploy.sh ]]; then
    step "serverless deployment: cfn-lint and asl-validator"
    bash scripts/lint-deploy.sh
  fi
  if [[ -f crawl-aws/cdk/package.json ]]; then
    step "CDK construct: jest + cdk-nag, cdk synth equals deploy/template.yaml"
    (
      cd crawl-aws/cdk
      npm test --silent
      npx --no-install cdk synth --quiet >/dev/null
      cmp <(node -e 'process.stdout.write(JSON.stringify(JSON.parse(require("fs").readFileSync("cdk.out/KbCrawl.template.json","utf8"))))') \
          <(node -e 'process.stdout.write(JSON.stringify(JSON.parse(require("fs").readFileSync("../deploy/template.yaml","utf8"))))') \
        || { echo "cdk synth differs from crawl-aws/deploy/template.yaml: run npm run synth in crawl-aws/cdk" >&2; exit 1; }
    )
  fi
}
step "lane 2 in the background: ${lane2_tests[*]}, lint-deploy, CDK (log: .ci-tmp/lane2.log)"
export -f lane2 step free_disk
# Its own process group, so that an early exit ends its cargo test and servers too.
setsid bash -c 'set -euo pipefail; lane2 "$@"' lane2 "${lane2_tests[@]}" > .ci-tmp/lane2.log 2>&1 &
setup_pid[lane2]=$!

lane1_ok=1
step "cargo test: run (all features; lane 1)"
cargo test --workspace --all-features --no-fail-fast --lib --bins "${lane1_tests[@]/#/--test=}" || lane1_ok=0
step "cargo test: doc tests (all features)"
cargo test --workspace --all-features --no-fail-fast --doc || lane1_ok=0
step "offline example: crawl of the fixture site"
rm -rf .ci-tmp/kb
# The test build's example binary (all features): the same CLI, built once.
DEMO_BIN=target/debug/examples/crawl DEMO_PORT=8766 \
  bash scripts/demo.sh --out .ci-tmp/kb --json > .ci-tmp/demo.json
python3 - <<'PY'
import json
s = json.load(open(".ci-tmp/demo.json"))
assert s["status"] == "COMPLETED", s
assert s["pagesProcessed"] == s["pagesTotal"] > 5, s
assert s["stored"] > 5, s
print("demo crawl:", s["stored"], "documents,", s["pagesProcessed"], "/", s["pagesTotal"], "pages")
PY

step "lane 2: waiting for it"
lane2_ok=1
wait "${setup_pid[lane2]}" || lane2_ok=0
unset "setup_pid[lane2]"
cat .ci-tmp/lane2.log
if [[ $lane1_ok == 0 || $lane2_ok == 0 ]]; then
  [[ $lane1_ok == 0 ]] && echo "lane 1 failed: see its cargo test output above" >&2
  [[ $lane2_ok == 0 ]] && echo "lane 2 failed: see .ci-tmp/lane2.log above" >&2
  exit 1
fi

if [[ -f scripts/check-lambda-zip.py ]]; then
  step "Lambda handler: the test build's kb-crawl-lambda, zipped: its ELF, and answers through a runtime API stand-in"
  python3 - <<'PY'
import os, zipfile
os.makedirs(".ci-tmp/lambda-test", exist_ok=True)
info = zipfile.ZipInfo("bootstrap")
info.external_attr = 0o100755 << 16
info.compress_type = zipfile.ZIP_DEFLATED
with zipfile.ZipFile(".ci-tmp/lambda-test/bootstrap.zip", "w") as z, \
        open("target/debug/kb-crawl-lambda", "rb") as f:
    z.writestr(info, f.read(), compresslevel=1)
PY
  .venv/moto/bin/python scripts/check-lambda-zip.py .ci-tmp/lambda-test/bootstrap.zip
fi
if [[ -n "$lambda_pid" ]]; then
  step "Lambda deploy zip: (cargo-lambda + zig) check the ELF, answer through a runtime API stand-in"
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

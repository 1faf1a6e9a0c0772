#!/usr/bin/env bash
# Builds the Lambda zip: kb-crawl-lambda (every handler, the job API included: feature
# aws-lambda-api) as `bootstrap` for provided.al2023 x86_64, linked against glibc 2.34
# (Amazon Linux 2023) with cargo-lambda and zig, both from PyPI into .venv/lambda-build.
#
#   scripts/build-lambda.sh            writes .ci-tmp/lambda/kb-crawl-lambda/bootstrap.zip
#
# arm64 (Graviton) is the production choice: about 20% cheaper per GB-second and as fast for
# this I/O-bound work. It is not built here because zig links but cannot supply Rust's
# standard library for aarch64-unknown-linux-gnu, and that target cannot be installed on
# this machine (no rustup download); where `rustup target add aarch64-unknown-linux-gnu`
# works, `ARCH=arm64 scripts/build-lambda.sh` builds it.
# PROFILE (default release) picks the cargo profile. Idempotent: the venv is reused.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv/lambda-build"
OUT="$ROOT/.ci-tmp/lambda"
ARCH="${ARCH:-x86_64}"
PROFILE="${PROFILE:-release}"
CARGO_LAMBDA_SPEC='cargo-lambda==1.9.2'
ZIG_SPEC='ziglang==0.13.0'

die() { echo "build-lambda: $*" >&2; exit 1; }

if [[ ! -x "$VENV/bin/python" ]]; then
  command -v python3 >/dev/null || die "python3 is required"
  mkdir -p "$ROOT/.venv"
  python3 -m venv "$VENV" 2>/dev/null || {
    rm -rf "$VENV"
    if command -v apt-get >/dev/null && [[ "$(id -u)" == 0 ]]; then
      apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
      python3 -m venv "$VENV"
    else
      die "cannot create a venv (install python3-venv)"
    fi
  }
fi
if [[ ! -x "$VENV/bin/cargo-lambda" ]] || ! "$VENV/bin/python" -c 'import ziglang' 2>/dev/null; then
  echo "build-lambda: installing $CARGO_LAMBDA_SPEC $ZIG_SPEC into $VENV" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$CARGO_LAMBDA_SPEC" "$ZIG_SPEC" \
    || die "pip install of cargo-lambda and ziglang failed"
fi
export PATH="$VENV/bin:$PATH"

case "$ARCH" in
  x86_64) target=x86_64-unknown-linux-gnu ;;
  arm64) target=aarch64-unknown-linux-gnu ;;
  *) die "ARCH: x86_64 or arm64, not '$ARCH'" ;;
esac
profile_flag=(--profile "$PROFILE")
[[ "$PROFILE" == release ]] && profile_flag=(--release)

cd "$ROOT"
rm -rf "$OUT"
echo "build-lambda: cargo lambda build ($target, glibc 2.34, profile $PROFILE)" >&2
cargo lambda build "${profile_flag[@]}" --target "$target.2.34" \
  -p crawl-aws --features aws-lambda-api --bin kb-crawl-lambda \
  --output-format zip --lambda-dir "$OUT"
[[ -f "$OUT/kb-crawl-lambda/bootstrap.zip" ]] || die "no zip at $OUT/kb-crawl-lambda/bootstrap.zip"
ls -l "$OUT/kb-crawl-lambda/bootstrap.zip" >&2

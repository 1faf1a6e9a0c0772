#!/usr/bin/env bash
# Proves the default kb-crawl build pulls in no AWS SDK crate and no Chromium client.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

tree="$(cargo tree -p kb-crawl -e normal --prefix none)" || {
  echo "check-default-deps: cargo tree failed" >&2
  exit 1
}
bad="$(printf '%s\n' "$tree" | awk '{print $1}' | grep -E '^(aws-|chromiumoxide)' | sort -u || true)"
if [[ -n "$bad" ]]; then
  echo "check-default-deps: the default kb-crawl build depends on:" >&2
  printf '  %s\n' $bad >&2
  echo "AWS SDK and Chromium crates must stay behind the aws*/render-chrome features." >&2
  exit 1
fi
echo "check-default-deps: ok (no aws-* or chromiumoxide crate in the default build)"

#!/usr/bin/env bash
# The main job on a fresh machine: serve the bundled fixture site on 127.0.0.1 and crawl it
# into ./kb with the example CLI (embedded default backends). Extra arguments go to the CLI,
# e.g. `bash scripts/demo.sh --json`. PROFILE=dev runs a debug build.
set -euo pipefail
cd "$(dirname "$0")/.."
port=${DEMO_PORT:-8765}
python3 -m http.server "$port" --bind 127.0.0.1 --directory tests/fixtures/site >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done
args=("http://127.0.0.1:$port/" --out ./kb --allow-private-network --depth 3 "$@")
# DEMO_BIN: an example binary already built (the test command runs its own test build's,
# which `cargo run` from the root package would build again with other features).
if [[ -n "${DEMO_BIN:-}" ]]; then
  "$DEMO_BIN" "${args[@]}"
  exit
fi
profile_flag=--release
[[ "${PROFILE:-release}" == dev ]] && profile_flag=
# DEMO_CARGO_FLAGS: more cargo flags.
cargo run $profile_flag ${DEMO_CARGO_FLAGS:-} --example crawl -- "${args[@]}"

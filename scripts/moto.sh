#!/usr/bin/env bash
# Local S3/DynamoDB/Step Functions/S3 Vectors/SSM stand-in (moto in server mode) for the AWS backend
# tests (S3 Vectors is in moto itself; the ssm extra brings what SSM needs).
#
#   scripts/moto.sh start   install moto into .venv/moto if missing, start it, wait until ready
#   scripts/moto.sh stop    stop the server started by `start` (by PID)
#   scripts/moto.sh env     print `export KB_CRAWL_AWS_ENDPOINT=...` and fake credentials
#
# MOTO_PORT (default 5000) chooses the port. Idempotent: `start` with a live server is a no-op.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv/moto"
TMP="$ROOT/.ci-tmp"
PID_FILE="$TMP/moto.pid"
LOG_FILE="$TMP/moto.log"
PORT="${MOTO_PORT:-5000}"
URL="http://127.0.0.1:$PORT"
MOTO_SPEC='moto[s3,dynamodb,stepfunctions,ssm,server]==5.2.5'

die() { echo "moto.sh: $*" >&2; exit 1; }

running() {
  [[ -f "$PID_FILE" ]] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null
}

ready() {
  python3 - "$URL" <<'PY' 2>/dev/null
import sys, urllib.request
urllib.request.urlopen(sys.argv[1] + "/moto-api/", timeout=2).read()
PY
}

install() {
  [[ -x "$VENV/bin/moto_server" ]] && return 0
  command -v python3 >/dev/null || die "python3 is required"
  mkdir -p "$ROOT/.venv"
  if ! python3 -m venv "$VENV" 2>/dev/null; then
    # Debian without python3-venv: install it, else fall back to virtualenv from pip.
    rm -rf "$VENV"
    if command -v apt-get >/dev/null && [[ "$(id -u)" == 0 ]]; then
      apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
      python3 -m venv "$VENV"
    else
      python3 -m pip install --user --quiet virtualenv || die "cannot create a venv (install python3-venv)"
      python3 -m virtualenv -q "$VENV"
    fi
  fi
  echo "moto.sh: installing $MOTO_SPEC into $VENV" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    "$MOTO_SPEC" flask flask-cors || die "pip install of moto failed"
  [[ -x "$VENV/bin/moto_server" ]] || die "moto_server missing after install"
}

start() {
  mkdir -p "$TMP"
  if running && ready; then
    echo "moto.sh: already running on $URL (pid $(cat "$PID_FILE"))" >&2
    return 0
  fi
  if ready; then
    die "something else already answers on $URL; stop it or set MOTO_PORT"
  fi
  install
  # moto_server, with S3 and DynamoDB writes serialised as the real services apply them
  # atomically (see scripts/moto_server.py).
  nohup "$VENV/bin/python" "$ROOT/scripts/moto_server.py" 127.0.0.1 "$PORT" >"$LOG_FILE" 2>&1 &
  echo $! >"$PID_FILE"
  for _ in $(seq 1 120); do
    if ready; then
      echo "moto.sh: ready on $URL (pid $(cat "$PID_FILE"))" >&2
      return 0
    fi
    running || { tail -n 20 "$LOG_FILE" >&2; die "moto_server exited during start-up (log: $LOG_FILE)"; }
    sleep 0.5
  done
  tail -n 20 "$LOG_FILE" >&2
  die "moto_server not ready on $URL after 60 s (log: $LOG_FILE)"
}

stop() {
  if running; then
    kill "$(cat "$PID_FILE")" 2>/dev/null || true
    for _ in $(seq 1 20); do running || break; sleep 0.25; done
    running && kill -9 "$(cat "$PID_FILE")" 2>/dev/null || true
    echo "moto.sh: stopped" >&2
  fi
  rm -f "$PID_FILE"
}

env_vars() {
  cat <<ENV
export KB_CRAWL_AWS_ENDPOINT=$URL
export AWS_ACCESS_KEY_ID=\${AWS_ACCESS_KEY_ID:-testing}
export AWS_SECRET_ACCESS_KEY=\${AWS_SECRET_ACCESS_KEY:-testing}
export AWS_REGION=\${AWS_REGION:-us-east-1}
ENV
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env) env_vars ;;
  *) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac

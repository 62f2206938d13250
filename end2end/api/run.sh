#!/usr/bin/env bash
# Schemathesis against the release server's JSON API: every check, every phase
# (examples, coverage, fuzzing, and the stateful phase that follows the document's
# links), as an administrator so no operation is only ever refused. Exits non-zero on
# any failure. Needs the release build (target/clarion-server); run by `.ci/dev test`.
#
#   end2end/api/run.sh            (PORT=3126 by default; VENV for the Python tools)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
PORT=${PORT:-3126}
VENV=${VENV:-${CLARION_TARGET:-$ROOT/target}/schemathesis-venv}
SERVER=$ROOT/target/clarion-server

if ! "$VENV/bin/st" --version 2>/dev/null | grep -q "4.32.5"; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r end2end/api/requirements.txt
fi

WORK=$(mktemp -d)
cleanup() {
  [[ -n "${PID:-}" ]] && kill "$PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
# A fresh database with the demo data and accounts (loopback: demo accounts are on).
CLARION_ADDR=127.0.0.1:$PORT CLARION_DATA_DIR=$WORK CLARION_LOG=warn CLARION_TODAY=2026-11-01 \
  "$SERVER" serve >"$WORK/server.log" 2>&1 &
PID=$!
for _ in $(seq 1 120); do
  curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
  sleep 0.5
done
curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null || { cat "$WORK/server.log"; exit 1; }
TOKEN=$(DATABASE_URL="sqlite://$WORK/clarion.db" CLARION_LOG=warn "$SERVER" user token create \
  --username admin --name schemathesis | grep -o 'Bearer clarion_[0-9a-f]*' | cut -d' ' -f2)
[[ -n "$TOKEN" ]] || { echo "could not create an API token"; exit 1; }

status=0
# From the scratch directory: schemathesis keeps a cache in its working directory.
(cd "$WORK" && "$VENV/bin/st" --config-file "$ROOT/end2end/api/schemathesis.toml" --no-color run \
  "http://127.0.0.1:$PORT/api/v1/openapi.json" \
  -H "Authorization: Bearer $TOKEN" --checks all --max-examples 30 \
  --generation-deterministic) || status=$?
if grep -q "panicked" "$WORK/server.log"; then
  echo "the server panicked during the run:"; grep -B2 -A5 panicked "$WORK/server.log"; status=1
fi
exit $status

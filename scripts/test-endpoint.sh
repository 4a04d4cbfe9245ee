#!/usr/bin/env bash
# Runs the storage-touching test suites against a second S3 implementation, MiniStack (pinned
# below, in a venv of its own: it pins an older botocore than ours), started on 127.0.0.1 only
# and stopped afterwards:
#   bash scripts/test-endpoint.sh            # MiniStack
#   bash scripts/test-endpoint.sh localstack # LocalStack core, if installed (make test-localstack)
#   bash scripts/test-endpoint.sh ministack tests/memory/test_x.py  # only these tests (paths or node ids)
# The moto run (make pytest) covers everything; this run proves what moto cannot: the conditions
# it ignores (tests marked real_conditions) and the store's real error codes. Only the tests that
# reach the store run (tests/conftest.py: reaches_the_store); the others, which would repeat the
# moto run's answers, are deselected. Two xdist workers, each with a scratch bucket of its own
# (tests/support: BUCKET).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
store=${1:-ministack}
case "$store" in
  ministack|localstack) ;;
  *) echo "test-endpoint: unknown store '$store' (ministack or localstack)"; exit 2 ;;
esac
MINISTACK_VERSION=1.5.33
MINISTACK_VENV=.venv-ministack
suites=(tests/memory tests/storage tests/reliability tests/cli tests/admin tests/conformance/test_s3memory.py)
if [ $# -gt 1 ]; then suites=("${@:2}"); fi

port=$("$BIN/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
work=$(mktemp -d)
case "$store" in
  ministack)
    if [ ! -x "$MINISTACK_VENV/bin/ministack" ] || ! "$MINISTACK_VENV/bin/pip" show ministack 2>/dev/null | grep -x "Version: $MINISTACK_VERSION" >/dev/null; then
      python3 -m venv "$MINISTACK_VENV"
      "$MINISTACK_VENV/bin/pip" install --quiet "ministack==$MINISTACK_VERSION"
    fi
    # BIND_HOST keeps it on loopback; IOT_MTLS_ENABLED=0 keeps its IoT mTLS listener closed;
    # PERSIST_STATE=0 and S3_PERSIST=0 keep its state in memory (the defaults, made explicit).
    BIND_HOST=127.0.0.1 GATEWAY_PORT=$port IOT_MTLS_ENABLED=0 PERSIST_STATE=0 S3_PERSIST=0 \
      TMPDIR="$work" "$MINISTACK_VENV/bin/ministack" >"$work/server.log" 2>&1 &
    health="http://127.0.0.1:$port/_ministack/health" ;;
  localstack)
    command -v localstack >/dev/null || { echo "test-endpoint: LocalStack is not installed (pip install localstack-core)"; exit 2; }
    GATEWAY_LISTEN=127.0.0.1:$port SERVICES=s3,kms,sts localstack start --host >"$work/server.log" 2>&1 &
    health="http://127.0.0.1:$port/_localstack/health" ;;
esac
server=$!
stop() {
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap stop EXIT

"$BIN/python" - "$health" <<'PY'
import sys, time, urllib.request
deadline = time.monotonic() + 60
while True:
    try:
        urllib.request.urlopen(sys.argv[1], timeout=2).read()
        break
    except OSError:
        if time.monotonic() > deadline:
            sys.exit("test-endpoint: the server did not answer its health check within 60 s")
        time.sleep(0.2)
PY
echo "test-endpoint: $store on 127.0.0.1:$port"
S3MEMORY_TEST_ENDPOINT="http://127.0.0.1:$port" S3MEMORY_TEST_STORE="$store" \
  "$BIN/python" -m pytest -q -p no:cacheprovider -n 2 --dist worksteal "${suites[@]}"

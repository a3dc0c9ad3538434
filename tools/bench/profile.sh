#!/usr/bin/env bash
# profile.sh — where the webhook's time goes, per request, counted in
# instructions with valgrind's callgrind (repeatable, unlike timings on a
# shared machine; perf has no hardware counters in this VM).
#
#   tools/bench/profile.sh [FIXTURE.json ...]     # default: every fixture in tests/testdata/bench/expect.tsv
#
# Starts `wasd webhook` under callgrind (instrumentation off during start-up),
# and for each fixture: one warm-up request, counters zeroed, N requests over
# one kept-alive TLS connection, counters dumped. tools/bench/profile_summary.py
# then prints instructions per request split by area (TLS records, HTTP
# parsing, JSON parse, rules, encoding, logging and metrics, allocation).
#
# Environment: WASD_BIN (default build/wasd), OUT_DIR (default a temp dir,
# kept), N_SMALL (requests for bodies < 100 KB, default 200), N_LARGE (20),
# FRESH=1 (a new connection and full TLS handshake per request), RESUME=1
# (with FRESH=1: each new connection resumes the first one's TLS session).
# Needs valgrind, openssl, python3. Loopback only; the server is stopped by
# its PID on exit.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
FIXDIR=$ROOT/tests/testdata/bench
WASD_BIN=${WASD_BIN:-$ROOT/build/wasd}
OUT_DIR=${OUT_DIR:-$(mktemp -d /tmp/wasd-profile.XXXXXX)}
N_SMALL=${N_SMALL:-200}
N_LARGE=${N_LARGE:-20}

die() { echo "profile.sh: $*" >&2; exit 2; }
for tool in valgrind callgrind_control callgrind_annotate openssl python3; do
  command -v "$tool" >/dev/null 2>&1 || die "needs $tool"
done
[[ -x $WASD_BIN ]] || die "no wasd binary at $WASD_BIN (set WASD_BIN)"
mkdir -p "$OUT_DIR"

PID=
cleanup() {
  if [[ -n $PID ]] && kill -0 "$PID" 2>/dev/null; then
    kill -TERM "$PID" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT

"$WASD_BIN" certs generate --service wasd-webhook --namespace wasd-system --out-dir "$OUT_DIR/certs" \
  --extra-san 127.0.0.1 --extra-san localhost >/dev/null
PORT=$(PYTHONPATH="$ROOT/tests" python3 -c 'from lib.net import free_port; print(free_port())')

valgrind --tool=callgrind --callgrind-out-file="$OUT_DIR/callgrind.%p.out" \
  "$WASD_BIN" webhook --tls-cert-file "$OUT_DIR/certs/tls.crt" --tls-key-file "$OUT_DIR/certs/tls.key" \
  --bind-address 127.0.0.1 --port "$PORT" --health-probe-bind-address 0 --metrics-bind-address 0 \
  --io-threads 1 >"$OUT_DIR/server.log" 2>&1 &
PID=$!

if (($#)); then FIXTURES=("$@"); else
  mapfile -t FIXTURES < <(awk -F'\t' '!/^#/ && NF {print $1}' "$FIXDIR/expect.tsv")
fi

for fx in "${FIXTURES[@]}"; do
  fx=$(basename "$fx")
  path=$(awk -F'\t' -v f="$fx" '$1 == f {print $2}' "$FIXDIR/expect.tsv")
  [[ -n $path ]] || die "no expectations for $fx"
  size=$(stat -c %s "$FIXDIR/$fx")
  n=$N_SMALL; ((size < 100000)) || n=$N_LARGE
  python3 "$HERE/profile_client.py" --port "$PORT" --ca "$OUT_DIR/certs/ca.crt" --path "$path" \
    --body "$FIXDIR/$fx" --count "$n" --pid "$PID" --dump "$fx" ${FRESH:+--fresh} ${RESUME:+--resume}
  echo "$fx $n" >>"$OUT_DIR/counts.txt"
done
python3 "$HERE/profile_summary.py" "$OUT_DIR"
echo "callgrind dumps: $OUT_DIR"

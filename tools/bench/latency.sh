#!/usr/bin/env bash
# latency.sh — the webhook's latency at a fixed arrival rate, measured open-loop
# (issue 18; tools/bench/RESULTS.md "Open-loop latency").
#
#   tools/bench/latency.sh                 # the whole table: RATES × FIXTURES, each beside its floor
#
# Starts `wasd webhook` pinned to CPU $SERVER_CPU (one I/O thread: wasd runs one per CPU of
# its affinity mask) and, pinned to CPU $LOAD_CPU, runs build/wasd-openloop (tools/bench/openloop.cc)
# at each rate against each fixture: requests due at fixed times on $CONNS kept-alive TLS
# connections, latency from each request's DUE time to the last byte of its answer (queueing
# counted, no coordinated omission). Beside every figure it prints the generator's floor: the
# same body, at the same rate, on the same connections, POSTed to a path wasd answers with a
# 404 (TLS, HTTP, the wake-ups of both processes, and the generator itself; no JSON, no rules).
# "server CPU" is wasd's user+system time during the run (warm-up included) divided by its answers;
# "generator CPU" the same for wasd-openloop: at R req/s it must stay well below 1e6/R µs, and
# "send lag" (how late the generator sent, p99 of the worse of the two runs) near zero, or the
# figures are the generator's, not the server's.
#
# Environment (all optional):
#   WASD_BIN      the binary (default build/wasd)    OPENLOOP_BIN  default build/wasd-openloop
#   RATES         "2000 10000"                       FIXTURES  the 9 KB (valid, invalid) and 6 KB ones
#   DURATION      10s   WARMUP 2s   CONNS 32   SERVER_CPU 0   LOAD_CPU 1
# Needs taskset, python3. Loopback only; the server is stopped by its PID on exit.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
FIXDIR=$ROOT/tests/testdata/bench
WASD_BIN=${WASD_BIN:-$ROOT/build/wasd}
OPENLOOP_BIN=${OPENLOOP_BIN:-$ROOT/build/wasd-openloop}
RATES=${RATES:-"2000 10000"}
FIXTURES=${FIXTURES:-"deploy-create-gang-valid.json deploy-create-gang-invalid.json pod-create.json"}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}
CONNS=${CONNS:-32}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}

die() { echo "latency.sh: $*" >&2; exit 2; }
for tool in taskset python3; do command -v "$tool" >/dev/null 2>&1 || die "needs $tool"; done
[[ -x $WASD_BIN ]] || die "no wasd binary at $WASD_BIN (build it, or set WASD_BIN)"
[[ -x $OPENLOOP_BIN ]] || die "no wasd-openloop at $OPENLOOP_BIN (build target wasd-openloop, or set OPENLOOP_BIN)"

TMP=$(mktemp -d /tmp/wasd-latency.XXXXXX)
PID=
cleanup() {
  if [[ -n $PID ]] && kill -0 "$PID" 2>/dev/null; then
    kill -TERM "$PID" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$PID" 2>/dev/null || true
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT

"$WASD_BIN" certs generate --service wasd-webhook --namespace wasd-system --out-dir "$TMP/certs" \
  --extra-san 127.0.0.1 --extra-san localhost >/dev/null
PORT=$(PYTHONPATH="$ROOT/tests" python3 -c 'from lib.net import free_port; print(free_port())')
taskset -c "$SERVER_CPU" "$WASD_BIN" webhook --tls-cert-file "$TMP/certs/tls.crt" \
  --tls-key-file "$TMP/certs/tls.key" --bind-address 127.0.0.1 --port "$PORT" \
  --health-probe-bind-address 0 --metrics-bind-address 0 >"$TMP/server.log" 2>&1 &
PID=$!
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null && break
  kill -0 "$PID" 2>/dev/null || die "wasd webhook exited: $(tail -5 "$TMP/server.log")"
  sleep 0.1
done

# path of a fixture, from expect.tsv
path_of() { awk -F'\t' -v f="$1" '$1 == f {print $2}' "$FIXDIR/expect.tsv"; }
# user+system ticks of the server
cpu_ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }

# allowed of a fixture's answer, from expect.tsv
allowed_of() { awk -F'\t' -v f="$1" '$1 == f {print $3}' "$FIXDIR/expect.tsv"; }

# openloop PATH FIXTURE RATE EXPECT_STATUS [EXPECT_SUBSTRING] -> JSON on stdout
openloop() {
  taskset -c "$LOAD_CPU" "$OPENLOOP_BIN" --port "$PORT" --path "$1" --body "$FIXDIR/$2" \
    --cacert "$TMP/certs/ca.crt" --rate "$3" --duration "$DURATION" --warmup "$WARMUP" \
    --connections "$CONNS" --expect-status "$4" ${5:+--expect-substring "$5"} --json
}

echo "# wasd open-loop latency, $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "# $(nproc) CPUs ($(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# server: wasd webhook on CPU $SERVER_CPU; generator: wasd-openloop on CPU $LOAD_CPU, $CONNS connections, warm-up $WARMUP, measured $DURATION per cell"
echo "# latency in ms from each request's scheduled send time; floor = same body and rate POSTed to a 404 path"
echo
echo "| fixture | req/s offered | req/s answered | p50 | p90 | p99 | p99.9 | max | errors | floor p50 | floor p99 | floor p99.9 | floor max | send lag p99 | server CPU µs/req | generator CPU µs/req |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
HZ=$(getconf CLK_TCK)
status=0
for fixture in $FIXTURES; do
  path=$(path_of "$fixture")
  [[ -n $path ]] || die "no row for $fixture in $FIXDIR/expect.tsv"
  size=$((($(stat -c %s "$FIXDIR/$fixture") + 512) / 1024))
  for rate in $RATES; do
    floor=$(openloop /latency-floor-404 "$fixture" "$rate" 404) || status=1
    t0=$(cpu_ticks)
    # every answer must be the fixture's verdict, not just a 200
    real=$(openloop "$path" "$fixture" "$rate" 200 "\"allowed\":$(allowed_of "$fixture")") || status=1
    t1=$(cpu_ticks)
    python3 - "$fixture ($size KB)" "$rate" "$real" "$floor" "$t0" "$t1" "$HZ" <<'EOF'
import json, sys
name, rate, real, floor, t0, t1, hz = sys.argv[1:]
r, f = json.loads(real), json.loads(floor)
# CPU of the whole run (warm-up + measured) over the answers of the whole run
cpu_us = (int(t1) - int(t0)) / int(hz) * 1e6 / max(1, r["answeredTotal"])
ms = lambda v: f"{v:.2f}" if v < 10 else f"{v:.1f}"
print(f"| {name} | {int(rate):,} | {r['achievedRate']:,.0f} | {ms(r['p50Ms'])} | {ms(r['p90Ms'])} | "
      f"{ms(r['p99Ms'])} | {ms(r['p999Ms'])} | {ms(r['maxMs'])} | {r['errors']} | {ms(f['p50Ms'])} | "
      f"{ms(f['p99Ms'])} | {ms(f['p999Ms'])} | {ms(f['maxMs'])} | {ms(max(r['sendLagP99Ms'], f['sendLagP99Ms']))} | "
      f"{cpu_us:.0f} | {r['generatorCpuUsPerAnswer']:.0f} |")
EOF
  done
done
exit $status

#!/usr/bin/env bash
# The README's first command: installs what is missing, builds wasd, makes a
# CA and a serving certificate, starts `wasd webhook` on 127.0.0.1, and sends
# it real AdmissionReview requests built from examples/ — printing for each
# whether it was allowed or denied, and the denial message.
#
# Usage: scripts/demo.sh [--keep]   (--keep leaves the webhook running in the
# foreground after the demo; Ctrl-C stops it)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
keep=0
[ "${1:-}" = "--keep" ] && keep=1

"$root/scripts/setup.sh"
# The binary only: the tests are the second command's job.
WASD_BUILD_TARGET=wasd "$root/scripts/build.sh" "$root/build"
wasd="$root/build/wasd"

work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

port=${WASD_DEMO_PORT:-9443}
# Its log line goes to a file: the demo's output is the verdicts.
"$wasd" certs generate --service wasd-webhook --namespace wasd-system --out-dir "$work/certs" \
  --extra-san 127.0.0.1 --extra-san localhost >/dev/null 2>"$work/certs.log" ||
  { cat "$work/certs.log"; exit 1; }
"$wasd" webhook --tls-cert-file "$work/certs/tls.crt" --tls-key-file "$work/certs/tls.key" \
  --bind-address 127.0.0.1 --port "$port" \
  --health-probe-bind-address "127.0.0.1:$((port + 1))" \
  --metrics-bind-address "127.0.0.1:$((port + 2))" 2>"$work/webhook.log" &
pid=$!
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$((port + 1))/readyz" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/webhook.log"; exit 1; }
  sleep 0.1
done
echo "wasd webhook is listening on https://127.0.0.1:$port (pid $pid)"
echo

for f in "$root"/examples/*.yaml; do
  python3 "$root/scripts/make_review.py" "$f" >"$work/review.json"
  curl -s --cacert "$work/certs/ca.crt" -H 'Content-Type: application/json' \
    --data-binary @"$work/review.json" \
    "https://127.0.0.1:$port/validate-apps-v1-deployment?timeout=10s" >"$work/answer.json"
  python3 - "$f" "$work/answer.json" <<'PY'
import json, os, sys
name, answer = os.path.basename(sys.argv[1]), json.load(open(sys.argv[2]))
resp = answer["response"]
if resp["allowed"]:
    print(f"{name}: allowed")
    for w in resp.get("warnings", []):
        print(f"    Warning: {w}")
else:
    # What kubectl prints for this answer: with causes, "The <Kind> "<name>" is
    # invalid: " and the field errors (a "* " list when there are several).
    st = resp["status"]
    d = st.get("details") or {}
    causes = d.get("causes") or []
    if causes:
        errs = [f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes]
        text = f'The {d.get("kind", "Deployment")} "{d.get("name", "")}" is invalid: ' + (
            errs[0] if len(errs) == 1 else "\n" + "\n".join("* " + e for e in errs))
    else:
        text = st["message"]
    print(f"{name}: DENIED ({st['code']} {st['reason']})")
    for line in text.splitlines():
        print(f"    {line}")
PY
done
echo
echo "metrics: $(curl -s "http://127.0.0.1:$((port + 2))/metrics" | grep -c '^wasd_') wasd_* series at http://127.0.0.1:$((port + 2))/metrics"
if [ "$keep" = 1 ]; then
  echo "webhook keeps running; CA at $work/certs/ca.crt; Ctrl-C to stop"
  wait "$pid"
fi

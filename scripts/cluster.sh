#!/usr/bin/env bash
# The real control plane on loopback: etcd, kube-apiserver,
# kube-controller-manager and kube-scheduler v1.37.2 built from their Go
# modules (scripts/components.sh), and the node agent that stands in for the
# kubelet (tests/cluster/nodeagent). Every server listens on 127.0.0.1 only;
# every process's PID is in $WASD_CLUSTER_DIR/pids and `down` stops each by
# it (SIGTERM, then SIGKILL after a bound).
#
# Usage: scripts/cluster.sh up [--generic-workload=on|off] [--nodes N]
#        scripts/cluster.sh down | env | status
#   up      certificates and kubeconfigs (openssl), then the components in
#           order; waits (bounded) for /readyz, for scheduling.k8s.io/v1beta1
#           discovery when the gate is on, and for the Nodes.
#           --generic-workload=off: the GenericWorkload gate off on every
#           component and no runtime-config for scheduling.k8s.io/v1beta1.
#   down    stops every process, keeps the logs (rm -rf the dir to clean)
#   env     prints `export KUBECONFIG=...` and the bin dir on PATH
#   status  one line per process: running or not
# Environment:
#   WASD_CLUSTER_DIR  state: pki, kubeconfigs, pids, logs, etcd data
#                     (default /tmp/wasd-cluster)
#   WASD_BIN          the wasd binary the agent runs for the chart's image
#                     (default build/wasd)
#   WASD_BIN_FOR_TAG  TAG=PATH,...: another binary for the image of that tag
#                     (an older release's, for the upgrade tests)
#   WASD_IMAGE        image repository mapped to it (default: wasd.test/wasd,
#                     a name no registry serves; install the chart with
#                     --set image.repository=$WASD_IMAGE, cluster.env has it)
#   WASD_CACHE        see scripts/components.sh
#   WASD_CLUSTER_AUDIT=1  the API server writes an audit log of every write
#                     (create, update, patch, delete; level Metadata) to
#                     $WASD_CLUSTER_DIR/logs/audit.log (tools/bench/hold_real.py
#                     counts API writes from it)
#   WASD_SERVICE_CIDR the service CIDR (default 127.(96+S).0.0/16, S the slot
#                     of this cluster in /tmp/wasd-cluster-slots: one per
#                     cluster running at once on the machine)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${WASD_CLUSTER_DIR:-/tmp/wasd-cluster}
cmd=${1:-}
shift || true

log() { echo "cluster.sh: $*" >&2; }
die() { log "$*"; exit 1; }

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# stop NAME: SIGTERM, up to 10 s, then SIGKILL.
stop_one() {
  local f=$dir/pids/$1.pid pid i
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "$1 ($pid) did not stop in 10 s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
  fi
  rm -f "$f"
}

down() {
  [ -d "$dir/pids" ] || return 0
  # The agent first: it ends its pods' processes itself (SIGTERM, 5 s,
  # SIGKILL); then whatever pod process is left, by the PID it recorded.
  stop_one nodeagent
  local f
  for f in "$dir"/agent/pids/*; do
    [ -f "$f" ] || continue
    kill -KILL "$(cat "$f")" 2>/dev/null || true
    rm -f "$f"
  done
  stop_one kube-scheduler
  stop_one kube-controller-manager
  stop_one kube-apiserver
  stop_one etcd
  local sf
  for sf in /tmp/wasd-cluster-slots/[0-9]*; do
    [ -f "$sf" ] && [ "$(cat "$sf")" = "$dir" ] && rm -f "$sf"
  done
  return 0
}

status() {
  local n rc=0
  for n in etcd kube-apiserver kube-controller-manager kube-scheduler nodeagent; do
    if pid_alive "$dir/pids/$n.pid"; then
      echo "$n: running (pid $(cat "$dir/pids/$n.pid"))"
    else
      echo "$n: not running"
      rc=1
    fi
  done
  return $rc
}

print_env() {
  [ -f "$dir/cluster.env" ] || die "no cluster in $dir (scripts/cluster.sh up)"
  # shellcheck disable=SC1091
  . "$dir/cluster.env"
  echo "export KUBECONFIG=$dir/admin.kubeconfig"
  echo "export PATH=$BIN:\$PATH"
}

# ---- certificates --------------------------------------------------------
gen_certs() {
  local p=$dir/pki
  mkdir -p "$p"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$p/ca.key" -out "$p/ca.crt" -days 30 \
    -subj "/CN=wasd-cluster-ca" 2>/dev/null
  # name CN O EKU [SAN]
  issue() {
    local name=$1 subj=$2 eku=$3 san=${4:-}
    openssl req -newkey rsa:2048 -nodes -keyout "$p/$name.key" -out "$p/$name.csr" -subj "$subj" 2>/dev/null
    {
      echo "basicConstraints=CA:FALSE"
      echo "keyUsage=critical,digitalSignature,keyEncipherment"
      echo "extendedKeyUsage=$eku"
      [ -n "$san" ] && echo "subjectAltName=$san"
    } >"$p/$name.ext"
    openssl x509 -req -in "$p/$name.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial \
      -out "$p/$name.crt" -days 30 -extfile "$p/$name.ext" 2>/dev/null
    rm -f "$p/$name.csr" "$p/$name.ext"
  }
  issue apiserver "/CN=kube-apiserver" serverAuth \
    "IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
  issue admin "/O=system:masters/CN=admin" clientAuth
  issue kube-controller-manager "/CN=system:kube-controller-manager" clientAuth
  issue kube-scheduler "/CN=system:kube-scheduler" clientAuth
  issue scheduler-serving "/CN=kube-scheduler" serverAuth "IP:127.0.0.1,DNS:localhost"
  # the agent's /containerLogs endpoint, which the API server dials at the
  # Nodes' InternalIP 127.0.0.1 (never their names: no DNS lookup)
  issue kubelet-serving "/CN=wasd-nodeagent" serverAuth "IP:127.0.0.1"
  issue apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
  # the agent registers and updates several Nodes and makes tokens for any
  # service account: admin (a kubelet's system:node:<name> covers one Node)
  issue nodeagent "/O=system:masters/CN=wasd-nodeagent" clientAuth
  # the apiserver as a client of the webhooks it calls is anonymous; none
  openssl genrsa -out "$p/sa.key" 2048 2>/dev/null
  openssl rsa -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
  chmod 600 "$p"/*.key
}

kubeconfig() {  # NAME USER
  cat >"$dir/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: wasd
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $dir/pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $dir/pki/$2.crt
    client-key: $dir/pki/$2.key
contexts:
- name: wasd
  context: {cluster: wasd, user: $2}
current-context: wasd
EOF
}

start() {  # NAME BINARY ARGS...
  local name=$1
  shift
  "$@" >"$dir/logs/$name.log" 2>&1 &
  echo $! >"$dir/pids/$name.pid"
}

wait_for() {  # WHAT SECONDS NAME-TO-CHECK-ALIVE COMMAND...
  local what=$1 secs=$2 name=$3
  shift 3
  local deadline=$((SECONDS + secs))
  while [ $SECONDS -lt $deadline ]; do
    if "$@" >/dev/null 2>&1; then return 0; fi
    if [ -n "$name" ] && ! pid_alive "$dir/pids/$name.pid"; then
      log "$name exited; the end of $dir/logs/$name.log:"
      tail -n 30 "$dir/logs/$name.log" >&2
      return 1
    fi
    sleep 0.5
  done
  log "timed out after ${secs} s waiting for $what"
  [ -n "$name" ] && tail -n 30 "$dir/logs/$name.log" >&2
  return 1
}

up() {
  local gw=on nodes=${WASD_CLUSTER_NODES:-3}
  while [ $# -gt 0 ]; do
    case $1 in
      --generic-workload=on) gw=on; shift ;;
      --generic-workload=off) gw=off; shift ;;
      --nodes) nodes=$2; shift 2 ;;
      *) die "unknown argument $1" ;;
    esac
  done
  if [ -f "$dir/pids/kube-apiserver.pid" ] && pid_alive "$dir/pids/kube-apiserver.pid"; then
    die "a cluster is already running in $dir (scripts/cluster.sh down first)"
  fi
  local wasd=${WASD_BIN:-$root/build/wasd}
  [ -x "$wasd" ] || die "no wasd binary at $wasd (scripts/build.sh, or WASD_BIN)"
  wasd=$(cd "$(dirname "$wasd")" && pwd)/$(basename "$wasd")
  local image=${WASD_IMAGE:-wasd.test/wasd}
  local BIN
  BIN=$("$root/scripts/components.sh") || die "the components did not build"
  command -v openssl >/dev/null || die "openssl is not installed"
  down
  rm -rf "$dir"
  mkdir -p "$dir/pids" "$dir/logs" "$dir/etcd" "$dir/agent"
  # A slot per running cluster on this machine (two clones' test runs at
  # once): slot S gives the pods with processes 127.S.0.N and the service
  # CIDR 127.(96+S).0.0/16, the listening addresses that would collide.
  local slot="" s sf
  mkdir -p /tmp/wasd-cluster-slots
  exec 8>/tmp/wasd-cluster-slots/.lock
  flock -w 30 8 || die "cannot lock /tmp/wasd-cluster-slots"
  for s in $(seq 0 15); do
    sf=/tmp/wasd-cluster-slots/$s
    # Taken: another cluster's, and its API server runs or it claimed the
    # slot in the last 5 minutes (still starting: no pid file yet).
    if [ -f "$sf" ] && [ "$(cat "$sf")" != "$dir" ] && [ -d "$(cat "$sf")" ] &&
      { pid_alive "$(cat "$sf")/pids/kube-apiserver.pid" || [ -n "$(find "$sf" -mmin -5)" ]; }; then
      continue
    fi
    echo "$dir" >"$sf"
    slot=$s
    break
  done
  flock -u 8
  exec 8>&-
  [ -n "$slot" ] || die "no free cluster slot (16 clusters running?)"
  local ETCD_PORT ETCD_PEER API_PORT SCHED_PORT KUBELET_PORT
  ETCD_PORT=$(free_port); ETCD_PEER=$(free_port); API_PORT=$(free_port); SCHED_PORT=$(free_port)
  KUBELET_PORT=$(free_port)
  gen_certs
  kubeconfig admin admin
  kubeconfig kube-controller-manager kube-controller-manager
  kubeconfig kube-scheduler kube-scheduler
  kubeconfig nodeagent nodeagent
  local gate="GenericWorkload=$([ "$gw" = on ] && echo true || echo false)"
  cat >"$dir/cluster.env" <<EOF
BIN=$BIN
API_PORT=$API_PORT
ETCD_PORT=$ETCD_PORT
SCHED_PORT=$SCHED_PORT
KUBELET_PORT=$KUBELET_PORT
GENERIC_WORKLOAD=$gw
WASD_BIN=$wasd
WASD_IMAGE=$image
NODES=$nodes
SLOT=$slot
EOF
  local t0=$SECONDS
  start etcd "$BIN/etcd" --name wasd --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" \
    --initial-cluster "wasd=http://127.0.0.1:$ETCD_PEER" --unsafe-no-fsync --log-level warn \
    --listen-metrics-urls ""
  wait_for "etcd" 30 etcd curl -sf "http://127.0.0.1:$ETCD_PORT/health" || { down; exit 1; }

  local p=$dir/pki
  # Service routing: with --enable-aggregator-routing=true the API server
  # calls a webhook `service:` at an EndpointSlice address, but EndpointSlice
  # validation refuses the pods' loopback IPs ("may not be in the loopback
  # range"). So it stays false: the API server dials the ClusterIP (the
  # service CIDR is loopback too) and the node agent proxies it to a Ready pod,
  # as kube-proxy's old userspace mode did.
  local rc=()
  [ "$gw" = on ] && rc=(--runtime-config=scheduling.k8s.io/v1beta1=true)
  if [ "${WASD_CLUSTER_AUDIT:-0}" = 1 ]; then
    printf '%s\n' 'apiVersion: audit.k8s.io/v1' 'kind: Policy' 'omitStages: [RequestReceived]' 'rules:' \
      '- level: Metadata' '  verbs: [create, update, patch, delete, deletecollection]' '- level: None' \
      >"$dir/audit-policy.yaml"
    rc+=(--audit-policy-file "$dir/audit-policy.yaml" --audit-log-path "$dir/logs/audit.log")
  fi
  start kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" \
    --tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
    --client-ca-file "$p/ca.crt" \
    --authorization-mode Node,RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
    --service-cluster-ip-range "${WASD_SERVICE_CIDR:-127.$((96 + slot)).0.0/16}" \
    --endpoint-reconciler-type none \
    --enable-aggregator-routing=false \
    --disable-admission-plugins TaintNodesByCondition \
    --allow-privileged=true \
    --kubelet-preferred-address-types InternalIP --kubelet-certificate-authority "$p/ca.crt" \
    --kubelet-client-certificate "$p/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$p/apiserver-kubelet-client.key" \
    --feature-gates "$gate" "${rc[@]}" \
    --profiling=false
  wait_for "kube-apiserver /readyz" 90 kube-apiserver \
    curl -sf --cacert "$p/ca.crt" --cert "$p/admin.crt" --key "$p/admin.key" "https://127.0.0.1:$API_PORT/readyz" ||
    { down; exit 1; }
  if [ "$gw" = on ]; then
    wait_for "scheduling.k8s.io/v1beta1 discovery" 60 kube-apiserver \
      sh -c "curl -sf --cacert '$p/ca.crt' --cert '$p/admin.crt' --key '$p/admin.key' \
        https://127.0.0.1:$API_PORT/apis/scheduling.k8s.io/v1beta1 | grep -q '\"podgroups\"'" || { down; exit 1; }
  fi

  start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig "$dir/kube-controller-manager.kubeconfig" \
    --authentication-kubeconfig "$dir/kube-controller-manager.kubeconfig" \
    --authorization-kubeconfig "$dir/kube-controller-manager.kubeconfig" \
    --use-service-account-credentials=true \
    --leader-elect=false --secure-port 0 \
    --controllers "deployment-controller,replicaset-controller,job-controller,garbage-collector-controller,serviceaccount-controller,serviceaccount-token-controller,namespace-controller,endpointslice-controller,root-ca-certificate-publisher-controller$([ "$gw" = on ] && echo ,podgroup-protection-controller)" \
    --root-ca-file "$p/ca.crt" --service-account-private-key-file "$p/sa.key" \
    --feature-gates "$gate" --concurrent-deployment-syncs 5 --concurrent-replicaset-syncs 5 \
    --kube-api-qps 100 --kube-api-burst 200
  start kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig "$dir/kube-scheduler.kubeconfig" \
    --authentication-kubeconfig "$dir/kube-scheduler.kubeconfig" \
    --authorization-kubeconfig "$dir/kube-scheduler.kubeconfig" \
    --leader-elect=false --bind-address 127.0.0.1 --secure-port "$SCHED_PORT" \
    --tls-cert-file "$p/scheduler-serving.crt" --tls-private-key-file "$p/scheduler-serving.key" \
    --feature-gates "$gate"
  start nodeagent "$BIN/nodeagent" --kubeconfig "$dir/nodeagent.kubeconfig" --nodes "$nodes" \
    --wasd-image "$image" --wasd-binary "$wasd" --wasd-binary-for-tag "${WASD_BIN_FOR_TAG:-}" --state-dir "$dir/agent" \
    --kubelet-address "127.0.0.1:$KUBELET_PORT" \
    --process-ip-prefix "127.$slot.0." --idle-ip-prefix "127.$((64 + slot))." \
    --tls-cert-file "$p/kubelet-serving.crt" --tls-key-file "$p/kubelet-serving.key"
  local kc=(env KUBECONFIG="$dir/admin.kubeconfig" "$BIN/kubectl")
  wait_for "$nodes Ready nodes" 60 nodeagent \
    sh -c "[ \$(KUBECONFIG='$dir/admin.kubeconfig' '$BIN/kubectl' get nodes --no-headers 2>/dev/null | grep -c ' Ready ') -ge $nodes ]" ||
    { down; exit 1; }
  wait_for "the default ServiceAccount" 60 kube-controller-manager \
    "${kc[@]}" get serviceaccount default -n default || { down; exit 1; }
  wait_for "kube-root-ca.crt" 60 kube-controller-manager \
    "${kc[@]}" get configmap kube-root-ca.crt -n default || { down; exit 1; }
  wait_for "kube-scheduler /healthz" 60 kube-scheduler \
    curl -sf --cacert "$p/ca.crt" "https://127.0.0.1:$SCHED_PORT/healthz" || { down; exit 1; }
  local n
  for n in etcd kube-apiserver kube-controller-manager kube-scheduler nodeagent; do
    pid_alive "$dir/pids/$n.pid" || { log "$n is not running"; tail -n 30 "$dir/logs/$n.log" >&2; down; exit 1; }
  done
  log "up in $((SECONDS - t0)) s: API server https://127.0.0.1:$API_PORT, GenericWorkload $gw, $nodes nodes; state in $dir"
}

case $cmd in
  up) up "$@" ;;
  down) down ;;
  env) print_env ;;
  status) status ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; [ "$cmd" = -h ] || [ "$cmd" = --help ] || exit 2 ;;
esac

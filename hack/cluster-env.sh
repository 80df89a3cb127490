# shellcheck shell=bash
# Variables defined here are used by the scripts that source this file.
# shellcheck disable=SC2034
# Shared settings and helpers of hack/cluster-up.sh and hack/cluster-down.sh.
# Sourced, not executed. Every setting can be overridden from the environment.
#
# Network layout (all of it exists only on this machine):
#   NODE_IP       10.245.255.1/32, added to `lo`: the node's InternalIP, the
#                 API server's bind/advertise address and kubelet's address.
#                 Pods reach it through the bridge gateway; nothing else can.
#   POD_CIDR      10.244.0.0/24 on the CNI bridge sbbr0 (gateway .1), host-local IPAM
#   SERVICE_CIDR  10.96.0.0/16; kubernetes=10.96.0.1, kube-dns=10.96.0.10
# A guard in the mangle table drops any packet of these ranges that would
# leave through another interface (e.g. eth0), so neither pods nor a host
# process talking to a not-yet-programmed Service IP can send anything off the
# machine; CoreDNS has no `forward` (names outside the cluster get NXDOMAIN)
# and containerd gets a loopback proxy so an image pull cannot go out either.

CLUSTER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KUBE_VERSION="${KUBE_VERSION:-v1.33.4}"
export KUBE_VERSION
# bin/ may be a symlink (worktrees share one tool directory). The kernel
# reports a process's executable (/proc/PID/exe) and its mounts
# (mountinfo) by physical path, so the components are started, recorded
# and cleaned up by the physical path too: else pid_of never recognises a
# kube-apiserver it started, and cluster-down leaves the kubelet's mounts.
CLUSTER_BIN="$(cd "${CLUSTER_ROOT}/bin" 2>/dev/null && pwd -P || echo "${CLUSTER_ROOT}/bin")"
K8S_BIN="${CLUSTER_BIN}/k8s/${KUBE_VERSION}"

CLUSTER_DIR="${CLUSTER_DIR:-${CLUSTER_BIN}/cluster}"
STATE_DIR="${CLUSTER_DIR}/state"        # configs, etcd data, containerd root, kubelet root
PID_DIR="${CLUSTER_DIR}/pids"           # <component>.pid: "PID EXECUTABLE"
LOG_DIR="${CLUSTER_DIR}/logs"
PKI_DIR="${CLUSTER_DIR}/pki"            # kept across restarts (kubeconfig stays valid)
PRESTATE="${CLUSTER_DIR}/prestate.env"  # what the host looked like before the first start
KUBECONFIG_OUT="${CLUSTER_DIR}/kubeconfig"
IMAGES_DIR="${CLUSTER_ROOT}/bin/images"
TOOLS_DIR="${CLUSTER_ROOT}/bin/tools"
# Sockets and containerd's runtime state live on tmpfs with short paths (unix
# socket paths are limited to 108 bytes; a deep checkout would exceed it).
RUN_DIR="${CLUSTER_RUN_DIR:-/run/spanbench-cluster}"
CONTAINERD_SOCK="${RUN_DIR}/containerd.sock"
KUBELET_ROOT="${STATE_DIR}/kubelet"
CA_CRT="${PKI_DIR}/ca.crt"

NODE_NAME="${CLUSTER_NODE_NAME:-spanbench-node}"
NODE_IP="${CLUSTER_NODE_IP:-10.245.255.1}"
POD_CIDR="${CLUSTER_POD_CIDR:-10.244.0.0/24}"   # must be a.b.c.0/NN: the gateway is a.b.c.1
POD_GW="${POD_CIDR%.*}.1"
SERVICE_CIDR="${CLUSTER_SERVICE_CIDR:-10.96.0.0/16}"
API_SERVICE_IP="${CLUSTER_API_SERVICE_IP:-10.96.0.1}"
DNS_SERVICE_IP="${CLUSTER_DNS_SERVICE_IP:-10.96.0.10}"
CLUSTER_DOMAIN=cluster.local
BRIDGE=sbbr0
API_PORT=6443
ETCD_CLIENT_PORT=12379   # not 2379: leave the default free for anything else
ETCD_PEER_PORT=12380
GUARD_IN=SPANBENCH-GUARD-IN
GUARD_OUT=SPANBENCH-GUARD-OUT

PAUSE_IMAGE="localhost/spanbench/pause:3.10-sb"
COREDNS_VERSION="${COREDNS_VERSION:-v1.12.0}"   # the CoreDNS release Kubernetes 1.33 ships
COREDNS_IMAGE="localhost/spanbench/coredns:${COREDNS_VERSION}"

# Start order; cluster-down stops them in reverse.
COMPONENTS=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler kube-proxy kubelet)

log() { printf '[%s] %s\n' "${LOG_TAG:-cluster}" "$*" >&2; }
warn() { printf '[%s] WARNING: %s\n' "${LOG_TAG:-cluster}" "$*" >&2; }
die() { printf '[%s] ERROR: %s\n' "${LOG_TAG:-cluster}" "$*" >&2; exit 1; }

require_root() {
  [[ ${EUID} -eq 0 ]] || die "must run as root (it runs containerd, kubelet, and changes iptables, routes and mounts)"
}

# pid_of NAME: print the recorded PID if that process is still the one we
# started (same executable), else nothing. Guards against PID reuse.
pid_of() {
  local f="${PID_DIR}/$1.pid" pid exe
  [[ -f "${f}" ]] || return 0
  read -r pid exe < "${f}" || return 0
  [[ "${pid}" =~ ^[0-9]+$ ]] || return 0
  if [[ -e "/proc/${pid}" && "$(readlink "/proc/${pid}/exe" 2>/dev/null)" == "${exe}" ]]; then
    echo "${pid}"
  fi
}

# stop_pid PID TIMEOUT_S: SIGTERM, wait, then SIGKILL. Only ever a known PID.
stop_pid() {
  local pid="$1" timeout="$2" i
  kill -TERM "${pid}" 2>/dev/null || return 0
  for ((i = 0; i < timeout * 10; i++)); do
    [[ -e "/proc/${pid}" ]] || return 0
    # A zombie whose parent is gone counts as stopped for our purposes.
    [[ "$(awk '{print $3}' "/proc/${pid}/stat" 2>/dev/null)" == Z ]] && return 0
    sleep 0.1
  done
  warn "PID ${pid} ignored SIGTERM for ${timeout}s; sending SIGKILL"
  kill -KILL "${pid}" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    [[ -e "/proc/${pid}" ]] || return 0
    sleep 0.1
  done
  warn "PID ${pid} still exists after SIGKILL"
}

# node_ip_on_lo: whether NODE_IP is already an address of lo. (No `grep -q`
# in pipelines: its early exit fails the pipeline under pipefail.)
node_ip_on_lo() {
  [[ "$(ip -4 -o addr show dev lo)" == *" ${NODE_IP}/"* ]]
}

ctr_k8s() { ctr --address "${CONTAINERD_SOCK}" -n k8s.io "$@"; }

# Mount points at or below DIR, deepest first (for unmounting).
mounts_under() {
  local dir="$1"
  # mountinfo field 5 is the mount point; octal escapes (\040) are left as is,
  # none of our paths contain spaces.
  awk -v d="${dir}" '$5 == d || index($5, d "/") == 1 {print $5}' /proc/self/mountinfo | sort -r -u
}

# start NAME EXECUTABLE [ARG...]: detached in its own session (so it outlives
# this shell and its process group), PID and executable recorded.
# START_ENV: extra VAR=value for the process. `env` and `setsid` both exec
# (setsid does not fork: a background job of a non-interactive shell is no
# process-group leader), so $! is the component's own PID.
START_ENV=()
start() {
  local name="$1" exe="$2"; shift 2
  [[ -x "${exe}" ]] || die "${name}: ${exe} not found or not executable"
  log "starting ${name}"
  env "${START_ENV[@]+"${START_ENV[@]}"}" setsid "${exe}" "$@" > "${LOG_DIR}/${name}.log" 2>&1 < /dev/null &
  local pid=$! i
  echo "${pid} ${exe}" > "${PID_DIR}/${name}.pid"
  # Until env and setsid have exec'd the component, /proc/PID/exe is
  # theirs and pid_of takes the component for dead: on a busy host a
  # cluster-up once gave up on an etcd that was starting ("etcd exited
  # while waiting for etcd health"). Wait for the exec (or the exit).
  for ((i = 0; i < 100; i++)); do
    [[ -e "/proc/${pid}" && "$(readlink "/proc/${pid}/exe" 2>/dev/null)" != "${exe}" ]] || return 0
    sleep 0.05
  done
}

# start_apiserver starts kube-apiserver: the one command line of
# cluster-up.sh and of a restart (cluster-restart.sh).
start_apiserver() {
  start kube-apiserver "${K8S_BIN}/kube-apiserver" \
    --advertise-address="${NODE_IP}" --bind-address="${NODE_IP}" --secure-port="${API_PORT}" \
    --etcd-servers="http://127.0.0.1:${ETCD_CLIENT_PORT}" \
    --service-cluster-ip-range="${SERVICE_CIDR}" \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --allow-privileged=true \
    --client-ca-file="${CA_CRT}" \
    --tls-cert-file="${PKI_DIR}/apiserver.crt" --tls-private-key-file="${PKI_DIR}/apiserver.key" \
    --kubelet-client-certificate="${PKI_DIR}/apiserver-kubelet-client.crt" \
    --kubelet-client-key="${PKI_DIR}/apiserver-kubelet-client.key" \
    --kubelet-certificate-authority="${CA_CRT}" \
    --kubelet-preferred-address-types=InternalIP \
    --service-account-issuer="https://kubernetes.default.svc.${CLUSTER_DOMAIN}" \
    --service-account-key-file="${PKI_DIR}/sa.pub" \
    --service-account-signing-key-file="${PKI_DIR}/sa.key" \
    --profiling=false
}

# apiserver_ready: kube-apiserver answers /readyz to the admin certificate.
apiserver_ready() {
  curl -fsS --cacert "${CA_CRT}" --cert "${PKI_DIR}/admin.crt" --key "${PKI_DIR}/admin.key" \
    "https://${NODE_IP}:${API_PORT}/readyz"
}

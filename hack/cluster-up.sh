#!/usr/bin/env bash
# Start a real single-node Kubernetes cluster on this machine, without Docker,
# a registry or any network access beyond the Go module proxy and Debian.
#
# Usage: hack/cluster-up.sh          (as root)
#        export KUBECONFIG=$PWD/bin/cluster/kubeconfig
#        hack/cluster-down.sh        to stop it and clean up
#
# What runs, all on the host, each started by this script with its PID
# recorded in bin/cluster/pids/ (cluster-down stops exactly those):
#   containerd (Debian)       own config, root under bin/cluster/state, socket
#                             /run/spanbench-cluster/containerd.sock
#   etcd (Debian)             127.0.0.1:12379, data in bin/cluster/state/etcd
#   kube-apiserver            10.245.255.1:6443, RBAC + Node authorization
#   kube-controller-manager, kube-scheduler   loopback only
#   kubelet                   cgroupfs, image GC off, root bin/cluster/state/kubelet
#   kube-proxy                iptables mode
# CoreDNS runs as a pod (Deployment kube-system/coredns, Service kube-dns at
# 10.96.0.10) from an image built here with `go install` from the module proxy,
# so DNS is exercised through the same pod network and Service path as a
# workload's. The pod sandbox image is built from hack/pause.
# Kubernetes binaries: hack/kube-binaries.sh (cached in bin/k8s/<version>).
# Network layout and the guard that keeps all traffic on the machine: see
# hack/cluster-env.sh.
#
# Idempotent: when the cluster already runs it says so and exits 0; when only
# part of it runs it cleans that up (hack/cluster-down.sh) and starts afresh.
# Waits at most CLUSTER_WAIT_SECONDS (default 120) for the node to be Ready and
# CoreDNS to answer. Logs: bin/cluster/logs/<component>.log.
#
# Images for workloads: hack/image.sh NAME TAG DIR --import (exact tags,
# imagePullPolicy: IfNotPresent or Never).
set -euo pipefail
LOG_TAG=cluster-up
# shellcheck source=cluster-env.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/cluster-env.sh"
HACK="${CLUSTER_ROOT}/hack"
WAIT_SECONDS="${CLUSTER_WAIT_SECONDS:-120}"
T0=${SECONDS}

require_root

# ---------------------------------------------------------------- already up?
running=() dead=()
for c in "${COMPONENTS[@]}"; do
  if [[ -n "$(pid_of "${c}")" ]]; then running+=("${c}"); else dead+=("${c}"); fi
done
if [[ ${#dead[@]} -eq 0 ]]; then
  log "cluster already running (${COMPONENTS[*]}); KUBECONFIG=${KUBECONFIG_OUT}"
  exit 0
fi
if [[ ${#running[@]} -gt 0 || -f "${PRESTATE}" ]]; then
  log "cluster partially running or not cleaned up (running: ${running[*]:-none}; stopped: ${dead[*]}); cleaning up first"
  "${HACK}/cluster-down.sh"
fi

# ---------------------------------------------------------------- dependencies
need_pkgs=false
for tool in containerd ctr runc etcd iptables ip6tables iptables-save conntrack ip openssl jq curl dig mount nsenter; do
  command -v "${tool}" >/dev/null 2>&1 || need_pkgs=true
done
[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] || need_pkgs=true
if "${need_pkgs}"; then
  log "installing missing Debian packages"
  "${HACK}/install-deps.sh" cluster
fi
for tool in containerd ctr runc etcd iptables conntrack ip openssl jq curl dig; do
  command -v "${tool}" >/dev/null 2>&1 || die "'${tool}' is still missing after hack/install-deps.sh cluster"
done
# kubectl: the version-matched one if built, else the system's, else build it.
KUBECTL="${K8S_BIN}/kubectl"
[[ -x "${KUBECTL}" ]] || KUBECTL="$(command -v kubectl || true)"

# Kubernetes binaries (cached; the first build takes minutes).
"${HACK}/kube-binaries.sh" all
if [[ -z "${KUBECTL}" ]]; then
  "${HACK}/kube-binaries.sh" kubectl
  KUBECTL="${K8S_BIN}/kubectl"
fi

# Go programs for the two images every cluster needs (cached by path).
build_go() { # build_go OUT_BINARY (runs go build / go install with the rest)
  local out="$1"; shift
  [[ -x "${out}" ]] && return 0
  log "building $(basename "${out}")"
  "$@" || die "building ${out} failed"
}
PAUSE_BIN="${TOOLS_DIR}/pause/pause"
build_go "${PAUSE_BIN}" bash -c "cd '${HACK}/pause' && GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o '${PAUSE_BIN}' ."
COREDNS_BIN="${TOOLS_DIR}/coredns-${COREDNS_VERSION}/coredns"
# go install pkg@version builds CoreDNS exactly as released (no replace lines).
build_go "${COREDNS_BIN}" env GOWORK=off GOFLAGS=-buildvcs=false CGO_ENABLED=0 GOBIN="$(dirname "${COREDNS_BIN}")" \
  go install -trimpath -ldflags '-s -w' "github.com/coredns/coredns@${COREDNS_VERSION}"

image_archive() { # image_archive NAME TAG BINARY -> archive path (built if missing/stale)
  local name="$1" tag="$2" bin="$3" out
  out="${IMAGES_DIR}/${name//\//_}-${tag}.oci.tar"
  if [[ ! -f "${out}" || "${bin}" -nt "${out}" ]]; then
    local dir
    dir="$(mktemp -d)"
    cp "${bin}" "${dir}/"
    "${HACK}/image.sh" --out "${out}" "${name}" "${tag}" "${dir}" >/dev/null
    rm -rf "${dir}"
  fi
  echo "${out}"
}
PAUSE_TAR="$(image_archive "${PAUSE_IMAGE%:*}" "${PAUSE_IMAGE##*:}" "${PAUSE_BIN}")"
COREDNS_TAR="$(image_archive "${COREDNS_IMAGE%:*}" "${COREDNS_IMAGE##*:}" "${COREDNS_BIN}")"

# ---------------------------------------------------------------- host state
mkdir -p "${STATE_DIR}" "${PID_DIR}" "${LOG_DIR}" "${PKI_DIR}" "${RUN_DIR}"
rm -f "${PID_DIR}"/*.pid

# Remember what existed before, so cluster-down removes only what we add.
existed() { [[ -e "$1" ]] && echo 1 || echo 0; }
chains_snapshot() {
  local cmd t
  for cmd in iptables ip6tables; do
    for t in filter nat mangle raw; do
      "${cmd}-save" -t "${t}" 2>/dev/null | awk -v c="${cmd}" -v t="${t}" '/^:(KUBE-|SPANBENCH-)/ {print c, t, substr($1, 2)}'
    done
  done | tr '\n' ';'
}
{
  echo "PRE_IP_FORWARD=$(cat /proc/sys/net/ipv4/ip_forward)"
  echo "PRE_BR_NF_CALL_IPTABLES=$(cat /proc/sys/net/bridge/bridge-nf-call-iptables 2>/dev/null || echo unset)"
  echo "PRE_NODE_IP_ON_LO=$(node_ip_on_lo && echo 1 || echo 0)"
  echo "PRE_BRIDGE=$(ip link show "${BRIDGE}" >/dev/null 2>&1 && echo 1 || echo 0)"
  echo "PRE_VAR_LIB_KUBELET=$(existed /var/lib/kubelet)"
  echo "PRE_VAR_LOG_PODS=$(existed /var/log/pods)"
  echo "PRE_VAR_LOG_CONTAINERS=$(existed /var/log/containers)"
  echo "PRE_VAR_LIB_CNI=$(existed /var/lib/cni)"
  echo "PRE_RUN_CONTAINERD=$(existed /run/containerd)"
  echo "PRE_RUN_NETNS=$(existed /run/netns)"
  echo "PRE_NETNS='$(find /run/netns -mindepth 1 -maxdepth 1 -printf '%f ' 2>/dev/null)'"
  echo "PRE_CHAINS='$(chains_snapshot)'"
} > "${PRESTATE}.tmp"
mv "${PRESTATE}.tmp" "${PRESTATE}"

# If anything below fails (or we are interrupted), leave nothing half-started
# behind: an EXIT trap, because die() exits and ERR traps miss functions.
STARTED_OK=false
on_exit() {
  local rc=$?
  "${STARTED_OK}" && return 0
  trap - EXIT INT TERM
  warn "start failed (exit ${rc}); logs in ${LOG_DIR}; tearing down what was started"
  "${HACK}/cluster-down.sh" || true
  exit "${rc}"
}
trap on_exit EXIT
trap 'exit 130' INT TERM

# Kernel settings the pod network needs: routing between the bridge and the
# node address, and bridged traffic through iptables (kube-proxy's Service
# NAT). br_netfilter is built into this kind of kernel (no modules dir); try
# modprobe elsewhere.
if [[ ! -e /proc/sys/net/bridge/bridge-nf-call-iptables ]]; then
  modprobe br_netfilter 2>/dev/null || die "br_netfilter is not available (modprobe br_netfilter failed); kube-proxy Service NAT needs it"
fi
sysctl -q -w net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1

# Node address on lo: local-only, reachable from pods via the bridge gateway.
node_ip_on_lo || ip addr add "${NODE_IP}/32" dev lo

# Guard: nothing of the cluster's address ranges may leave the machine.
# mangle PREROUTING/POSTROUTING run before kube-proxy's nat/filter rules
# see the packet (POSTROUTING: after its DNAT), and kube-proxy never touches them.
setup_guard() {
  local t=mangle
  iptables -t "${t}" -N "${GUARD_OUT}" 2>/dev/null || iptables -t "${t}" -F "${GUARD_OUT}"
  iptables -t "${t}" -N "${GUARD_IN}" 2>/dev/null || iptables -t "${t}" -F "${GUARD_IN}"
  # Leaving the host: the cluster's addresses only through the bridge or lo.
  # (A Service IP is translated by then, so one still seen leaving through
  # another interface has no endpoint: drop rather than route it out.)
  iptables -t "${t}" -A "${GUARD_OUT}" -o "${BRIDGE}" -j RETURN
  iptables -t "${t}" -A "${GUARD_OUT}" -o lo -j RETURN
  local net
  for net in "${POD_CIDR}" "${SERVICE_CIDR}" "${NODE_IP}/32"; do
    iptables -t "${t}" -A "${GUARD_OUT}" -d "${net}" -j DROP
    iptables -t "${t}" -A "${GUARD_OUT}" -s "${net}" -j DROP
  done
  # Entering the host: the cluster's addresses only from the bridge or lo.
  iptables -t "${t}" -A "${GUARD_IN}" -i "${BRIDGE}" -j RETURN
  iptables -t "${t}" -A "${GUARD_IN}" -i lo -j RETURN
  for net in "${POD_CIDR}" "${SERVICE_CIDR}" "${NODE_IP}/32"; do
    iptables -t "${t}" -A "${GUARD_IN}" -d "${net}" -j DROP
    iptables -t "${t}" -A "${GUARD_IN}" -s "${net}" -j DROP
  done
  iptables -t "${t}" -C POSTROUTING -j "${GUARD_OUT}" 2>/dev/null || iptables -t "${t}" -I POSTROUTING 1 -j "${GUARD_OUT}"
  iptables -t "${t}" -C PREROUTING -j "${GUARD_IN}" 2>/dev/null || iptables -t "${t}" -I PREROUTING 1 -j "${GUARD_IN}"
}
setup_guard

# ---------------------------------------------------------------- PKI
# One CA signs everything; certificates are kept across restarts so the
# kubeconfig stays valid. openssl only.
CA_KEY="${PKI_DIR}/ca.key"   # CA_CRT: cluster-env.sh
if [[ ! -f "${CA_CRT}" ]]; then
  log "generating CA and service-account keys"
  openssl req -x509 -new -newkey rsa:2048 -nodes -keyout "${CA_KEY}" -out "${CA_CRT}" \
    -days 3650 -subj "/CN=spanbench-local-ca" 2>/dev/null
fi
if [[ ! -f "${PKI_DIR}/sa.key" ]]; then
  openssl genrsa -out "${PKI_DIR}/sa.key" 2048 2>/dev/null
  openssl rsa -in "${PKI_DIR}/sa.key" -pubout -out "${PKI_DIR}/sa.pub" 2>/dev/null
fi
# issue NAME SUBJECT EXT(serverAuth|clientAuth|both) [SAN]
issue() {
  local name="$1" subj="$2" usage="$3" san="${4:-}"
  local crt="${PKI_DIR}/${name}.crt" key="${PKI_DIR}/${name}.key"
  # Reissue when the SANs changed (e.g. another NODE_IP) - recorded beside it.
  if [[ -f "${crt}" && "$(cat "${PKI_DIR}/${name}.san" 2>/dev/null)" == "${san}" ]]; then
    return 0
  fi
  local ext="${PKI_DIR}/${name}.ext" eku
  case "${usage}" in
    server) eku=serverAuth ;;
    client) eku=clientAuth ;;
    *) eku="serverAuth,clientAuth" ;;
  esac
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=${eku}"
    if [[ -n "${san}" ]]; then echo "subjectAltName=${san}"; fi
  } > "${ext}"
  openssl req -new -newkey rsa:2048 -nodes -keyout "${key}" -out "${PKI_DIR}/${name}.csr" -subj "${subj}" 2>/dev/null
  openssl x509 -req -in "${PKI_DIR}/${name}.csr" -CA "${CA_CRT}" -CAkey "${CA_KEY}" -CAcreateserial \
    -days 3650 -extfile "${ext}" -out "${crt}" 2>/dev/null
  rm -f "${PKI_DIR}/${name}.csr" "${ext}"
  echo "${san}" > "${PKI_DIR}/${name}.san"
}
issue apiserver "/CN=kube-apiserver" server \
  "IP:${NODE_IP},IP:127.0.0.1,IP:${API_SERVICE_IP},DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.${CLUSTER_DOMAIN}"
issue apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" client
issue admin "/O=system:masters/CN=kubernetes-admin" client
issue controller-manager "/CN=system:kube-controller-manager" client
issue scheduler "/CN=system:kube-scheduler" client
issue kube-proxy "/CN=system:kube-proxy" client
issue kubelet-client "/O=system:nodes/CN=system:node:${NODE_NAME}" client
issue kubelet "/CN=${NODE_NAME}" server "IP:${NODE_IP},DNS:${NODE_NAME}"
chmod 600 "${PKI_DIR}"/*.key

# write_kubeconfig FILE CERT_NAME
write_kubeconfig() {
  local file="$1" cert="$2"
  cat > "${file}" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: spanbench-local
  cluster:
    server: https://${NODE_IP}:${API_PORT}
    certificate-authority-data: $(base64 -w0 < "${CA_CRT}")
users:
- name: ${cert}
  user:
    client-certificate-data: $(base64 -w0 < "${PKI_DIR}/${cert}.crt")
    client-key-data: $(base64 -w0 < "${PKI_DIR}/${cert}.key")
contexts:
- name: spanbench-local
  context:
    cluster: spanbench-local
    user: ${cert}
current-context: spanbench-local
EOF
  chmod 600 "${file}"
}
write_kubeconfig "${KUBECONFIG_OUT}" admin
for c in controller-manager scheduler kube-proxy kubelet-client; do
  write_kubeconfig "${STATE_DIR}/${c}.kubeconfig" "${c}"
done

# ---------------------------------------------------------------- configs
mkdir -p "${STATE_DIR}/cni/net.d" "${STATE_DIR}/containerd" "${KUBELET_ROOT}"
# host-local keeps its leases in our own dir, wiped by cluster-down.
cat > "${STATE_DIR}/cni/net.d/10-spanbench.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "spanbench",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "${BRIDGE}",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "${POD_CIDR}", "gateway": "${POD_GW}"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "${STATE_DIR}/cni/ipam"
      }
    }
  ]
}
EOF

cat > "${STATE_DIR}/containerd/config.toml" <<EOF
# Generated by hack/cluster-up.sh
version = 2
root = "${STATE_DIR}/containerd/root"
state = "${RUN_DIR}/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = "${CONTAINERD_SOCK}"
[ttrpc]
  address = "${CONTAINERD_SOCK}.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "${STATE_DIR}/containerd/opt"

[plugins."io.containerd.grpc.v1.cri"]
  # No registry is reachable: the sandbox image is built locally (hack/pause).
  sandbox_image = "${PAUSE_IMAGE}"
  # Root here lacks CAP_SYS_RESOURCE; without this runc fails every sandbox
  # with "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  # Non-root containers may bind ports < 1024 (CoreDNS on 53), as in containerd 2.
  enable_unprivileged_ports = true
  enable_unprivileged_icmp = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        # cgroup v1 with the cgroupfs driver (no systemd here).
        SystemdCgroup = false
        BinaryName = "$(command -v runc)"
        Root = "${RUN_DIR}/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${STATE_DIR}/cni/net.d"
    max_conf_num = 1
EOF

cat > "${STATE_DIR}/kubelet-config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${NODE_IP}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: ${PKI_DIR}/kubelet.crt
tlsPrivateKeyFile: ${PKI_DIR}/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: ${CA_CRT}}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://${CONTAINERD_SOCK}
# cgroup v1 + cgroupfs; swap may be present; v1 is deprecated but works.
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
clusterDNS: [${DNS_SERVICE_IP}]
clusterDomain: ${CLUSTER_DOMAIN}
# No host resolv.conf for pods: dnsPolicy Default must not reach the host's
# upstream resolver (nothing may leave the machine).
resolvConf: ""
# Images cannot be re-pulled here: never garbage-collect them.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: "1%"
  imagefs.available: "1%"
  nodefs.inodesFree: "1%"
rotateCertificates: false
serverTLSBootstrap: false
registerNode: true
maxPods: 110
# A crashed container restarts after at most 1 s instead of a backoff that
# starts at 10 s and doubles up to 5 min: the e2e fault tests kill and
# restart the manager on purpose, one after another (its second restart
# waited 10 s, the third 20 s), and a demo's manager that crashed should be
# back at once. Alpha in v1.33, so it is enabled here by name.
featureGates:
  KubeletCrashLoopBackOffMax: true
crashLoopBackOff:
  maxContainerRestartPeriod: 1s
EOF

cat > "${STATE_DIR}/kube-proxy-config.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: ${STATE_DIR}/kube-proxy.kubeconfig
hostnameOverride: ${NODE_NAME}
mode: iptables
clusterCIDR: ${POD_CIDR}
# Also kube-proxy's idea of the node's primary IP.
bindAddress: ${NODE_IP}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# NodePorts only on the node address, never on the machine's real interfaces.
nodePortAddresses: ["${NODE_IP}/32"]
iptables:
  localhostNodePorts: false
# 0 = leave the host's conntrack sysctls alone.
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF

# ---------------------------------------------------------------- start
# start (cluster-env.sh) runs each component detached, its PID recorded.
# wait_for NAME DESCRIPTION CMD...: poll CMD until it succeeds or the deadline;
# fail at once if the component died.
DEADLINE=$((SECONDS + WAIT_SECONDS))
wait_for() {
  local name="$1" what="$2"; shift 2
  until "$@" >/dev/null 2>&1; do
    if [[ -n "${name}" && -z "$(pid_of "${name}")" ]]; then
      tail -n 30 "${LOG_DIR}/${name}.log" >&2 || true
      die "${name} exited while waiting for ${what} (log: ${LOG_DIR}/${name}.log)"
    fi
    if ((SECONDS > DEADLINE)); then
      [[ -n "${name}" ]] && { tail -n 30 "${LOG_DIR}/${name}.log" >&2 || true; }
      die "timed out after ${WAIT_SECONDS}s waiting for ${what}"
    fi
    sleep 0.5
  done
  # A success answered by someone else (e.g. a foreign process on our port)
  # while ours died does not count.
  if [[ -n "${name}" && -z "$(pid_of "${name}")" ]]; then
    tail -n 30 "${LOG_DIR}/${name}.log" >&2 || true
    die "${name} is not running (log: ${LOG_DIR}/${name}.log)"
  fi
}

# containerd; the proxy variables point at a closed loopback port so that any
# image pull fails at once instead of reaching for a registry off the machine.
mkdir -p "${RUN_DIR}"
START_ENV=(HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 http_proxy=http://127.0.0.1:9 https_proxy=http://127.0.0.1:9 NO_PROXY= no_proxy=)
start containerd "$(command -v containerd)" --config "${STATE_DIR}/containerd/config.toml"
START_ENV=()
wait_for containerd "containerd socket" ctr --address "${CONTAINERD_SOCK}" version
log "importing images ${PAUSE_IMAGE} ${COREDNS_IMAGE}"
CONTAINERD_ADDRESS="${CONTAINERD_SOCK}" "${HACK}/image.sh" --import "${PAUSE_TAR}" "${COREDNS_TAR}" 2> "${LOG_DIR}/image-import.log" \
  || { cat "${LOG_DIR}/image-import.log" >&2; die "importing the pause/CoreDNS images failed"; }

start etcd "$(command -v etcd)" --name spanbench --data-dir "${STATE_DIR}/etcd" --logger=zap \
  --listen-client-urls "http://127.0.0.1:${ETCD_CLIENT_PORT}" \
  --advertise-client-urls "http://127.0.0.1:${ETCD_CLIENT_PORT}" \
  --listen-peer-urls "http://127.0.0.1:${ETCD_PEER_PORT}" \
  --initial-advertise-peer-urls "http://127.0.0.1:${ETCD_PEER_PORT}" \
  --initial-cluster "spanbench=http://127.0.0.1:${ETCD_PEER_PORT}"
wait_for etcd "etcd health" curl -fsS "http://127.0.0.1:${ETCD_CLIENT_PORT}/health"

start_apiserver
wait_for kube-apiserver "kube-apiserver /readyz" apiserver_ready

start kube-controller-manager "${K8S_BIN}/kube-controller-manager" \
  --kubeconfig="${STATE_DIR}/controller-manager.kubeconfig" \
  --authentication-kubeconfig="${STATE_DIR}/controller-manager.kubeconfig" \
  --authorization-kubeconfig="${STATE_DIR}/controller-manager.kubeconfig" \
  --bind-address=127.0.0.1 --leader-elect=false \
  --service-account-private-key-file="${PKI_DIR}/sa.key" --root-ca-file="${CA_CRT}" \
  --use-service-account-credentials=true \
  --cluster-signing-cert-file="${CA_CRT}" --cluster-signing-key-file="${CA_KEY}" \
  --service-cluster-ip-range="${SERVICE_CIDR}" --allocate-node-cidrs=false \
  --profiling=false
start kube-scheduler "${K8S_BIN}/kube-scheduler" \
  --kubeconfig="${STATE_DIR}/scheduler.kubeconfig" \
  --authentication-kubeconfig="${STATE_DIR}/scheduler.kubeconfig" \
  --authorization-kubeconfig="${STATE_DIR}/scheduler.kubeconfig" \
  --bind-address=127.0.0.1 --leader-elect=false --profiling=false
start kube-proxy "${K8S_BIN}/kube-proxy" --config="${STATE_DIR}/kube-proxy-config.yaml"
start kubelet "${K8S_BIN}/kubelet" \
  --config="${STATE_DIR}/kubelet-config.yaml" \
  --kubeconfig="${STATE_DIR}/kubelet-client.kubeconfig" \
  --root-dir="${KUBELET_ROOT}" \
  --hostname-override="${NODE_NAME}" --node-ip="${NODE_IP}"

KC=("${KUBECTL}" --kubeconfig "${KUBECONFIG_OUT}")
wait_for kubelet "node ${NODE_NAME} Ready" \
  "${KC[@]}" wait --for=condition=Ready "node/${NODE_NAME}" --timeout=2s
# Pods in a namespace need its default ServiceAccount (controller-manager).
wait_for kube-controller-manager "ServiceAccount kube-system/default" \
  "${KC[@]}" -n kube-system get serviceaccount default

# ---------------------------------------------------------------- CoreDNS
"${KC[@]}" apply -f - > /dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects:
- {kind: ServiceAccount, name: coredns, namespace: kube-system}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  # No forward plugin: names outside the cluster get NXDOMAIN, so no DNS
  # query ever leaves the machine.
  Corefile: |
    ${CLUSTER_DOMAIN}:53 in-addr.arpa:53 ip6.arpa:53 {
        errors
        health {
            lameduck 5s
        }
        ready
        kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {
            pods insecure
            ttl 30
        }
        prometheus :9153
        cache 30
        loadbalance
    }
    .:53 {
        errors
        template ANY ANY {
            rcode NXDOMAIN
        }
    }
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: coredns
  namespace: kube-system
  labels: {k8s-app: kube-dns}
spec:
  replicas: 1
  selector:
    matchLabels: {k8s-app: kube-dns}
  template:
    metadata:
      labels: {k8s-app: kube-dns}
    spec:
      serviceAccountName: coredns
      priorityClassName: system-cluster-critical
      dnsPolicy: Default
      securityContext:
        runAsNonRoot: true
        runAsUser: 65532
        runAsGroup: 65532
      containers:
      - name: coredns
        image: ${COREDNS_IMAGE}
        imagePullPolicy: Never
        args: ["-conf", "/etc/coredns/Corefile"]
        ports:
        - {name: dns, containerPort: 53, protocol: UDP}
        - {name: dns-tcp, containerPort: 53, protocol: TCP}
        - {name: metrics, containerPort: 9153, protocol: TCP}
        resources:
          requests: {cpu: 50m, memory: 32Mi}
          limits: {memory: 170Mi}
        securityContext:
          allowPrivilegeEscalation: false
          readOnlyRootFilesystem: true
          capabilities: {drop: [ALL]}
        volumeMounts:
        - {name: config, mountPath: /etc/coredns, readOnly: true}
        livenessProbe:
          httpGet: {path: /health, port: 8080}
          periodSeconds: 10
          failureThreshold: 5
        readinessProbe:
          httpGet: {path: /ready, port: 8181}
          periodSeconds: 2
      volumes:
      - name: config
        configMap: {name: coredns}
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels: {k8s-app: kube-dns}
spec:
  selector: {k8s-app: kube-dns}
  clusterIP: ${DNS_SERVICE_IP}
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
  - {name: metrics, port: 9153, protocol: TCP}
EOF
wait_for kubelet "CoreDNS available" \
  "${KC[@]}" -n kube-system wait --for=condition=Available deployment/coredns --timeout=2s
# The real test: a query from the host through the Service IP (kube-proxy NAT,
# the bridge, the pod) must return the kubernetes Service's address.
dns_ok() {
  [[ "$(dig +short +time=1 +tries=1 "@${DNS_SERVICE_IP}" "kubernetes.default.svc.${CLUSTER_DOMAIN}" A)" == "${API_SERVICE_IP}" ]]
}
wait_for kube-proxy "CoreDNS to answer at ${DNS_SERVICE_IP}" dns_ok

STARTED_OK=true
log "cluster up in $((SECONDS - T0)) s: node ${NODE_NAME} Ready, CoreDNS answers at ${DNS_SERVICE_IP}"
log "export KUBECONFIG=${KUBECONFIG_OUT}"

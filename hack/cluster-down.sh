#!/usr/bin/env bash
# Stop the local cluster started by hack/cluster-up.sh and undo what it did to
# the host: leaves no process, mount, network namespace, bridge, iptables
# chain or kubelet directory of ours behind.
#
# Usage: hack/cluster-down.sh             (as root; safe to run repeatedly)
#        CLUSTER_DOWN_PURGE=1 hack/cluster-down.sh
#            also delete bin/cluster/state (containerd's image store and
#            configs) and bin/cluster/pki; the next start re-imports images
#            and issues new certificates (a new kubeconfig).
#
# Processes are stopped only by the PIDs recorded in bin/cluster/pids/ (and
# the containerd shims found in our containerd's own state dir), each checked
# against its executable so a reused PID is never hit. Host paths are removed
# only if bin/cluster/prestate.env says they did not exist before the start.
set -euo pipefail
LOG_TAG=cluster-down
# shellcheck source=cluster-env.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/cluster-env.sh"
T0=${SECONDS}

require_root

if [[ ! -f "${PRESTATE}" ]] && ! compgen -G "${PID_DIR}/*.pid" >/dev/null; then
  log "no cluster recorded in ${CLUSTER_DIR}; nothing to stop"
  exit 0
fi

# Defaults for a prestate file that is missing (e.g. up died very early):
# assume the host had none of it, except the sysctls we leave as they are.
PRE_IP_FORWARD="" PRE_BR_NF_CALL_IPTABLES="" PRE_NODE_IP_ON_LO=0 PRE_BRIDGE=0
PRE_VAR_LIB_KUBELET=1 PRE_VAR_LOG_PODS=1 PRE_VAR_LOG_CONTAINERS=1 PRE_VAR_LIB_CNI=1
PRE_RUN_CONTAINERD=1 PRE_RUN_NETNS=1 PRE_NETNS="" PRE_CHAINS=""
if [[ -f "${PRESTATE}" ]]; then
  # shellcheck disable=SC1090
  source "${PRESTATE}"
fi

# ---------------------------------------------------------------- processes
# stop_component NAME TIMEOUT
stop_component() {
  local pid
  pid="$(pid_of "$1")"
  if [[ -n "${pid}" ]]; then
    log "stopping $1 (PID ${pid})"
    stop_pid "${pid}" "$2"
  fi
  rm -f "${PID_DIR}/$1.pid"
}
# kubelet first, so nothing restarts containers.
stop_component kubelet 15

# Shim PIDs of our containerd (its state dir is ours alone), collected before
# the tasks go away, to stop any shim that outlives containerd.
TASK_DIR="${RUN_DIR}/containerd/io.containerd.runtime.v2.task"
shim_pids=()
if [[ -d "${TASK_DIR}" ]]; then
  while IFS= read -r f; do
    p="$(cat "${f}" 2>/dev/null || true)"
    [[ "${p}" =~ ^[0-9]+$ && "$(readlink "/proc/${p}/exe" 2>/dev/null)" == */containerd-shim-runc-v2 ]] && shim_pids+=("${p}")
  done < <(find "${TASK_DIR}" -mindepth 3 -maxdepth 3 -name shim.pid 2>/dev/null)
fi

# Containers next, before the API server: pods hold watch connections (CoreDNS)
# and kube-apiserver waits up to a minute for open connections before exiting.
# Kill every task of the k8s.io namespace (pods and their pause sandboxes),
# then delete tasks and containers (their snapshots go with them) while
# containerd still runs. containerd's CRI plugin may delete an exited task
# itself, so poll the task list rather than insist on our own delete.
if [[ -n "$(pid_of containerd)" ]] && ctr --address "${CONTAINERD_SOCK}" version >/dev/null 2>&1; then
  mapfile -t tasks < <(ctr_k8s tasks ls -q 2>/dev/null || true)
  if [[ ${#tasks[@]} -gt 0 ]]; then
    log "killing ${#tasks[@]} container task(s)"
    for t in "${tasks[@]}"; do ctr_k8s tasks kill -a -s SIGKILL "${t}" >/dev/null 2>&1 || true; done
    for _ in $(seq 1 100); do
      left_tasks="$(ctr_k8s tasks ls 2>/dev/null | awk 'NR > 1 {print $1, $3}')"
      [[ -n "${left_tasks}" ]] || break
      while read -r t status; do
        if [[ "${status}" == STOPPED ]]; then ctr_k8s tasks delete "${t}" >/dev/null 2>&1 || true; fi
      done <<< "${left_tasks}"
      sleep 0.1
    done
    [[ -z "${left_tasks}" ]] || warn "tasks still present after 10 s: ${left_tasks//$'\n'/, }"
  fi
  mapfile -t ctrs < <(ctr_k8s containers ls -q 2>/dev/null || true)
  for c in "${ctrs[@]+"${ctrs[@]}"}"; do
    ctr_k8s containers delete "${c}" >/dev/null 2>&1 && continue
    # Its task may still be there (delete -f also kills it); then retry.
    ctr_k8s tasks delete -f "${c}" >/dev/null 2>&1 || true
    ctr_k8s containers delete "${c}" >/dev/null 2>&1 || warn "could not delete container ${c}"
  done
fi

# The rest of the control plane in reverse start order: every API client
# before kube-apiserver, etcd after it; containerd last.
for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
  case "${COMPONENTS[i]}" in containerd|kubelet) continue ;; esac
  stop_component "${COMPONENTS[i]}" 15
done
stop_component containerd 15

# Anything containerd could not stop (e.g. it had crashed): runc directly,
# with the runc root our containerd config uses.
RUNC_ROOT="${RUN_DIR}/runc/k8s.io"
if [[ -d "${RUNC_ROOT}" ]] && command -v runc >/dev/null 2>&1; then
  while IFS= read -r id; do
    [[ -n "${id}" ]] || continue
    warn "container ${id} left behind; killing it with runc"
    runc --root "${RUNC_ROOT}" kill --all "${id}" KILL >/dev/null 2>&1 || true
    sleep 0.2
    runc --root "${RUNC_ROOT}" delete -f "${id}" >/dev/null 2>&1 || true
  done < <(runc --root "${RUNC_ROOT}" list -q 2>/dev/null || true)
fi
for p in "${shim_pids[@]+"${shim_pids[@]}"}"; do
  if [[ "$(readlink "/proc/${p}/exe" 2>/dev/null)" == */containerd-shim-runc-v2 ]]; then
    log "stopping leftover shim PID ${p}"
    stop_pid "${p}" 5
  fi
done

# ---------------------------------------------------------------- mounts
# Pod network namespaces containerd created (/run/netns/cni-*), not those that
# existed before the start. `ip netns delete` unmounts and removes the file;
# the pod's veth goes with the namespace.
if [[ -d /run/netns ]]; then
  while IFS= read -r ns; do
    [[ " ${PRE_NETNS} " == *" ${ns} "* ]] && continue
    log "deleting network namespace ${ns}"
    ip netns delete "${ns}" 2>/dev/null || { umount "/run/netns/${ns}" 2>/dev/null || umount -l "/run/netns/${ns}" 2>/dev/null || true; rm -f "/run/netns/${ns}"; }
  done < <(find /run/netns -mindepth 1 -maxdepth 1 -name 'cni-*' -printf '%f\n')
fi

# Everything mounted under our directories: container rootfs (overlay), shm,
# kubelet's volume tmpfs and its rshared bind mount of its root dir.
umount_all_under() {
  local dir="$1" m
  [[ -e "${dir}" ]] || return 0
  while IFS= read -r m; do
    [[ -n "${m}" ]] || continue
    umount "${m}" 2>/dev/null || umount -l "${m}" 2>/dev/null || warn "could not unmount ${m}"
  done < <(mounts_under "${dir}")
}
umount_dirs=("${KUBELET_ROOT}" "${STATE_DIR}" "${RUN_DIR}")
[[ "${PRE_RUN_CONTAINERD}" == 0 ]] && umount_dirs+=(/run/containerd)
[[ "${PRE_VAR_LIB_KUBELET}" == 0 ]] && umount_dirs+=(/var/lib/kubelet)
# iproute2 (`ip netns add`) makes /run/netns a bind mount of itself.
[[ "${PRE_RUN_NETNS}" == 0 ]] && umount_dirs+=(/run/netns)
# Two passes: a lazy unmount in the first can expose mounts below it.
for _ in 1 2; do
  for d in "${umount_dirs[@]}"; do umount_all_under "${d}"; done
done

# ---------------------------------------------------------------- files
# Per-run state; the next start begins with an empty cluster. containerd's
# root (the imported images) is kept so the next start takes seconds.
rm -rf "${KUBELET_ROOT}" "${STATE_DIR}/etcd" "${STATE_DIR}/cni/ipam" "${RUN_DIR}"
[[ "${PRE_RUN_CONTAINERD}" == 0 ]] && rm -rf /run/containerd
[[ "${PRE_VAR_LIB_KUBELET}" == 0 ]] && rm -rf /var/lib/kubelet
[[ "${PRE_VAR_LOG_PODS}" == 0 ]] && rm -rf /var/log/pods
[[ "${PRE_VAR_LOG_CONTAINERS}" == 0 ]] && rm -rf /var/log/containers
[[ "${PRE_VAR_LIB_CNI}" == 0 ]] && rm -rf /var/lib/cni
if [[ "${PRE_RUN_NETNS}" == 0 ]]; then rmdir /run/netns 2>/dev/null || true; fi
if [[ "${CLUSTER_DOWN_PURGE:-}" == 1 ]]; then
  log "purging ${STATE_DIR} and ${PKI_DIR}"
  rm -rf "${STATE_DIR}" "${PKI_DIR}" "${KUBECONFIG_OUT}"
fi

# kubelet's cgroups (cgroup v1, cgroupfs driver): empty once every container
# is gone; rmdir leaves any that still hold a process.
for d in /sys/fs/cgroup/*/kubepods; do
  [[ -d "${d}" ]] || continue
  find "${d}" -depth -type d -exec rmdir {} \; 2>/dev/null || true
done

# ---------------------------------------------------------------- network
# kube-proxy removes its own rules; then delete whatever KUBE-*/SPANBENCH-*
# chains remain (kubelet's canaries, our guard) that were not there before.
if [[ -x "${K8S_BIN}/kube-proxy" ]]; then
  "${K8S_BIN}/kube-proxy" --cleanup > "${LOG_DIR}/kube-proxy-cleanup.log" 2>&1 || true
fi
remove_chains() { # remove_chains CMD TABLE
  local cmd="$1" t="$2" rules ours=() c line
  rules="$("${cmd}-save" -t "${t}" 2>/dev/null)" || return 0
  while IFS= read -r c; do
    [[ ";${PRE_CHAINS};" == *";${cmd} ${t} ${c};"* ]] && continue
    ours+=("${c}")
  done < <(awk '/^:(KUBE-|SPANBENCH-)/ {print substr($1, 2)}' <<< "${rules}")
  [[ ${#ours[@]} -gt 0 ]] || return 0
  # Delete every rule that jumps to one of them (from any chain), then flush
  # and delete the chains. xargs parses iptables-save's quoting for us.
  for c in "${ours[@]}"; do
    while IFS= read -r line; do
      printf '%s\n' "${line#-A }" | xargs "${cmd}" -t "${t}" -D 2>/dev/null || true
    done < <(grep -E -- "^-A .* -j ${c}( |$)" <<< "${rules}" || true)
  done
  for c in "${ours[@]}"; do "${cmd}" -t "${t}" -F "${c}" 2>/dev/null || true; done
  for c in "${ours[@]}"; do "${cmd}" -t "${t}" -X "${c}" 2>/dev/null || warn "could not delete ${cmd} -t ${t} chain ${c}"; done
}
for cmd in iptables ip6tables; do
  command -v "${cmd}" >/dev/null 2>&1 || continue
  for t in filter nat mangle raw; do remove_chains "${cmd}" "${t}"; done
done

if [[ "${PRE_BRIDGE}" == 0 ]] && ip link show "${BRIDGE}" >/dev/null 2>&1; then
  ip link delete "${BRIDGE}" || warn "could not delete bridge ${BRIDGE}"
fi
if [[ "${PRE_NODE_IP_ON_LO}" == 0 ]] && node_ip_on_lo; then
  ip addr del "${NODE_IP}/32" dev lo || warn "could not remove ${NODE_IP} from lo"
fi
# Conntrack entries of the pod/service ranges would only linger until timeout;
# drop them so a next start begins clean.
if command -v conntrack >/dev/null 2>&1; then
  for r in "${POD_CIDR}" "${SERVICE_CIDR}"; do
    conntrack -D -s "${r}" >/dev/null 2>&1 || true
    conntrack -D -d "${r}" >/dev/null 2>&1 || true
  done
fi
[[ "${PRE_IP_FORWARD}" =~ ^[01]$ ]] && sysctl -q -w "net.ipv4.ip_forward=${PRE_IP_FORWARD}"
[[ "${PRE_BR_NF_CALL_IPTABLES}" =~ ^[01]$ ]] && sysctl -q -w "net.bridge.bridge-nf-call-iptables=${PRE_BR_NF_CALL_IPTABLES}"

rm -f "${PID_DIR}"/*.pid "${PRESTATE}"

# ---------------------------------------------------------------- report
left=""
for d in "${KUBELET_ROOT}" "${STATE_DIR}" "${RUN_DIR}" /run/netns/cni- /var/lib/kubelet /run/containerd; do
  left+="$(awk -v d="${d}" 'index($5, d) == 1 {print "  " $5}' /proc/self/mountinfo)"
done
[[ -z "${left}" ]] || warn "mounts left behind:"$'\n'"${left}"
log "cluster stopped and cleaned up in $((SECONDS - T0)) s"

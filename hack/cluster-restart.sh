#!/usr/bin/env bash
# Restart a component of the running local cluster (hack/cluster-up.sh), the
# way an upgrade or a crash of a control-plane host would: the e2e fault
# tests (test/e2e/faults_test.go) restart kube-apiserver mid-run.
#
# Usage: hack/cluster-restart.sh kube-apiserver [DOWN_SECONDS]   (as root)
#   Stops the recorded kube-apiserver (SIGTERM, then SIGKILL after 15 s),
#   keeps it down DOWN_SECONDS more (default 0), starts it again with the
#   same command line as cluster-up.sh and waits (at most
#   CLUSTER_WAIT_SECONDS, default 60) until it answers /readyz. Prints one
#   line: "down <seconds> s" (from the stop to ready again, as a float).
#   The previous log is kept as kube-apiserver.log.before-restart.
set -euo pipefail
LOG_TAG=cluster-restart
# shellcheck source=cluster-env.sh source-path=SCRIPTDIR
source "$(dirname "${BASH_SOURCE[0]}")/cluster-env.sh"

require_root
component="${1:-}"
down="${2:-0}"
[[ "${component}" == kube-apiserver ]] || die "usage: $0 kube-apiserver [DOWN_SECONDS] (only kube-apiserver can be restarted)"
[[ "${down}" =~ ^[0-9]+$ ]] || die "DOWN_SECONDS must be a whole number of seconds, got '${down}'"
wait_seconds="${CLUSTER_WAIT_SECONDS:-60}"

pid="$(pid_of kube-apiserver)"
[[ -n "${pid}" ]] || die "kube-apiserver is not running (no live PID in ${PID_DIR}/kube-apiserver.pid): start the cluster with hack/cluster-up.sh"
t0="$(date +%s.%N)"
log "stopping kube-apiserver (PID ${pid})"
stop_pid "${pid}" 15
sleep "${down}"
mv -f "${LOG_DIR}/kube-apiserver.log" "${LOG_DIR}/kube-apiserver.log.before-restart"
start_apiserver
for ((i = 0; i < wait_seconds * 5; i++)); do
  if apiserver_ready >/dev/null 2>&1; then
    log "kube-apiserver ready again"
    awk -v a="${t0}" -v b="$(date +%s.%N)" 'BEGIN { printf "down %.1f s\n", b - a }'
    exit 0
  fi
  [[ -n "$(pid_of kube-apiserver)" ]] || { tail -n 30 "${LOG_DIR}/kube-apiserver.log" >&2; die "kube-apiserver exited after the restart (log: ${LOG_DIR}/kube-apiserver.log)"; }
  sleep 0.2
done
die "kube-apiserver not ready ${wait_seconds} s after the restart (log: ${LOG_DIR}/kube-apiserver.log)"

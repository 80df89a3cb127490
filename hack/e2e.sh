#!/usr/bin/env bash
# `make test-e2e`: the end-to-end suite's whole cycle, timed — the local
# cluster up, the image built and loaded, then the suite (test/e2e, build tag
# e2e) once per install method on the same cluster — spanbench installed with
# kustomize (every test, the fault tests included), then with Helm
# (charts/spanbench: the install, upgrade and uninstall checks, the webhook
# and one short run; the other tests skip, see kustomizePassOnly), each pass
# with a fresh emulator; the suite installs and uninstalls spanbench itself
# and fails if its uninstall leaves anything — then the teardown and a check
# that it left no process, mount, address or iptables chain behind. One
# failing pass fails the run (the other passes still run).
#
# Usage (as root):
#   hack/e2e.sh              the whole cycle; exits with the suite's status,
#                            or 1 if the teardown left something behind
#   hack/e2e.sh check-clean  only the leftover check
#   hack/e2e.sh check-clean BEFORE   the same, failing only on what the
#                            file BEFORE (hack/e2e.sh leftovers) does not list
#   hack/e2e.sh leftovers    print what of a local cluster the host holds
# Env:
#   E2E_INSTALLS  the install methods, in order (default "kustomize helm";
#                 each sets SPANBENCH_E2E_INSTALL for its pass)
#   E2E_RUN       -run regexp for go test (default: every test)
#   E2E_TIMEOUT   go test -timeout of each pass (default 20m)
#   E2E_KEEP=1    leave the cluster, the emulator and the last pass's
#                 install up afterwards (then
#                 `SPANBENCH_E2E_INSTALL=helm go test -tags e2e ./test/e2e/`
#                 reruns a pass in about a minute; `make demo-down` stops
#                 everything)
# Each pass's output is written to bin/e2e-<method>.log, all of them to
# bin/e2e.log.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HACK="${ROOT}/hack"
LOG_TAG=e2e
# shellcheck source=cluster-env.sh source-path=SCRIPTDIR
source "${HACK}/cluster-env.sh"

# leftovers prints, one per line, anything of the cluster or the suite on the
# host: processes, mounts, the node address, the bridge, iptables chains. It
# only looks; it stops nothing.
leftovers() {
  local left=() pid cmd f
  for f in /proc/[0-9]*; do
    pid="${f#/proc/}"
    # 2>/dev/null before the redirection: a process may exit between the glob
    # and the read, and the shell reports a failed redirection itself.
    cmd="$(tr '\0' ' ' 2>/dev/null < "${f}/cmdline")" || continue
    [[ -n "${cmd}" ]] || continue
    case "${cmd}" in
      # Cluster components, containerd shims, the emulator on the node
      # address, the suite's Prometheus (its data lives in a Test* dir).
      *"${K8S_BIN}/"*|*"${CLUSTER_DIR}"*|*"${RUN_DIR}"*|*"${NODE_IP}"*|*"/TestPrometheus"*)
        left+=("process ${pid}: ${cmd:0:160}") ;;
    esac
    # Any process still in a pod's cgroup.
    if grep -q kubepods "${f}/cgroup" 2>/dev/null; then
      left+=("pod process ${pid}: ${cmd:0:160}")
    fi
  done
  while IFS= read -r m; do
    left+=("mount ${m}")
  done < <(awk -v a="${CLUSTER_DIR}" -v b="${RUN_DIR}" '
    index($5, a) == 1 || index($5, b) == 1 || index($5, "/run/netns/cni-") == 1 || index($5, "/var/lib/kubelet") == 1 {print $5}' /proc/self/mountinfo)
  if node_ip_on_lo; then left+=("address ${NODE_IP} on lo"); fi
  if ip link show "${BRIDGE}" >/dev/null 2>&1; then left+=("bridge ${BRIDGE}"); fi
  local chains
  chains="$( { iptables-save 2>/dev/null || true; } | awk '/^:SPANBENCH-/ {print substr($1, 2)}' | tr '\n' ' ')"
  [[ -z "${chains}" ]] || left+=("iptables chains ${chains}")
  [[ ${#left[@]} -eq 0 ]] || printf '%s\n' "${left[@]}"
}

# check_clean [BEFORE] fails when the host holds anything of the cluster or
# the suite that the file BEFORE (leftovers before the cycle) does not list:
# what an earlier cluster left (say, one killed with its machine's session)
# is not this cycle's to remove — cluster-up records it as there before, and
# cluster-down leaves it — so it is reported, not failed on.
check_clean() {
  local before="${1:-/dev/null}" now added
  now="$(leftovers)"
  added="$(grep -vxF -f "${before}" <<< "${now}" || true)"
  if [[ -n "${added}" ]]; then
    warn "left behind after the teardown:"
    sed 's/^/  /' <<< "${added}" >&2
    return 1
  fi
  if [[ -n "${now}" ]]; then
    warn "still on the host from before this cycle (not removed; the checkout that started it stops it with hack/cluster-down.sh):"
    sed 's/^/  /' <<< "${now}" >&2
  fi
  log "clean: no process, mount, address, bridge or iptables chain of this cycle left"
}

case "${1:-run}" in
  check-clean) check_clean "${2:-/dev/null}"; exit ;;
  leftovers) leftovers; exit ;;
  run) ;;
  *) die "unknown command '$1' (run|check-clean|leftovers)" ;;
esac

require_root
T0=${SECONDS}
# What the host holds before the cycle: the final check reports only what
# the cycle added.
BEFORE="$(mktemp)"
leftovers > "${BEFORE}"
if [[ -s "${BEFORE}" ]]; then
  warn "the host already holds parts of a local cluster that was not stopped; this cycle leaves them as they are:"
  sed 's/^/  /' "${BEFORE}" >&2
fi
read -r -a INSTALLS <<< "${E2E_INSTALLS:-kustomize helm}"
[[ ${#INSTALLS[@]} -gt 0 ]] || die "E2E_INSTALLS is empty"
for m in "${INSTALLS[@]}"; do
  case "${m}" in kustomize|helm) ;; *) die "E2E_INSTALLS: unknown install method '${m}' (kustomize|helm)" ;; esac
done
# Prometheus is part of the suite (a real one scrapes the pods).
"${HACK}/install-deps.sh" prometheus
# The Helm CLI, found (or built: minutes the first time) before the cluster
# starts; the suite's Helm pass uses it.
SPANBENCH_E2E_HELM="$("${HACK}/helm.sh")"
export SPANBENCH_E2E_HELM

teardown_done=false
teardown() {
  "${teardown_done}" && return 0
  teardown_done=true
  if [[ "${E2E_KEEP:-}" == 1 ]]; then
    log "E2E_KEEP=1: leaving the cluster and the emulator up (make demo-down stops them)"
    return 0
  fi
  local t=${SECONDS}
  "${HACK}/demo.sh" down || warn "teardown failed"
  T_DOWN=$((SECONDS - t))
}
T_UP=0 T_DOWN=0
trap 'teardown' EXIT
trap 'exit 130' INT TERM

t=${SECONDS}
# The previous release, for the upgrade test (test/e2e/upgrade_test.go):
# built once per commit, beside the cluster's start (which mostly waits
# for its components; after it, the build took about 30 s of the
# environment's start), then imported into the cluster.
"${HACK}/previous-release.sh" > /dev/null &
prev_pid=$!
if ! "${HACK}/demo.sh" up; then
  wait "${prev_pid}" || true
  die "the environment did not come up (hack/demo.sh up, output above)"
fi
wait "${prev_pid}" || die "building the previous release failed (hack/previous-release.sh, output above)"
SPANBENCH_E2E_PREVIOUS_MANIFESTS="$("${HACK}/previous-release.sh" --import | tail -n 1)"
export SPANBENCH_E2E_PREVIOUS_MANIFESTS
T_UP=$((SECONDS - t))

# The suite's runs use the emulator that demo.sh started on the node address
# (same port as hack/demo.sh's).
EMULATOR_PORT=9010
export SPANBENCH_E2E_EMULATOR_HOST="${NODE_IP}:${EMULATOR_PORT}"

# emulator_fresh restarts the emulator, as demo.sh does before the first
# pass: its strong reads slow down the longer it runs (shared/EMULATOR.md).
emulator_fresh() {
  "${HACK}/emulator.sh" stop
  SPANBENCH_EMULATOR_HOSTNAME="${NODE_IP}" SPANBENCH_EMULATOR_GRPC_PORT="${EMULATOR_PORT}" \
    SPANBENCH_EMULATOR_HTTP_PORT=$((EMULATOR_PORT + 10)) "${HACK}/emulator.sh" start >/dev/null
}

: > "${ROOT}/bin/e2e.log"
rc=0 failed=() timings=()
for i in "${!INSTALLS[@]}"; do
  m="${INSTALLS[i]}"
  t=${SECONDS}
  if [[ ${i} -gt 0 ]]; then
    log "restarting the emulator for the ${m} pass"
    emulator_fresh
  fi
  log "running the suite with the ${m} install (SPANBENCH_E2E_INSTALL=${m} go test -tags e2e ./test/e2e/; log in bin/e2e-${m}.log)"
  keep=""
  # E2E_KEEP=1: the last pass leaves its install for a look afterwards.
  if [[ "${E2E_KEEP:-}" == 1 && ${i} -eq $((${#INSTALLS[@]} - 1)) ]]; then keep=1; fi
  prc=0
  # -parallel 8: the tests run in their own namespaces and mostly wait on
  # pods and fixed-length loads; on 2 cores the default (GOMAXPROCS) would
  # run them two at a time. Go starts queued parallel tests in no set
  # order: with 4 slots the longest (the search, about 5 min) began about
  # 100 s in, behind short ones; with 8 it began 8 s in, the long run and
  # the samples' lanes within 50-90 s. With 16 (all at once) the one
  # emulator fell so far behind that a run's live progress was written
  # once in its 40 s (docs/performance.md, section (k)). The samples'
  # three lanes run inside one of the 8 (TestEverySampleRunSucceeds):
  # at most 10 runs at once.
  (cd "${ROOT}" && SPANBENCH_E2E_INSTALL="${m}" SPANBENCH_E2E_KEEP_INSTALL="${keep}" \
    go test -tags e2e -count=1 -v -parallel 8 -timeout "${E2E_TIMEOUT:-20m}" \
    ${E2E_RUN:+-run "${E2E_RUN}"} ./test/e2e/) 2>&1 | tee "${ROOT}/bin/e2e-${m}.log" | tee -a "${ROOT}/bin/e2e.log" || prc=$?
  timings+=("suite with ${m} $((SECONDS - t)) s")
  if [[ ${prc} -ne 0 ]]; then
    warn "the suite failed with the ${m} install (exit ${prc}); see bin/e2e-${m}.log"
    rc=${prc} failed+=("${m}")
  else
    log "the suite passed with the ${m} install in $((SECONDS - t)) s"
  fi
done

teardown
clean=0
if [[ "${E2E_KEEP:-}" != 1 ]]; then
  check_clean "${BEFORE}" || clean=1
fi
summary="environment up ${T_UP} s"
for x in "${timings[@]}"; do summary+=", ${x}"; done
log "timings: ${summary}, teardown ${T_DOWN} s; total $((SECONDS - T0)) s"
if [[ ${rc} -ne 0 ]]; then
  die "the e2e suite failed with the ${failed[*]} install (last exit ${rc}); see bin/e2e-<method>.log"
fi
rm -f "${BEFORE}"
[[ ${clean} -eq 0 ]] || die "the teardown left things behind (listed above)"
log "e2e passed (${INSTALLS[*]})"

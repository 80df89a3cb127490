#!/usr/bin/env bash
# The newcomer's first command (`make demo`): a BenchmarkRun from real pods on
# a real single-node Kubernetes on this machine, against the Cloud Spanner
# emulator, without a cloud account, Docker or a registry.
#
# Usage (as root: the local cluster runs containerd and kubelet):
#   hack/demo.sh [run]   build what is missing, start the cluster and the
#                        emulator, install spanbench (kubectl apply -k
#                        config/default), apply config/samples/demo.yaml,
#                        show its progress and print its result table
#   hack/demo.sh up      only the environment: cluster, image, fresh emulator
#                        (hack/e2e.sh uses it; the e2e tests install spanbench)
#   hack/demo.sh down    stop the emulator and the cluster (`make demo-down`)
#
# Env:
#   DEMO_RUN_TIMEOUT  seconds the demo run may take once applied (default 300)
#   KUBE_VERSION      the local cluster's Kubernetes version (default v1.33.4)
#
# The first time, everything is built (Kubernetes binaries from the Go module
# proxy, the spanbench image): 5-10 minutes on 2 cores. Afterwards the whole
# demo takes about a minute and a half. Every wait is bounded and says what
# it waited for when it gives up.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HACK="${ROOT}/hack"
# The local cluster's settings (KUBE_VERSION, NODE_IP, ...): the node address
# is on lo and reached by pods through the bridge; the emulator binds it so
# that pods can reach it.
# shellcheck source=cluster-env.sh source-path=SCRIPTDIR
source "${HACK}/cluster-env.sh"
export KUBECONFIG="${KUBECONFIG_OUT}"
EMULATOR_PORT=9010
RUN_NAME=demo
RUN_NS=default
SAMPLE="${ROOT}/config/samples/demo.yaml"
RUN_TIMEOUT="${DEMO_RUN_TIMEOUT:-300}"
T0=${SECONDS}

# Bold progress lines on a terminal, plain ones in a log.
if [[ -t 2 ]]; then BOLD=$'\033[1m' PLAIN=$'\033[0m'; else BOLD="" PLAIN=""; fi
log() { printf '%s[demo %3ds]%s %s\n' "${BOLD}" "$((SECONDS - T0))" "${PLAIN}" "$*" >&2; }
die() { printf '[demo] ERROR: %s\n' "$*" >&2; exit 1; }

require_root() {
  [[ ${EUID} -eq 0 ]] || die "run as root (sudo make demo): the local cluster runs containerd and kubelet and changes iptables and mounts"
}

KUBECTL=""
find_kubectl() {
  # The version-matched kubectl, built like the cluster's binaries; a
  # system kubectl of another minor version may not speak v1.33 well.
  KUBECTL="${ROOT}/bin/k8s/${KUBE_VERSION}/kubectl"
  if [[ ! -x "${KUBECTL}" ]]; then
    log "building kubectl ${KUBE_VERSION} (cached in bin/k8s/${KUBE_VERSION})"
    "${HACK}/kube-binaries.sh" kubectl
  fi
}
kc() { "${KUBECTL}" "$@"; }

# emulator_fresh restarts the emulator bound to the node address: a fresh
# one per run, because its strong reads slow down the longer it runs
# (shared/EMULATOR.md).
emulator_fresh() {
  if "${HACK}/emulator.sh" status >/dev/null 2>&1; then
    log "restarting the emulator (a fresh one per run)"
    "${HACK}/emulator.sh" stop
  fi
  SPANBENCH_EMULATOR_HOSTNAME="${NODE_IP}" SPANBENCH_EMULATOR_GRPC_PORT="${EMULATOR_PORT}" \
    SPANBENCH_EMULATOR_HTTP_PORT=$((EMULATOR_PORT + 10)) "${HACK}/emulator.sh" start >/dev/null
  log "emulator on ${NODE_IP}:${EMULATOR_PORT} (the node address; pods reach it through the bridge)"
}

cmd_up() {
  require_root
  # What cannot be installed from here, checked before minutes of building.
  command -v go >/dev/null 2>&1 || die "go not found: install Go 1.26 (README.md, Prerequisites)"
  "${HACK}/emulator.sh" path >/dev/null || die "the Cloud Spanner emulator is required: apt-get install google-cloud-cli-spanner-emulator (from Google's Cloud SDK apt repository), or set SPANBENCH_EMULATOR_PATH"
  # Debian packages of the cluster and the image script (cluster-up installs
  # its own when missing, but jq and openssl are needed before it runs).
  "${HACK}/install-deps.sh" cluster tools
  find_kubectl
  # The image needs no cluster: it is built while the cluster starts (which
  # mostly waits for its components), and loaded once containerd runs.
  log "building the spanbench image (hack/build-images.sh) while the local cluster starts (hack/cluster-up.sh; Kubernetes binaries are built the first time)"
  local archive_out="${ROOT}/bin/build-images.out" build_pid
  mkdir -p "${ROOT}/bin"
  "${HACK}/build-images.sh" --tag dev > "${archive_out}" &
  build_pid=$!
  if ! "${HACK}/cluster-up.sh"; then
    wait "${build_pid}" || true
    die "the local cluster did not start (hack/cluster-up.sh, output above)"
  fi
  wait "${build_pid}" || die "building the spanbench image failed (hack/build-images.sh, output above)"
  log "loading the spanbench image into the cluster"
  CONTAINERD_ADDRESS="${CONTAINERD_SOCK}" "${HACK}/image.sh" --import "$(tail -n 1 "${archive_out}")" >/dev/null
  emulator_fresh
}

cmd_down() {
  # Stop the emulator first: it is bound to the node address, which
  # cluster-down removes from lo.
  "${HACK}/emulator.sh" stop
  if [[ ${EUID} -eq 0 ]]; then
    "${HACK}/cluster-down.sh"
  else
    die "run as root to stop the cluster: sudo make demo-down"
  fi
}

# install applies config/default and waits for the manager. The image tag
# (dev) is reused across builds, so a manager that already runs is restarted
# to pick up the image just imported.
install() {
  local existed=false
  kc -n spanbench-system get deployment spanbench-manager >/dev/null 2>&1 && existed=true
  log "installing spanbench: kubectl apply -k config/default"
  # config/default lets the manager dial the default node address's
  # emulator only (--allowed-emulator-hosts, docs/security.md); follow
  # CLUSTER_NODE_IP.
  kc kustomize "${ROOT}/config/default" \
    | sed "s/--allowed-emulator-hosts=10\.245\.255\.1:9010\$/--allowed-emulator-hosts=${NODE_IP}:${EMULATOR_PORT}/" \
    | kc apply -f - >/dev/null
  kc wait --for=condition=Established crd/benchmarkruns.bench.spanbench.io --timeout=30s >/dev/null
  if "${existed}"; then
    kc -n spanbench-system rollout restart deployment/spanbench-manager >/dev/null
  fi
  if ! kc -n spanbench-system rollout status deployment/spanbench-manager --timeout=120s >/dev/null; then
    kc -n spanbench-system get pods -o wide >&2 || true
    kc -n spanbench-system logs deployment/spanbench-manager --tail=30 >&2 || true
    die "the manager did not become ready within 120 s (pods and logs above)"
  fi
  # The newest pod is the one the rollout made (an old one may still be
  # terminating); it reconciles once it holds the leader lease, which a
  # replaced manager may keep for up to 15 s.
  log "manager ready: $(kc -n spanbench-system get pods -l app.kubernetes.io/component=manager \
    --sort-by=.metadata.creationTimestamp -o jsonpath='{.items[-1:].metadata.name}')"
}

# field JSONPATH: one field of the demo run ("" when absent).
field() { kc -n "${RUN_NS}" get benchmarkrun "${RUN_NAME}" -o jsonpath="$1" 2>/dev/null || true; }

# watch_run prints a line whenever the phase, the latest condition message
# or the runner pods change, until the run ends or RUN_TIMEOUT passes.
watch_run() {
  local deadline=$((SECONDS + RUN_TIMEOUT)) last="" line phase msg pods
  while ((SECONDS < deadline)); do
    phase="$(field '{.status.phase}')"
    # The most recently changed condition says what the run is doing.
    msg="$(kc -n "${RUN_NS}" get benchmarkrun "${RUN_NAME}" -o json 2>/dev/null \
      | jq -r '[.status.conditions // [] | sort_by(.lastTransitionTime)[-1] | .message][0] // ""')"
    pods="$(kc -n "${RUN_NS}" get pods -l "bench.spanbench.io/run=${RUN_NAME}" --no-headers \
      -o custom-columns=N:.metadata.name,S:.status.phase 2>/dev/null | awk '{printf "%s%s=%s", (NR > 1 ? ", " : ""), $1, $2}')"
    line="${phase:-Pending}  ${msg}${pods:+  [pods: ${pods}]}"
    if [[ "${line}" != "${last}" ]]; then
      log "${RUN_NAME}: ${line}"
      last="${line}"
    fi
    case "${phase}" in Succeeded|Failed) return 0 ;; esac
    sleep 1
  done
  return 1
}

explain_failure() {
  echo >&2
  kc -n "${RUN_NS}" get benchmarkrun "${RUN_NAME}" -o json | jq -r '.status.conditions[] | "  \(.type)=\(.status) \(.reason): \(.message)"' >&2 || true
  kc -n "${RUN_NS}" get events --field-selector "involvedObject.name=${RUN_NAME}" --sort-by=.lastTimestamp 2>/dev/null | tail -n 10 >&2 || true
  kc -n spanbench-system logs deployment/spanbench-manager --tail=20 >&2 || true
}

cmd_run() {
  cmd_up
  install
  if kc -n "${RUN_NS}" get benchmarkrun "${RUN_NAME}" >/dev/null 2>&1; then
    log "deleting the previous demo run (a spec is immutable; a new run is a new object)"
    kc -n "${RUN_NS}" delete benchmarkrun "${RUN_NAME}" --wait=true --timeout=60s >/dev/null
  fi
  log "applying the sample: kubectl apply -f config/samples/demo.yaml (2 loader pods load 1000 rows, then 2 runners send 200 ops/s for 24 s)"
  # The sample names the default node address; follow CLUSTER_NODE_IP.
  sed "s/^\( *emulatorHost:\).*/\1 ${NODE_IP}:${EMULATOR_PORT}/" "${SAMPLE}" | kc -n "${RUN_NS}" apply -f - >/dev/null
  log "progress (yourself: kubectl get benchmarkruns -w; kubectl get pods -l bench.spanbench.io/run=${RUN_NAME})"
  if ! watch_run; then
    explain_failure
    die "the demo run did not finish within ${RUN_TIMEOUT} s (DEMO_RUN_TIMEOUT)"
  fi
  echo
  kc -n "${RUN_NS}" get benchmarkrun "${RUN_NAME}" -o wide
  echo
  if [[ "$(field '{.status.phase}')" != Succeeded ]]; then
    explain_failure
    die "the demo run failed (conditions above)"
  fi
  echo "Start skew between the runners: $(field '{.status.startSkew}')"
  # The full merged result (time series, histograms) lives in the report
  # ConfigMap; `spanbench report --run` reads it and prints the table.
  echo "Result: bin/spanbench report --run ${RUN_NAME} (also saved as bin/demo-result.json)"
  "${ROOT}/bin/spanbench" report --run "${RUN_NAME}" -n "${RUN_NS}" --kubeconfig "${KUBECONFIG}" \
    --out "${ROOT}/bin/demo-result.json" || die "reading the report of run ${RUN_NAME} failed"
  echo
  log "done. More: kubectl get benchmarkrun ${RUN_NAME} -o yaml   (KUBECONFIG=${KUBECONFIG})"
  log "tear everything down with: make demo-down"
}

case "${1:-run}" in
  run) cmd_run ;;
  up) cmd_up ;;
  down) cmd_down ;;
  -h|--help) sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2 ;;
  *) die "unknown command '$1' (run|up|down)" ;;
esac

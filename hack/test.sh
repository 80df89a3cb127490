#!/usr/bin/env bash
# `make test`: every suite — the unit stage (`make test-unit`) and the
# end-to-end cycle (`make test-e2e`, hack/e2e.sh) side by side. Both spend
# most of their time waiting (envtest and the emulator, pods and fixed-length
# loads), not computing: one after the other they took 17.4 min on 2 cores
# for 8.4 min of CPU; side by side, the end-to-end cycle is the whole run
# (docs/performance.md, "make test on a clean clone").
#
# The unit stage prints here as it goes; the end-to-end cycle writes to
# bin/test-e2e.log (`tail -f` it to follow), and its summary is printed
# when it ends — its whole log when it failed. Either failing fails the run
# (the other still runs to its end, so that one run reports both). An
# interrupt (INT or TERM) stops both; the end-to-end cycle then tears the
# cluster down (hack/e2e.sh's EXIT trap) before this script exits.
#
# Run as root, from the Makefile (MAKE is the make to call back).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MAKE="${MAKE:-make}"
E2E_OUT="${ROOT}/bin/test-e2e.log"
T0=${SECONDS}

log() { printf '[test %3ds] %s\n' "$((SECONDS - T0))" "$*" >&2; }

mkdir -p "${ROOT}/bin"
# The end-to-end cycle in its own process group (setsid execs in place: a
# background job of a non-interactive shell is no group leader, so $! is
# its group), so that an interrupt reaches all of it — go test and the test
# binary too — and hack/e2e.sh's trap tears the cluster down. Its cluster
# components and emulator run in sessions of their own and are stopped by
# that teardown, not by the signal.
setsid "${ROOT}/hack/e2e.sh" > "${E2E_OUT}" 2>&1 < /dev/null &
e2e_pid=$!
log "end-to-end cycle started beside the unit stage (hack/e2e.sh, pid ${e2e_pid}); its output: bin/test-e2e.log"

# stop_e2e interrupts the end-to-end cycle and waits for its teardown.
stop_e2e() {
  [[ -n "${e2e_pid}" ]] || return 0
  log "stopping the end-to-end cycle (it tears the cluster down)"
  kill -TERM -- "-${e2e_pid}" 2>/dev/null || true
  wait "${e2e_pid}" 2>/dev/null || true
  e2e_pid=""
  # The signal may have cut its teardown short: run it again (it is safe to
  # repeat, and says so when there is nothing left to stop).
  "${ROOT}/hack/demo.sh" down || true
}
trap 'stop_e2e' EXIT
trap 'exit 130' INT TERM

# The unit stage runs at a lower CPU priority: the end-to-end cycle is the
# longer of the two, and its tests hold real pods and one emulator to
# wall-clock bounds (a loader test writes 200,000 rows within its run's
# deadline). At equal priority the unit stage's packages (then two at a time,
# each with an emulator or envtest) cut that emulator's loading from
# 6,000-10,000 to about 1,500 rows/s. The unit stage still gets whatever
# the cycle leaves, most of a core or more: the cycle mostly waits.
unit_rc=0
nice -n 10 "${MAKE}" --no-print-directory test-unit || unit_rc=$?
t_unit=$((SECONDS - T0))
if [[ ${unit_rc} -eq 0 ]]; then
  log "unit stage passed in ${t_unit} s; waiting for the end-to-end cycle (bin/test-e2e.log)"
else
  log "unit stage FAILED (exit ${unit_rc}) after ${t_unit} s; waiting for the end-to-end cycle (bin/test-e2e.log) to report it too"
fi

# `wait` returns at once when INT or TERM arrives (the trap then stops the
# cycle); otherwise with the cycle's exit status.
e2e_rc=0
wait "${e2e_pid}" || e2e_rc=$?
e2e_pid=""
t_e2e=$((SECONDS - T0))

echo
if [[ ${e2e_rc} -eq 0 ]]; then
  log "end-to-end cycle passed in ${t_e2e} s; its summary (whole output in bin/test-e2e.log):"
  grep -E '^\[e2e\]|^(ok|FAIL)[[:space:]]' "${E2E_OUT}" >&2 || true
else
  log "end-to-end cycle FAILED (exit ${e2e_rc}) after ${t_e2e} s; its whole output (bin/test-e2e.log):"
  cat "${E2E_OUT}" >&2
  log "end-to-end cycle FAILED (exit ${e2e_rc}): output above, from bin/test-e2e.log; per pass: bin/e2e-<method>.log"
fi
log "unit stage $([[ ${unit_rc} -eq 0 ]] && echo passed || echo "FAILED (exit ${unit_rc})") in ${t_unit} s," \
  "end-to-end cycle $([[ ${e2e_rc} -eq 0 ]] && echo passed || echo "FAILED (exit ${e2e_rc})") in ${t_e2e} s; total $((SECONDS - T0)) s"
[[ ${unit_rc} -eq 0 && ${e2e_rc} -eq 0 ]]

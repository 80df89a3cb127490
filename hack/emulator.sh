#!/usr/bin/env bash
# Find, start and stop the Cloud Spanner emulator for manual use.
#
# Usage: hack/emulator.sh [path|start|stop|status]
#   path    (default) print the emulator's gateway_main, or exit 1 with how
#           to install it. Lookup order, as in spanner/emulator.Find:
#           $SPANBENCH_EMULATOR_PATH if set (and only it), else the Google
#           Cloud CLI Debian package's
#           /usr/lib/google-cloud-sdk/bin/cloud_spanner_emulator/gateway_main,
#           else bin/cloud_spanner_emulator/gateway_main beside `gcloud`.
#   start   start it in the background in its own process group, wait until
#           it serves admin calls, and print the SPANNER_EMULATOR_HOST line
#           to use. Pid in bin/emulator.pid, output in bin/emulator.log.
#   stop    stop gateway_main and the emulator_main it spawned.
#   status  print the host and exit 0 if it runs, else exit 1.
# Env:
#   SPANBENCH_EMULATOR_HOSTNAME   address to bind (default 127.0.0.1). The
#                                 local cluster's scripts use the node address
#                                 (10.245.255.1, on lo) so pods reach it too;
#                                 see docs/local-cluster.md
#   SPANBENCH_EMULATOR_GRPC_PORT  gRPC port (default 9010, the usual one)
#   SPANBENCH_EMULATOR_HTTP_PORT  REST port (default 9020)
#   SPANBENCH_EMULATOR_TIMEOUT    seconds to wait for start or stop (default 30)
#
# Tests and `spanbench run` do not use this: they start a fresh emulator on
# free ports through spanner/emulator. Restart a long-running emulator before
# measuring: strong reads slow down the longer it runs (shared/EMULATOR.md).
set -euo pipefail

default_path=/usr/lib/google-cloud-sdk/bin/cloud_spanner_emulator/gateway_main
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pid_file="${root}/bin/emulator.pid"
host_file="${root}/bin/emulator.host"
log_file="${root}/bin/emulator.log"
hostname="${SPANBENCH_EMULATOR_HOSTNAME:-127.0.0.1}"
grpc_port="${SPANBENCH_EMULATOR_GRPC_PORT:-9010}"
http_port="${SPANBENCH_EMULATOR_HTTP_PORT:-9020}"
timeout="${SPANBENCH_EMULATOR_TIMEOUT:-30}"

log() { printf '[emulator] %s\n' "$*" >&2; }
die() { printf '[emulator] ERROR: %s\n' "$*" >&2; exit 1; }

# usable PATH: gateway_main and the emulator_main it starts, both executable.
usable() {
  [[ -f "$1" && -x "$1" && -f "$(dirname "$1")/emulator_main" && -x "$(dirname "$1")/emulator_main" ]]
}

# find_emulator prints gateway_main's path or fails naming what it tried.
find_emulator() {
  local candidates=() tried=() c g
  if [[ -n "${SPANBENCH_EMULATOR_PATH:-}" ]]; then
    # An explicit setting that is wrong must fail, not be replaced.
    candidates=("${SPANBENCH_EMULATOR_PATH}")
  else
    candidates=("${default_path}")
    if g="$(command -v gcloud 2>/dev/null)"; then
      g="$(readlink -f "$g")"
      c="$(dirname "$g")/cloud_spanner_emulator/gateway_main"
      [[ "$c" != "${default_path}" ]] && candidates+=("$c")
    fi
  fi
  for c in "${candidates[@]}"; do
    if usable "$c"; then
      printf '%s\n' "$c"
      return 0
    fi
    tried+=("$c")
  done
  log "cloud spanner emulator not found (tried: ${tried[*]}; need gateway_main and emulator_main, executable)"
  log "install it with: apt-get install google-cloud-cli-spanner-emulator"
  log "  or: gcloud components install cloud-spanner-emulator"
  log "  or set SPANBENCH_EMULATOR_PATH to its gateway_main"
  return 1
}

# running_pid prints the pid from the pid file if that process is still our
# gateway_main (not a reused pid), else removes a stale file and fails.
running_pid() {
  [[ -f "${pid_file}" ]] || return 1
  local pid
  pid="$(cat "${pid_file}")"
  if [[ "$pid" =~ ^[0-9]+$ ]] && [[ "$(cat "/proc/${pid}/comm" 2>/dev/null)" == gateway_main ]] \
    && [[ "$(ps -o stat= -p "$pid" 2>/dev/null)" != Z* ]]; then
    printf '%s\n' "$pid"
    return 0
  fi
  rm -f "${pid_file}" "${host_file}"
  return 1
}

# group_members PGID [EXCLUDE]: live (non-zombie) pids of the process group.
group_members() {
  ps -e -o pid=,pgid=,stat= | awk -v g="$1" -v x="${2:-}" '$2 == g && $1 != x && $3 !~ /^Z/ { print $1 }'
}

# wait_until SECONDS CMD...: poll CMD every 0.1 s, at most SECONDS.
wait_until() {
  local limit=$(( $1 * 10 )) i
  shift
  for (( i = 0; i < limit; i++ )); do
    "$@" && return 0
    sleep 0.1
  done
  return 1
}

ready() {
  curl -sf -m 2 -o /dev/null "http://${hostname}:${http_port}/v1/projects/spanbench-probe/instanceConfigs"
}

group_gone() { [[ -z "$(group_members "$1")" ]]; }

port_open() { (exec 3<>"/dev/tcp/${hostname}/$1") 2>/dev/null; }

cmd_start() {
  local gw pid
  if pid="$(running_pid)"; then
    log "already running (pid ${pid})"
    printf 'export SPANNER_EMULATOR_HOST=%s\n' "$(cat "${host_file}")"
    return 0
  fi
  gw="$(find_emulator)" || exit 1
  # Only an address of this machine: probing any other (e.g. the local
  # cluster's node address while the cluster is down) would leave it.
  if [[ "${hostname}" != 127.* && "${hostname}" != localhost ]] \
    && [[ " $(ip -o addr show 2>/dev/null | awk '{sub("/.*", "", $4); printf "%s ", $4}')" != *" ${hostname} "* ]]; then
    die "${hostname} is not an address of this machine (the local cluster's node address exists only while it runs: hack/cluster-up.sh)"
  fi
  for p in "${grpc_port}" "${http_port}"; do
    port_open "$p" && die "port $p is in use; set SPANBENCH_EMULATOR_GRPC_PORT / SPANBENCH_EMULATOR_HTTP_PORT"
  done
  mkdir -p "${root}/bin"
  # setsid makes gateway_main a process-group leader (pgid = its pid) so that
  # stop reaches the emulator_main it spawns. A background job of a script
  # is no group leader, so setsid execs in place and $! is gateway_main.
  setsid "$gw" --hostname "${hostname}" --grpc_port "${grpc_port}" --http_port "${http_port}" \
    </dev/null >"${log_file}" 2>&1 &
  pid=$!
  printf '%s\n' "$pid" >"${pid_file}"
  printf '%s:%s\n' "${hostname}" "${grpc_port}" >"${host_file}"
  if ! wait_until "${timeout}" ready; then
    log "not ready within ${timeout}s; last output (${log_file}):"
    tail -n 15 "${log_file}" >&2 || true
    cmd_stop || true
    exit 1
  fi
  log "running (pid ${pid}); stop with: hack/emulator.sh stop"
  printf 'export SPANNER_EMULATOR_HOST=%s:%s\n' "${hostname}" "${grpc_port}"
}

cmd_stop() {
  local pid
  if ! pid="$(running_pid)"; then
    log "not running"
    return 0
  fi
  # Same order as spanner/emulator: signal emulator_main first so that the
  # gateway reaps it and exits by itself (a TERMed gateway leaves
  # emulator_main running), then TERM, then KILL the whole group.
  local grace=$(( timeout / 3 > 0 ? timeout / 3 : 1 ))
  local children
  children="$(group_members "$pid" "$pid")"
  if [[ -n "$children" ]]; then
    # shellcheck disable=SC2086 # one pid per word
    kill -TERM $children 2>/dev/null || true
  else
    kill -TERM -- "-$pid" 2>/dev/null || true
  fi
  if ! wait_until "$grace" group_gone "$pid"; then
    log "still running after SIGTERM to emulator_main; SIGTERM to the group"
    kill -TERM -- "-$pid" 2>/dev/null || true
    if ! wait_until "$grace" group_gone "$pid"; then
      log "still running; SIGKILL to the group"
      kill -KILL -- "-$pid" 2>/dev/null || true
      wait_until "$grace" group_gone "$pid" || die "process group ${pid} survives SIGKILL: $(group_members "$pid" | tr '\n' ' ')"
    fi
  fi
  rm -f "${pid_file}" "${host_file}"
  log "stopped"
}

cmd_status() {
  local pid
  if pid="$(running_pid)"; then
    printf 'running pid=%s SPANNER_EMULATOR_HOST=%s\n' "$pid" "$(cat "${host_file}")"
    return 0
  fi
  printf 'not running\n'
  return 1
}

case "${1:-path}" in
  path) find_emulator ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  -h|--help) sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2 ;;
  *) die "unknown command '$1' (path|start|stop|status)" ;;
esac

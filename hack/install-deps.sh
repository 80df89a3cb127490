#!/usr/bin/env bash
# Install the Debian packages the project's tooling needs.
#
# Usage: hack/install-deps.sh [set...]
#   envtest     etcd-server                          (envtest: etcd + kube-apiserver)
#   prometheus  prometheus                           (the e2e Prometheus; promtool for the
#                                                    alert rule tests in make test-unit)
#   tools       jq openssl
#   chromium    chromium fonts-liberation            (the headless browser the HTML
#                                                    report test opens its page in, and
#                                                    the fonts its plots are measured with)
#   cluster     the local single-node cluster (hack/cluster-up.sh):
#               containerd runc containernetworking-plugins iptables conntrack
#               iproute2 etcd-server jq openssl kmod procps util-linux curl
#               bind9-dnsutils
#   all         everything above (default)
#
# Idempotent: packages already installed (dpkg-query) are skipped, and the apt
# package index is refreshed only when a package to install is unknown to it
# or the install fails (FORCE_APT_UPDATE=1 forces it). Must run as root.
set -euo pipefail

log() { printf '[install-deps] %s\n' "$*" >&2; }
die() { printf '[install-deps] ERROR: %s\n' "$*" >&2; exit 1; }

set_packages() {
  case "$1" in
    envtest) echo "etcd-server" ;;
    prometheus) echo "prometheus" ;;
    tools) echo "jq openssl" ;;
    # The report's plots lay out text with Liberation Sans metrics.
    chromium) echo "chromium fonts-liberation" ;;
    # kmod: modprobe br_netfilter; procps: sysctl, ps; util-linux: mount,
    # umount, setsid; curl: health checks; bind9-dnsutils: dig, to check that
    # CoreDNS answers; the rest: container runtime and pod network.
    cluster) echo "containerd runc containernetworking-plugins iptables conntrack iproute2 etcd-server jq openssl kmod procps util-linux curl bind9-dnsutils" ;;
    all) echo "$(set_packages envtest) $(set_packages prometheus) $(set_packages tools) $(set_packages chromium) $(set_packages cluster)" ;;
    *) return 1 ;;
  esac
}

sets=("$@")
[[ ${#sets[@]} -eq 0 ]] && sets=(all)

wanted=()
for s in "${sets[@]}"; do
  case "${s}" in
    -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
  esac
  pkgs="$(set_packages "${s}")" || die "unknown set '${s}' (known: envtest prometheus tools chromium cluster all)"
  for p in ${pkgs}; do wanted+=("${p}"); done
done

# dpkg -s reports "install ok installed" only for fully installed packages;
# a half-configured or removed-but-config-kept package must be (re)installed.
missing=()
for p in "${wanted[@]}"; do
  if [[ "$(dpkg-query -W -f='${Status}' "${p}" 2>/dev/null)" == "install ok installed" ]]; then
    continue
  fi
  dup=false
  for m in "${missing[@]+"${missing[@]}"}"; do [[ "${m}" == "${p}" ]] && dup=true; done
  "${dup}" || missing+=("${p}")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  log "all packages already installed: $(printf '%s\n' "${wanted[@]}" | sort -u | tr '\n' ' ')"
  exit 0
fi

[[ ${EUID} -eq 0 ]] || die "need root to install: ${missing[*]} (run as root, or: sudo $0 ${sets[*]})"
command -v apt-get >/dev/null 2>&1 || die "apt-get not found: this script supports Debian/Ubuntu only; install by hand: ${missing[*]}"

export DEBIAN_FRONTEND=noninteractive

# apt-get update only when needed: when a wanted package is unknown to the
# local index (a fresh machine may ship without lists), or when installing
# fails, e.g. because a stale index points at files the mirror no longer has.
apt_update() {
  log "apt-get update"
  apt-get update -q >&2 || die "apt-get update failed (are the Debian mirrors reachable?)"
}
known() { [[ -n "$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ && $2 != "(none)" {print $2}')" ]]; }

updated=false
for p in "${missing[@]}"; do
  if ! known "${p}"; then apt_update; updated=true; break; fi
done
if [[ "${FORCE_APT_UPDATE:-}" == 1 ]] && ! "${updated}"; then apt_update; updated=true; fi
for p in "${missing[@]}"; do
  known "${p}" || die "Debian package '${p}' is not available from the configured apt sources (see /etc/apt/sources.list*)"
done

log "installing: ${missing[*]}"
# --no-install-recommends keeps e.g. prometheus from pulling in a web stack.
apt_install() { apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; }
if ! apt_install; then
  "${updated}" && die "apt-get install failed for: ${missing[*]}"
  log "install failed; refreshing the package index and retrying once"
  apt_update
  apt_install || die "apt-get install failed for: ${missing[*]}"
fi

# Debian starts the services of some packages (etcd, containerd, prometheus)
# right after install when an init system runs. The project starts its own
# instances with its own data dirs and ports, so a distro instance would clash
# on ports (2379, 9090) and on /run/containerd. Stop those we just installed.
if command -v systemctl >/dev/null 2>&1 && [[ -d /run/systemd/system ]]; then
  for p in "${missing[@]}"; do
    case "${p}" in
      etcd-server) svc=etcd ;;
      containerd) svc=containerd ;;
      prometheus) svc=prometheus ;;
      *) continue ;;
    esac
    systemctl disable --now "${svc}" >/dev/null 2>&1 || true
  done
fi
log "done"

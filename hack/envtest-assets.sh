#!/usr/bin/env bash
# Assemble the binaries controller-runtime's envtest needs into one directory
# and print its absolute path as the last line on stdout:
#
#   export KUBEBUILDER_ASSETS="$(hack/envtest-assets.sh)"
#
# Contents of bin/envtest/ (symlinks):
#   etcd            Debian's etcd-server (/usr/bin/etcd), installed if missing
#   kube-apiserver  built from the Go module proxy by hack/kube-binaries.sh
#   kubectl         bin/k8s/$KUBE_VERSION/kubectl if built, else the system's
#                   (/usr/bin/kubectl), else built the same way
#
# Why not setup-envtest: it downloads release tarballs from a bucket that these
# machines cannot reach. Everything here comes from Debian or the module proxy.
#
# Env: KUBE_VERSION (default v1.33.4), ENVTEST_ASSETS (default <repo>/bin/envtest),
#      ENVTEST_BUILD_KUBECTL=1 to build kubectl $KUBE_VERSION even if one exists.
# All progress goes to stderr.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KUBE_VERSION="${KUBE_VERSION:-v1.33.4}"
export KUBE_VERSION
ASSETS="${ENVTEST_ASSETS:-${ROOT}/bin/envtest}"
K8S_BIN="${ROOT}/bin/k8s/${KUBE_VERSION}"

log() { printf '[envtest-assets] %s\n' "$*" >&2; }
die() { printf '[envtest-assets] ERROR: %s\n' "$*" >&2; exit 1; }

# etcd: Debian's etcd-server package ships /usr/bin/etcd (3.4), which the
# kube-apiserver still supports as a storage backend.
if ! command -v etcd >/dev/null 2>&1; then
  log "etcd not found; installing Debian package etcd-server"
  "${ROOT}/hack/install-deps.sh" envtest >&2 || die "could not install etcd-server (apt-get install etcd-server)"
fi
ETCD="$(command -v etcd)" || die "etcd still not on PATH after installing etcd-server"

# kube-apiserver (and kubectl when needed) from the module proxy; cached.
# kubectl: a version-matched one built earlier wins, then the system's.
to_build=(kube-apiserver)
if [[ -x "${K8S_BIN}/kubectl" ]]; then
  KUBECTL="${K8S_BIN}/kubectl"
elif [[ "${ENVTEST_BUILD_KUBECTL:-}" != 1 ]] && command -v kubectl >/dev/null 2>&1; then
  KUBECTL="$(command -v kubectl)"
else
  to_build+=(kubectl)
  KUBECTL="${K8S_BIN}/kubectl"
fi
"${ROOT}/hack/kube-binaries.sh" "${to_build[@]}" || die "building ${to_build[*]} failed"

APISERVER="${K8S_BIN}/kube-apiserver"
[[ -x "${APISERVER}" ]] || die "missing ${APISERVER} after build"
[[ -x "${KUBECTL}" ]] || die "missing ${KUBECTL}"

mkdir -p "${ASSETS}"
# ln -sfn replaces stale links (e.g. after a KUBE_VERSION change) atomically
# enough for our purposes and never follows an existing directory link.
ln -sfn "${APISERVER}" "${ASSETS}/kube-apiserver"
ln -sfn "${ETCD}" "${ASSETS}/etcd"
ln -sfn "${KUBECTL}" "${ASSETS}/kubectl"

# Sanity check: the binaries actually run (e.g. not a truncated file).
"${ASSETS}/kube-apiserver" --version >/dev/null 2>&1 || die "${ASSETS}/kube-apiserver does not run"
"${ASSETS}/etcd" --version >/dev/null 2>&1 || die "${ASSETS}/etcd does not run"

log "kube-apiserver: $("${ASSETS}/kube-apiserver" --version 2>&1)"
log "etcd: $("${ASSETS}/etcd" --version 2>&1 | head -n1)"
log "kubectl: ${KUBECTL}"
# The only line on stdout, so $(...) captures just the path.
cd "${ASSETS}" && pwd

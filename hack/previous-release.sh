#!/usr/bin/env bash
# Build "the previous release" for the upgrade end-to-end test
# (test/e2e/upgrade_test.go): the source of commit $PREVIOUS_RELEASE (default
# hack/previous-release.commit), its image tagged :previous, and its e2e
# install manifests rendered with that image.
#
# Usage: hack/previous-release.sh [--import]
#   --import   load the image into the local cluster's containerd
#              (hack/cluster-up.sh must have started it)
# Prints the rendered manifests' path as the last line on stdout; the e2e
# suite reads it from $SPANBENCH_E2E_PREVIOUS_MANIFESTS.
#
# spanbench has no release tags yet: the commit named in
# hack/previous-release.commit stands for the release before the current
# one. It is the last commit before result chunks (50246ee), whose runner
# Roles have no rule for them: the upgrade the test proves is the one that
# broke runs in flight. Built once per commit into bin/previous/COMMIT
# (git archive: no worktree, no checkout of this tree changes).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=hack/cluster-env.sh
source "${ROOT}/hack/cluster-env.sh"
NAME=localhost/spanbench/spanbench

log() { printf '[previous-release] %s\n' "$*" >&2; }
die() { printf '[previous-release] ERROR: %s\n' "$*" >&2; exit 1; }

do_import=false
while [[ $# -gt 0 ]]; do
  case "$1" in
    --import) do_import=true; shift ;;
    -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

commit="${PREVIOUS_RELEASE:-$(tr -d '[:space:]' < "${ROOT}/hack/previous-release.commit")}"
commit="$(git -C "${ROOT}" rev-parse --verify "${commit}^{commit}")" || die "no commit ${commit} in this repository"
out="${ROOT}/bin/previous/${commit}"
manifests="${out}/install.yaml"
archive="${out}/image.path"

if [[ ! -s "${manifests}" || ! -s "${archive}" ]]; then
  log "building the previous release ${commit:0:12} in ${out}"
  rm -rf "${out}"
  mkdir -p "${out}/src"
  git -C "${ROOT}" archive "${commit}" | tar -x -C "${out}/src"
  # Its own build script, from its own tree: the image it shipped.
  "${out}/src/hack/build-images.sh" --tag previous | tail -n 1 > "${archive}.tmp"
  # The version-matched kubectl, built if missing (hack/kube-binaries.sh
  # takes a lock: hack/demo.sh up may be building it at the same time).
  kubectl="${K8S_BIN}/kubectl"
  [[ -x "${kubectl}" ]] || "${ROOT}/hack/kube-binaries.sh" kubectl >&2 || die "building kubectl failed (hack/kube-binaries.sh kubectl)"
  # Its e2e install (config/default plus --keep-runners), on its image.
  "${kubectl}" kustomize "${out}/src/test/e2e/testdata/install" \
    | sed "s#${NAME}:dev#${NAME}:previous#g" > "${manifests}.tmp"
  grep -q "${NAME}:previous" "${manifests}.tmp" || die "the previous release's manifests do not name ${NAME}:dev"
  mv "${archive}.tmp" "${archive}"
  mv "${manifests}.tmp" "${manifests}"
fi
if "${do_import}"; then
  CONTAINERD_ADDRESS="${CONTAINERD_SOCK}" "${ROOT}/hack/image.sh" --import "$(cat "${archive}")" >/dev/null
  log "image ${NAME}:previous imported"
fi
echo "${manifests}"

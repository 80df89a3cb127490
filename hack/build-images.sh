#!/usr/bin/env bash
# Build spanbench's one image here, without Docker or a registry, and
# optionally load it into the local cluster.
#
# Usage: hack/build-images.sh [--tag TAG] [--import]
#   --tag TAG   image tag (default $IMAGE_TAG, else `git describe --tags
#               --always --dirty`, else dev). The kustomize install
#               (config/default) runs :dev, so the local cluster's scripts
#               pass --tag dev.
#   --import    load the archive into the local cluster's containerd
#               (hack/cluster-up.sh must have started it)
# Prints the archive path as the last line on stdout.
#
# The image holds the static binaries bin/spanbench and bin/spanbench-runner
# (built with CGO_ENABLED=0 by `make build`) at /spanbench and
# /spanbench-runner and the host's CA bundle, runs as 65532:65532 (nonroot)
# with `spanbench` as its entrypoint: the same image serves the manager
# (`spanbench manager`) and the runner pods (`/spanbench-runner runner`). It matches what the Dockerfile builds for users (distroless
# static, nonroot); here no base image can be pulled, so hack/image.sh writes
# the single layer itself.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NAME=localhost/spanbench/spanbench

log() { printf '[build-images] %s\n' "$*" >&2; }
die() { printf '[build-images] ERROR: %s\n' "$*" >&2; exit 1; }

tag="${IMAGE_TAG:-}"
do_import=false
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tag) [[ $# -ge 2 ]] || die "--tag needs a value"; tag="$2"; shift 2 ;;
    --import) do_import=true; shift ;;
    -h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
if [[ -z "${tag}" ]]; then
  tag="$(git -C "${ROOT}" describe --tags --always --dirty 2>/dev/null || echo dev)"
fi

command -v go >/dev/null 2>&1 || die "go not found: install Go 1.26 (see README.md)"
log "building bin/spanbench and bin/spanbench-runner (static)"
make -C "${ROOT}" --no-print-directory build >&2 || die "make build failed"
# A dynamically linked binary would start in no container here (the image
# has no libc): refuse it rather than ship a pod that cannot exec.
if command -v file >/dev/null 2>&1 && [[ "$(file -b "${ROOT}/bin/spanbench")" == *"dynamically linked"* ]]; then
  die "bin/spanbench is dynamically linked; the image needs a static binary (CGO_ENABLED=0)"
fi

dir="$(mktemp -d)"
trap 'rm -rf "${dir}"' EXIT
cp "${ROOT}/bin/spanbench" "${dir}/spanbench"
cp "${ROOT}/bin/spanbench-runner" "${dir}/spanbench-runner"
# CA certificates, as distroless carries them: a runner of this image can
# then also reach Cloud Spanner over TLS, not only the emulator.
if [[ -f /etc/ssl/certs/ca-certificates.crt ]]; then
  mkdir -p "${dir}/etc/ssl/certs"
  cp /etc/ssl/certs/ca-certificates.crt "${dir}/etc/ssl/certs/"
fi
args=(--user 65532:65532)
"${do_import}" && args+=(--import)
out="$("${ROOT}/hack/image.sh" "${args[@]}" "${NAME}" "${tag}" "${dir}" /spanbench | tail -n 1)"
log "image ${NAME}:${tag} in ${out}"
echo "${out}"

#!/usr/bin/env bash
# Build a one-layer OCI image archive from a directory, without Docker or a
# registry, and optionally import it into the local cluster's containerd.
#
# Build:
#   hack/image.sh [options] <name> <tag> <dir> [entrypoint [arg...]]
#     name        image name, e.g. localhost/spanbench/runner. A name without a
#                 registry host gets Docker's defaults (pause -> docker.io/library/pause),
#                 exactly as kubelet normalizes the name in a pod spec.
#     dir         directory whose contents become the image root (/); typically
#                 one static binary plus data files
#     entrypoint  defaults to /<the only executable file in dir>
#   options:
#     --user U[:G]   image user (default 65532:65532, "nonroot"); --user 0:0 for root
#     --env K=V      add an environment variable (repeatable)
#     --workdir D    working directory (default /)
#     --out FILE     archive path (default bin/images/<name with / -> _>-<tag>.oci.tar)
#     --import       import the archive into containerd right after building
#   Prints the archive path as the last line on stdout.
#
# Import only:
#   hack/image.sh --import FILE...
#   Env CONTAINERD_ADDRESS: containerd socket (default: the one
#   hack/cluster-up.sh starts, /run/spanbench-cluster/containerd.sock).
#   Images go to containerd namespace k8s.io, the one the CRI plugin uses.
#
# Why: these machines reach no container registry, so every image the cluster
# runs (pause, CoreDNS, the project's own) is built here from static binaries.
# Pod specs must use the exact tag with imagePullPolicy IfNotPresent or Never.
#
# The archive is reproducible: fixed mtimes, owners and order, gzip -n, so
# rebuilding unchanged inputs gives the same digest and re-imports are no-ops.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CONTAINERD_ADDRESS="${CONTAINERD_ADDRESS:-${CLUSTER_RUN_DIR:-/run/spanbench-cluster}/containerd.sock}"

log() { printf '[image] %s\n' "$*" >&2; }
die() { printf '[image] ERROR: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '2,31p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit "${1:-2}"; }

need() {
  local tool
  for tool in "$@"; do
    command -v "${tool}" >/dev/null 2>&1 || die "'${tool}' not found (install it: hack/install-deps.sh tools, or apt-get install ${tool})"
  done
}

import_archives() {
  need ctr
  [[ -S "${CONTAINERD_ADDRESS}" ]] || die "no containerd socket at ${CONTAINERD_ADDRESS} (is the local cluster up? hack/cluster-up.sh; or set CONTAINERD_ADDRESS)"
  local f
  for f in "$@"; do
    [[ -f "${f}" ]] || die "no such archive: ${f}"
    log "importing ${f} into containerd (namespace k8s.io)"
    # --all-platforms: our index has exactly one linux/amd64 manifest, do not
    # let ctr filter it away on a mismatch; ctr still unpacks for the host.
    ctr --address "${CONTAINERD_ADDRESS}" -n k8s.io images import --all-platforms "${f}" >&2 \
      || die "ctr images import failed for ${f}"
  done
}

# Full reference the way Docker/kubelet normalize it, so that the name in a pod
# spec and the name stored in containerd match.
normalize_name() {
  local name="$1" first="${1%%/*}"
  if [[ "${name}" != */* ]]; then
    echo "docker.io/library/${name}"
  elif [[ "${first}" == *.* || "${first}" == *:* || "${first}" == localhost ]]; then
    echo "${name}"
  else
    echo "docker.io/${name}"
  fi
}

# Writes "sha256:<hex> <size>" of a file.
digest_size() {
  local sum size
  sum="$(sha256sum "$1" | cut -d' ' -f1)"
  size="$(stat -c %s "$1")"
  echo "sha256:${sum} ${size}"
}

# --- argument parsing ---
user="65532:65532"
workdir="/"
out=""
do_import=false
envs=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    -h|--help) usage 0 ;;
    --user) [[ $# -ge 2 ]] || usage; user="$2"; shift 2 ;;
    --env) [[ $# -ge 2 ]] || usage; [[ "$2" == *=* ]] || die "--env wants K=V, got '$2'"; envs+=("$2"); shift 2 ;;
    --workdir) [[ $# -ge 2 ]] || usage; workdir="$2"; shift 2 ;;
    --out) [[ $# -ge 2 ]] || usage; out="$2"; shift 2 ;;
    --import) do_import=true; shift ;;
    --) shift; break ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) break ;;
  esac
done

# `--import FILE...` alone (every argument an existing file): import them.
if "${do_import}" && [[ $# -ge 1 ]]; then
  all_files=true
  for a in "$@"; do [[ -f "${a}" ]] || all_files=false; done
  if "${all_files}"; then
    import_archives "$@"
    exit 0
  fi
fi

[[ $# -ge 3 ]] || usage
name="$1" tag="$2" dir="$3"
shift 3
[[ "${tag}" =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || die "invalid tag '${tag}'"
[[ "${tag}" != latest ]] || die "tag 'latest' makes kubelet always pull, which cannot work here: use an exact tag"
[[ -d "${dir}" ]] || die "not a directory: ${dir}"
need tar gzip sha256sum jq stat
ref="$(normalize_name "${name}"):${tag}"

entrypoint=("$@")
if [[ ${#entrypoint[@]} -eq 0 ]]; then
  mapfile -t exes < <(find "${dir}" -maxdepth 1 -type f -perm -u+x -printf '/%f\n')
  [[ ${#exes[@]} -eq 1 ]] || die "cannot guess the entrypoint: ${dir} has ${#exes[@]} executables at its top; pass it after <dir>"
  entrypoint=("${exes[0]}")
fi

if [[ -z "${out}" ]]; then
  out="${ROOT}/bin/images/${name//\//_}-${tag}.oci.tar"
fi
mkdir -p "$(dirname "${out}")"

work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

# Root filesystem: the given dir plus a minimal skeleton a static program may
# expect (a writable /tmp, a passwd entry for the user), unless dir has them.
rootfs="${work}/rootfs"
mkdir -p "${rootfs}"
cp -a "${dir}/." "${rootfs}/"
mkdir -p "${rootfs}/tmp" "${rootfs}/etc"
chmod 1777 "${rootfs}/tmp"
[[ -e "${rootfs}/etc/passwd" ]] || printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "${rootfs}/etc/passwd"
[[ -e "${rootfs}/etc/group" ]] || printf 'root:x:0:\nnonroot:x:65532:\n' > "${rootfs}/etc/group"

# The layer: uncompressed digest = diff_id (config), compressed = blob digest.
layout="${work}/layout"
mkdir -p "${layout}/blobs/sha256"
tar --sort=name --mtime='@0' --owner=0 --group=0 --numeric-owner --format=gnu \
  -C "${rootfs}" -cf "${work}/layer.tar" .
read -r diff_id _ < <(digest_size "${work}/layer.tar")
gzip -n -9 < "${work}/layer.tar" > "${work}/layer.tar.gz"
read -r layer_digest layer_size < <(digest_size "${work}/layer.tar.gz")
mv "${work}/layer.tar.gz" "${layout}/blobs/sha256/${layer_digest#sha256:}"

# Image config (OCI image-spec "application/vnd.oci.image.config.v1+json").
env_json="$(printf '%s\n' "PATH=/usr/local/bin:/usr/bin:/bin" "${envs[@]+"${envs[@]}"}" | jq -R . | jq -s .)"
ep_json="$(printf '%s\n' "${entrypoint[@]}" | jq -R . | jq -s .)"
jq -n -c \
  --arg user "${user}" --arg workdir "${workdir}" --arg diff "${diff_id}" \
  --argjson env "${env_json}" --argjson ep "${ep_json}" --arg ref "${ref}" \
  '{created: "1970-01-01T00:00:00Z", architecture: "amd64", os: "linux",
    config: {User: $user, Env: $env, Entrypoint: $ep, WorkingDir: $workdir,
             Labels: {"org.opencontainers.image.ref.name": $ref}},
    rootfs: {type: "layers", diff_ids: [$diff]},
    history: [{created: "1970-01-01T00:00:00Z", created_by: "hack/image.sh"}]}' \
  > "${work}/config.json"
read -r config_digest config_size < <(digest_size "${work}/config.json")
mv "${work}/config.json" "${layout}/blobs/sha256/${config_digest#sha256:}"

jq -n -c \
  --arg cd "${config_digest}" --argjson cs "${config_size}" \
  --arg ld "${layer_digest}" --argjson ls "${layer_size}" \
  '{schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
    config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $cd, size: $cs},
    layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: $ld, size: $ls}]}' \
  > "${work}/manifest.json"
read -r manifest_digest manifest_size < <(digest_size "${work}/manifest.json")
mv "${work}/manifest.json" "${layout}/blobs/sha256/${manifest_digest#sha256:}"

# index.json: io.containerd.image.name gives `ctr images import` the full
# name to store; org.opencontainers.image.ref.name is the OCI-standard tag.
jq -n -c \
  --arg md "${manifest_digest}" --argjson ms "${manifest_size}" --arg ref "${ref}" --arg tag "${tag}" \
  '{schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json",
    manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $md, size: $ms,
                 platform: {architecture: "amd64", os: "linux"},
                 annotations: {"io.containerd.image.name": $ref, "org.opencontainers.image.ref.name": $tag}}]}' \
  > "${layout}/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' > "${layout}/oci-layout"

tar --sort=name --mtime='@0' --owner=0 --group=0 --numeric-owner -C "${layout}" -cf "${out}.tmp" oci-layout index.json blobs
mv -f "${out}.tmp" "${out}"
log "built ${ref} (manifest ${manifest_digest}, layer ${layer_size} bytes) -> ${out}"

if "${do_import}"; then
  import_archives "${out}"
fi
echo "${out}"

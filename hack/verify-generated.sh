#!/usr/bin/env bash
# Regenerates the generated files and fails if that changes any of them.
# It compares against the working tree, not HEAD, so it also works before
# a commit: what must match is the source as it stands now.
set -euo pipefail
cd "$(dirname "$0")/.."

paths=(api/v1alpha1/zz_generated.deepcopy.go config/crd config/rbac config/grafana charts)
snapshot=$(mktemp -d)
trap 'rm -rf "$snapshot"' EXIT
for p in "${paths[@]}"; do
  if [ -e "$p" ]; then
    mkdir -p "$snapshot/$(dirname "$p")"
    cp -a "$p" "$snapshot/$p"
  fi
done

make --no-print-directory generate manifests >/dev/null

drift=0
for p in "${paths[@]}"; do
  if ! diff -r "$snapshot/$p" "$p" >/dev/null 2>&1 && [ -e "$p" -o -e "$snapshot/$p" ]; then
    echo "generated files drifted: $p" >&2
    diff -r "$snapshot/$p" "$p" >&2 || true
    drift=1
  fi
done
if [ "$drift" -ne 0 ]; then
  echo "run 'make generate manifests' and commit the result" >&2
  exit 1
fi
echo "generated files are up to date"

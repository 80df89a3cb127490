#!/usr/bin/env bash
# Fails when a layer links what its role must not (DESIGN "Layout"):
#  - the controllers link no load engine, scheduler or pod role (the
#    manager may read the protocol and the result format);
#  - the load engine imports neither Spanner nor Kubernetes.
set -euo pipefail
cd "$(dirname "$0")/.."
mod=github.com/spanbench/spanbench

fail=0
# refuse LAYER REGEX WHY: no package that `go list -deps LAYER` lists may match REGEX.
refuse() {
  local layer=$1 regex=$2 why=$3 found
  # shellcheck disable=SC2086 # a layer may be several patterns
  found=$(go list -deps $layer | grep -E "$regex" || true)
  if [ -n "$found" ]; then
    echo "$layer links what $why:" >&2
    echo "$found" | sed 's/^/  /' >&2
    fail=1
  fi
}

refuse ./controllers/... "^$mod/runner/(engine|schedule|clock|metrics|pod|shardrun)(/|\$)" \
  "the manager must not (the engine, the scheduler or the pod role)"
refuse "./runner/engine/... ./runner/schedule/... ./runner/clock/..." "^cloud.google.com/go/spanner(/|\$)|^k8s.io/|^sigs.k8s.io/controller-runtime" \
  "the load engine must not (Spanner or Kubernetes)"

if [ "$fail" -ne 0 ]; then
  exit 1
fi
echo "layers link only what their roles need"

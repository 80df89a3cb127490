#!/usr/bin/env bash
# Fails when a layer links what its role must not (DESIGN "Layout"):
#  - the controllers link no load engine, scheduler or pod role (the
#    manager may read the protocol and the result format);
#  - the load engine imports neither Spanner nor Kubernetes;
#  - the API links nothing of this module but api/ and, outside the
#    standard library, only k8s.io/ and sigs.k8s.io/ packages and what they
#    link: a client of the API types (a GitOps tool, another operator) gets
#    no SQL parser and no Spanner client (spanner/customcheck holds the
#    Custom workload's SQL checks).
set -euo pipefail
cd "$(dirname "$0")/.."
mod=github.com/spanbench/spanbench

fail=0
# refuse LAYER REGEX WHY [EXCEPT]: no package that `go list -deps LAYER`
# lists may match REGEX (unless it matches EXCEPT).
refuse() {
  local layer=$1 regex=$2 why=$3 except=${4:-'^$'} found
  # shellcheck disable=SC2086 # a layer may be several patterns
  found=$(go list -deps $layer | grep -E "$regex" | grep -vE "$except" || true)
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

refuse ./api/... "^$mod/" "the API must not (this module's packages outside api/)" "^$mod/api(/|\$)"
# The API's own imports outside the standard library and the module must be
# Kubernetes'; everything else it links then comes through them.
# shellcheck disable=SC2046 # one argument per import path
found=$(go list -f '{{if not .Standard}}{{.ImportPath}}{{end}}' $(go list -f '{{join .Imports "\n"}}' ./api/... | sort -u) |
  grep -vE "^$mod/|^(k8s\.io|sigs\.k8s\.io)/" || true)
if [ -n "$found" ]; then
  echo "./api/... imports what is neither the standard library nor Kubernetes':" >&2
  echo "$found" | sed 's/^/  /' >&2
  fail=1
fi

if [ "$fail" -ne 0 ]; then
  exit 1
fi
echo "layers link only what their roles need"

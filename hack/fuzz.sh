#!/usr/bin/env bash
# Runs every Go fuzz target of the module for FUZZTIME each (default 1m).
# `go test` runs their seed corpora on every test run; this explores
# beyond them. A failing input is written to the package's
# testdata/fuzz/<target>/: commit it, it becomes a regression case.
set -euo pipefail
fuzztime=${FUZZTIME:-1m}
for pkg in $(go list ./...); do
	for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		echo "== $pkg $target ($fuzztime)"
		go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime"
	done
done

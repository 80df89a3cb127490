#!/usr/bin/env bash
# Builds the custom golangci-lint that .custom-gcl.yml describes (golangci-lint
# plus module plugins) into $1, the way `golangci-lint custom` does, except that
# the golangci-lint source comes from the Go module proxy instead of a git
# clone of github.com: the proxy is what this project's builds already depend
# on, and it serves modules by checksum (go.sum database) where a clone would
# be a second, unauthenticated network source.
set -euo pipefail
cd "$(dirname "$0")/.."

out=$(realpath -m "${1:?usage: build-custom-gcl.sh OUTPUT}")
cfg=.custom-gcl.yml

# The file is ours and flat; a tiny reader keeps the build free of a YAML tool.
field() { sed -n "s/^$1: *//p" "$cfg" | head -1; }
version=$(field version)
# The API types and the rest of the code are linted by one golangci-lint.
if [ -n "${GOLANGCI_LINT_VERSION:-}" ] && [ "$version" != "$GOLANGCI_LINT_VERSION" ]; then
  echo "$cfg: version $version, the Makefile's GOLANGCI_LINT_VERSION is $GOLANGCI_LINT_VERSION; make them agree" >&2
  exit 1
fi
# Plugin fields are the indented ones.
mapfile -t modules < <(sed -n 's/^ \+- module: *//p' "$cfg")
mapfile -t imports < <(sed -n 's/^ \+import: *//p' "$cfg")
mapfile -t versions < <(sed -n 's/^ \+version: *//p' "$cfg")
if [ "${#modules[@]}" -eq 0 ] || [ "${#modules[@]}" -ne "${#imports[@]}" ] || [ "${#modules[@]}" -ne "${#versions[@]}" ]; then
  echo "$cfg: each plugin needs module, import and version" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
src=$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "github.com/golangci/golangci-lint/v2@$version" \
  | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
cp -r "$src" "$work/golangci-lint"
chmod -R u+w "$work/golangci-lint"
cd "$work/golangci-lint"

{
  echo "package main"
  echo
  echo "import ("
  for imp in "${imports[@]}"; do echo "	_ \"$imp\""; done
  echo ")"
} >cmd/golangci-lint/plugins.go
for i in "${!modules[@]}"; do
  go get "${modules[$i]}@${versions[$i]}"
done
go mod tidy
go build -trimpath -ldflags "-s -w -X main.version=$version-custom" -o "$out" ./cmd/golangci-lint

# spanbench — see README.md. `make help` lists the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN := $(CURDIR)/bin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/spanbench/spanbench/spanner/session.Version=$(VERSION)
CONTROLLER_GEN_VERSION := v0.18.0
CONTROLLER_GEN := $(BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
# -p 3 -parallel 4: the unit stage's packages and their parallel tests
# mostly wait (envtest, emulators, windows measured in real time), not
# compute, so Go's default for both (GOMAXPROCS, 2 here) left the stage
# waiting on one package after another. Not more packages at once: the
# TPC-C tests of spanner/workload are CPU-bound and hold 5-minute bounds
# (docs/performance.md, section (k)).
GO_TEST_FLAGS ?= -count=1 -timeout 20m -p 3 -parallel 4
# UNIT_FIRST are the unit stage's longest packages, longest first: go test
# starts packages in the order it is given them, and the stage lasts at
# least as long as its last long package, started late behind short ones.
# Their results print first, the others' after them.
UNIT_FIRST := ./controllers/benchmarkrun ./cmd/spanbench ./spanner/workload ./controllers/benchmarkcampaign
SAMPLE ?= config/samples/ycsb-read-vs-sql.yaml

include hack/toolchain.mk
include hack/helm.mk
include hack/e2e.mk

.PHONY: help
help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

.PHONY: build
build: ## build bin/spanbench and the runner pods' bin/spanbench-runner (static)
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/spanbench ./cmd/spanbench
	CGO_ENABLED=0 go build -trimpath -tags runner -ldflags '$(LDFLAGS)' -o $(BIN)/spanbench-runner ./cmd/spanbench

.PHONY: run-sample
run-sample: build ## run a sample workload end to end against a fresh local emulator
	$(BIN)/spanbench run -f $(SAMPLE) --fresh-emulator

$(CONTROLLER_GEN):
	GOBIN=$(BIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(BIN)/controller-gen $(CONTROLLER_GEN)

GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)

$(GOLANGCI_LINT):
	@mkdir -p $(BIN)/lint-build
	cd $(BIN)/lint-build && GOBIN=$(BIN)/lint-build go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(BIN)/lint-build/golangci-lint $(GOLANGCI_LINT)

# golangci-lint with kube-api-linter compiled in (.custom-gcl.yml), for the
# API types. The name carries a hash of .custom-gcl.yml, so a new plugin
# or golangci-lint version builds a new binary instead of reusing the
# cached one.
GOLANGCI_KAL := $(BIN)/golangci-lint-kal-$(shell sha256sum .custom-gcl.yml | cut -c1-12)

$(GOLANGCI_KAL):
	GOLANGCI_LINT_VERSION=$(GOLANGCI_LINT_VERSION) hack/build-custom-gcl.sh $@.tmp
	mv $@.tmp $@

.PHONY: lint
lint: $(GOLANGCI_LINT) $(GOLANGCI_KAL) ## run golangci-lint (.golangci.yml), and kube-api-linter on api/ (.golangci-kal.yml)
	$(GOLANGCI_LINT) run --allow-parallel-runners --build-tags e2e ./...
	$(GOLANGCI_KAL) run --allow-parallel-runners -c .golangci-kal.yml ./api/...

.PHONY: generate
generate: $(CONTROLLER_GEN) ## regenerate deepcopy functions and the Grafana dashboards (config/grafana)
	$(CONTROLLER_GEN) object paths=./api/...
	go run ./hack/dashboards -out config/grafana

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## regenerate CRDs and RBAC, and the Helm chart's copies of them
	$(CONTROLLER_GEN) crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=spanbench-manager paths=./controllers/... output:rbac:artifacts:config=config/rbac
	hack/gen-chart.sh

.PHONY: verify
verify: $(CONTROLLER_GEN) ## fail when generated files drift, a layer links what its role must not (hack/verify-layers.sh), or code is not gofmt and go vet clean
	hack/verify-generated.sh
	hack/verify-layers.sh
	@unformatted=$$(gofmt -l $$(find . -name '*.go' -not -path './bin/*')); \
	  test -z "$$unformatted" || { echo "gofmt needed:"; echo "$$unformatted"; exit 1; }
	go vet ./...
	go vet -tags e2e ./test/e2e/

.PHONY: emulator-check
emulator-check: ## fail with a clear message when the Cloud Spanner emulator is not installed
	@hack/emulator.sh path >/dev/null

# The suites' Debian packages: etcd (envtest), promtool (the alert rule
# tests) and Chromium (the HTML report test). Installed here rather than
# checked, so that `make test` works on a fresh machine; idempotent and
# quick once they are there.
.PHONY: test-deps
test-deps: ## install the Debian packages the suites need: etcd, promtool (prometheus), Chromium
	hack/install-deps.sh envtest prometheus chromium

# `make test` runs the unit stage and the end-to-end cycle side by side
# (hack/test.sh; the cycle's output in bin/test-e2e.log). Every Debian
# package of both is installed first: two apt-get at once would fight over
# dpkg's lock.
.PHONY: test
test: deps ## every suite: unit, emulator, envtest, Helm chart, and beside them end to end on a local cluster (root)
	MAKE="$(MAKE)" hack/test.sh

.PHONY: test-unit
test-unit: test-deps verify lint envtest-assets emulator-check ## the suites that need no cluster: unit, emulator, envtest, Helm chart, dashboards, alert rules (promtool), HTML report (headless Chromium), then a short fuzz
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) SPANBENCH_HELM=$$(HELM_VERSION=$(HELM_VERSION) hack/helm.sh) go test $(GO_TEST_FLAGS) $(UNIT_FIRST) ./...
	$(MAKE) fuzz FUZZTIME=$(FUZZTIME_UNIT)

# FUZZERS are the fuzz targets of untrusted input (shard results, campaign
# history, manifests, durations), as package:target. Each runs for FUZZTIME
# in `make fuzz`, for FUZZTIME_UNIT in `make test-unit`; their seed corpora
# and committed crashers (testdata/fuzz) run with every `go test`.
# FUZZTIME_UNIT is a count of executions, not a duration: with a duration,
# Go 1.26's coordinator can fail a target with a bare "context deadline
# exceeded" when the time runs out mid-execution (golang/go#75804, fixed in
# Go 1.27), which failed a clean-clone CI run with no crasher found.
FUZZERS := ./runner/protocol:FuzzDecodeResult ./result:FuzzReadAndMerge ./result:FuzzMergePair \
	./campaign/history:FuzzDecode ./cmd/spanbench/manifest:FuzzParse ./api/v1alpha1:FuzzDurationSyntaxIsGoGrammar \
	./spanner/pricing:FuzzParseCatalog \
	./result/capacity:FuzzParseCondition
FUZZTIME ?= 1m
FUZZTIME_UNIT ?= 3000x

.PHONY: fuzz
fuzz: ## fuzz untrusted-input parsers, each target for FUZZTIME (default 1m); a crasher lands in testdata/fuzz: commit it
	@set -e; for f in $(FUZZERS); do \
		echo "fuzz $${f#*:} ($${f%%:*}) for $(FUZZTIME)"; \
		go test -run '^$$' -fuzz "^$${f#*:}$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 10s "$${f%%:*}"; \
	done

.PHONY: bench
bench: envtest-assets emulator-check ## measure the load engine, open loop against a bare loop, and the controller at scale (see docs/performance.md)
	go test -run '^$$' -bench . -benchtime 1x -count 1 ./runner/schedule/ ./runner/engine/ ./runner/shardrun/ ./spanner/dataset/ ./result/histogram/ ./result/ ./internal/openloop/
	KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) go test -run '^$$' -bench . -benchtime 1x -count 1 -timeout 60m ./test/scale/

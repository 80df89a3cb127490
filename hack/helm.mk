# Helm chart targets: included from the main Makefile (include hack/helm.mk).
#
#   make helm        build the Helm CLI from the Go module proxy (cached in bin/)
#   make chart       regenerate the chart's CRDs and manager rules from config/
#                    (`make manifests` runs it after controller-gen)
#   make helm-lint   helm lint the chart, with the default values and with
#                    every toggle on (charts/spanbench/ci/all-on-values.yaml)
#   make test-helm   lint, schema, render and chart-vs-kustomize tests
#                    (charts/spanbench/chart_test.go)

HELM_HACK_DIR := $(dir $(lastword $(MAKEFILE_LIST)))
HELM_VERSION ?= v3.18.6
CHART_DIR ?= charts/spanbench

.PHONY: helm chart helm-lint test-helm

helm: ## build the Helm CLI into bin/helm-<version> from the Go module proxy (cached); prints its path
	@HELM_VERSION=$(HELM_VERSION) $(HELM_HACK_DIR)helm.sh

chart: ## regenerate the Helm chart's CRDs and manager ClusterRole rules from config/
	$(HELM_HACK_DIR)gen-chart.sh

helm-lint: ## helm lint the chart with the default values and with every toggle on
	@helm=$$(HELM_VERSION=$(HELM_VERSION) $(HELM_HACK_DIR)helm.sh); \
	  "$$helm" lint --strict $(CHART_DIR) && \
	  "$$helm" lint --strict $(CHART_DIR) --values $(CHART_DIR)/ci/all-on-values.yaml

test-helm: ## test the Helm chart: lint, values schema, rendering, agreement with config/default
	@command -v kubectl >/dev/null || { echo "test-helm needs kubectl on PATH (kubectl kustomize)"; exit 1; }
	SPANBENCH_HELM=$$(HELM_VERSION=$(HELM_VERSION) $(HELM_HACK_DIR)helm.sh) go test $(GO_TEST_FLAGS) ./$(CHART_DIR)/...

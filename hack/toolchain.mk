# Toolchain targets: included from the main Makefile (include hack/toolchain.mk).
#
#   make deps                 install Debian packages (DEPS_SETS, default: all)
#   make envtest-assets       etcd + kube-apiserver + kubectl in $(ENVTEST_ASSETS)
#   make kube-binaries        build $(KUBE_BINARIES) $(KUBE_VERSION) into bin/k8s/
#   make cluster-up / cluster-down / cluster-status
#                             the local single-node cluster (hack/cluster-up.sh)
#
# Tests that use envtest can run as:
#   KUBEBUILDER_ASSETS=$(ENVTEST_ASSETS) go test ./...
# after `make envtest-assets` (or depend on the target).

TOOLCHAIN_HACK_DIR := $(dir $(lastword $(MAKEFILE_LIST)))

KUBE_VERSION ?= v1.33.4
ENVTEST_ASSETS ?= $(CURDIR)/bin/envtest
KUBE_BINARIES ?= all
DEPS_SETS ?= all
CLUSTER_KUBECONFIG ?= $(CURDIR)/bin/cluster/kubeconfig

.PHONY: deps envtest-assets kube-binaries cluster-up cluster-down cluster-status

deps: ## install the Debian packages the tooling needs (DEPS_SETS=all|envtest|cluster|prometheus|tools|chromium)
	$(TOOLCHAIN_HACK_DIR)install-deps.sh $(DEPS_SETS)

envtest-assets: ## etcd + kube-apiserver + kubectl for envtest in bin/envtest
	KUBE_VERSION=$(KUBE_VERSION) ENVTEST_ASSETS=$(ENVTEST_ASSETS) $(TOOLCHAIN_HACK_DIR)envtest-assets.sh

kube-binaries: ## build Kubernetes binaries into bin/k8s/<version> (KUBE_BINARIES=all)
	KUBE_VERSION=$(KUBE_VERSION) $(TOOLCHAIN_HACK_DIR)kube-binaries.sh $(KUBE_BINARIES)

cluster-up: ## start the local single-node cluster (root; KUBECONFIG=bin/cluster/kubeconfig)
	KUBE_VERSION=$(KUBE_VERSION) $(TOOLCHAIN_HACK_DIR)cluster-up.sh

cluster-down: ## stop the local cluster and clean up the host
	$(TOOLCHAIN_HACK_DIR)cluster-down.sh

cluster-status: ## show the local cluster's nodes and pods
	KUBECONFIG=$(CLUSTER_KUBECONFIG) kubectl get nodes,pods -A -o wide

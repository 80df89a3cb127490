# Images, the newcomer's demo and the end-to-end suite: included from the
# main Makefile (include hack/e2e.mk). All but `images` need root: they run
# the local single-node cluster (docs/local-cluster.md).
#
#   make images      build the spanbench image as an OCI archive in bin/images
#                    (IMAGE_TAG, default `git describe`); IMPORT=1 also loads
#                    it into the local cluster
#   make demo        a BenchmarkRun from real pods on a local cluster, against
#                    the emulator; prints its result (hack/demo.sh)
#   make demo-down   stop the emulator and the local cluster
#   make test-e2e    cluster up, end-to-end suite once per install (kustomize,
#                    then Helm), teardown, timed (hack/e2e.sh;
#                    E2E_RUN=regexp, E2E_KEEP=1)

E2E_HACK_DIR := $(dir $(lastword $(MAKEFILE_LIST)))

.PHONY: images demo demo-down test-e2e

images: ## build the spanbench image (OCI archive in bin/images; IMAGE_TAG=..., IMPORT=1 loads it into the local cluster)
	$(E2E_HACK_DIR)build-images.sh $(if $(IMAGE_TAG),--tag $(IMAGE_TAG)) $(if $(filter 1,$(IMPORT)),--import)

demo: ## the first command: a BenchmarkRun on a local Kubernetes against the emulator, with its result (root)
	$(E2E_HACK_DIR)demo.sh

demo-down: ## stop the demo's emulator and local cluster, and clean up the host (root)
	$(E2E_HACK_DIR)demo.sh down

test-e2e: ## end-to-end tests on a local cluster: up, suite, teardown (root; E2E_RUN=regexp, E2E_KEEP=1)
	$(E2E_HACK_DIR)e2e.sh

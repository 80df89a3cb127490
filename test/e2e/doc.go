// Package e2e holds spanbench's end-to-end tests: the operator installed with
// kustomize on a real single-node Kubernetes (hack/cluster-up.sh), its runner
// pods loading a real Cloud Spanner emulator on the host, and a real
// Prometheus scraping them.
//
// The tests carry the build tag e2e, so `go test ./...` does not build them.
// Run them with `make test-e2e` (cluster up, tests, teardown; see
// hack/e2e.sh), or against a cluster that is already up:
//
//	hack/demo.sh up      # cluster, image, emulator on the node address
//	go test -tags e2e -count=1 -v ./test/e2e/
//
// Without a reachable cluster or emulator they fail at once, saying which;
// they never skip.
package e2e

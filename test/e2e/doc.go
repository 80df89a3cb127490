// Package e2e holds spanbench's end-to-end tests: the operator installed on a
// real single-node Kubernetes (hack/cluster-up.sh), its runner pods loading a
// real Cloud Spanner emulator on the host, and a real Prometheus scraping
// them.
//
// The suite installs spanbench one of two ways, $SPANBENCH_E2E_INSTALL:
// kustomize (the default; testdata/install, config/default plus
// --keep-runners) or helm (charts/spanbench as release spanbench, with
// testdata/helm-values.yaml). It removes any spanbench install it finds
// first, and uninstalls its own at the end, failing if anything is left:
// the suite owns the local cluster's spanbench install. Tests whose subject
// does not depend on the install method run in the kustomize pass only
// (kustomizePassOnly); the Helm pass checks the install, an upgrade, the
// uninstall, the admission webhook and policy, and one short run. The fault tests
// (faults_test.go) stop the emulator, restart kube-apiserver
// (hack/cluster-restart.sh), kill the manager, cut a runner's network and
// delete a run with the manager down; they run one at a time.
// SPANBENCH_E2E_KEEP_INSTALL=1 keeps it afterwards.
//
// The tests carry the build tag e2e, so `go test ./...` does not build them.
// Run them with `make test-e2e` (cluster up, the suite once per install
// method, teardown; see hack/e2e.sh), or against a cluster that is already
// up:
//
//	hack/demo.sh up      # cluster, image, emulator on the node address
//	go test -tags e2e -count=1 -v ./test/e2e/
//	SPANBENCH_E2E_INSTALL=helm go test -tags e2e -count=1 -v ./test/e2e/
//
// Without a reachable cluster or emulator they fail at once, saying which;
// they never skip.
package e2e

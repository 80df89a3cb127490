// Package scale_test measures the controller at scale against envtest's
// real kube-apiserver (no kubelet, no Job controller): one run with 100
// runners, 50 concurrent runs, and the results collector serving 1,000
// finished runs. The runner and loader pods are played by the real pod
// code in a subprocess (see farm_test.go), so the benchmark process holds
// the manager alone. These are Go benchmarks (`make bench`), not timed
// assertions; the figures are in docs/performance.md, "Controller at
// scale".
package scale_test

// Package openloop holds the open-loop comparison of `make bench` (issue
// 11): `spanbench run` against a bare ticker-paced loop (./bareloop) making
// the same stale point reads at the same rate, each as its own process
// against one fresh emulator per pair, compared by client CPU per read and
// peak RSS. Its code is the benchmark in bench_test.go and the bare loop; it
// is a test helper, never linked into the binary.
package openloop

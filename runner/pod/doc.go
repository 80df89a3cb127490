// Package pod is the pod role of a BenchmarkRun (`spanbench runner`). A
// loader pod (Load) loads its slice of the dataset; a runner pod (Run)
// reads the run's control ConfigMap, connects, reports ready, waits for
// the common start time, runs its shard of the load and writes its result
// durably into its own shard ConfigMap. What the pods and the controller
// exchange, and how it is encoded, is package protocol.
package pod

// Package protocol is the contract between the BenchmarkRun controller and
// its pods (loaders and runners): the names of the ConfigMaps they share,
// their keys and states, the control document the controller writes, and
// the reports the pods write back, each with exactly one Encode and one
// Decode that both sides use. Neither side formats or parses a field by
// hand.
//
// The signalling is only ConfigMaps, so that RBAC can confine each run's
// pods to its own objects by name:
//
//   - <run>-control, written by the controller: the Control document
//     (EncodeControl, DecodeControl) and, once every runner is ready, the
//     common start time (EncodeStart, DecodeStart).
//   - <run>-load-<i>, created empty by the controller, written by loader i:
//     a LoaderReport.
//   - <run>-shard-<i>, created empty by the controller, written by runner i:
//     a ShardReport, whose result is gzipped JSON (EncodeResult,
//     DecodeResult): inline, in chunk ConfigMaps (package chunks), or,
//     with a results bucket on the manager, an object of the bucket the
//     report points at (package bucket, StoreResultObject, LoadObject).
//
// The key-by-key table is in docs/benchmarkrun.md ("The pod protocol"); a
// test holds it to the keys and states defined here.
//
// Reports are written by pods, which may run a user's image: every decoder
// treats its input as untrusted and returns a *ReportError naming the key,
// never panics.
package protocol

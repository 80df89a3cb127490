// Package serverfigures collects the server's own figures of a finished
// BenchmarkRun, for the BenchmarkRun reconciler: Spanner's statistics of
// the run's operations (SPANNER_SYS, joined to the client's counts; condition
// ServerStatsCollected) and Cloud Monitoring's CPU, latency and request
// figures with the server's warm-up (condition ServerMetricsCollected).
// Both go into the run's status and its stored report, and never change
// the run's outcome (docs/server-stats.md).
//
// The reconciler hands over what a collection needs of it as values
// (Collection): its clock, clients, Spanner access and report store.
package serverfigures

// Package benchmarkcampaign is the BenchmarkCampaign reconciler: its
// schedule, iterations, the ordering of their runs, the comparison of
// their results, the history and the trend. It creates BenchmarkRuns and
// reads their reports (runreport); it never runs a load itself.
package benchmarkcampaign

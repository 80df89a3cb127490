// Package stats decides whether a benchmark variant differs from its
// baseline, and whether a nightly series has changed, with stated
// uncertainty. It is pure: no Kubernetes, no Spanner, no global state; every
// random choice comes from an *rand.Rand the caller seeds.
//
// Three tools, one per situation (docs/statistics.md has the reasoning and
// the measured error rates):
//
//   - CompareRuns: several runs per variant. Each run contributes one exact
//     value (a percentile of its merged HDR histogram, or its throughput).
//     The ratio is exp of the Hodges–Lehmann shift of the log values, its
//     interval the exact Mann–Whitney inversion, its p-value the exact
//     (tie-aware) two-sided Mann–Whitney test.
//   - CompareIntervals: one run per variant. Sectioning (batch means with
//     Student's t, widened by the batch-means bias of intervals
//     autocorrelated up to MaxAutocorrelation) over the runs' per-interval
//     histograms; every section merges its histograms and reads the
//     statistic from the merge.
//   - ChangePoints: E-divisive means with a permutation test over a series
//     of iterations, as Apache Otava (formerly hunter) uses it;
//     LatestRegression says whether a recent one went the bad way.
//
// Every comparison ends in a Verdict by one rule (decide, in verdict.go),
// and WriteTable prints comparisons benchstat-style.
//
// Percentiles are never averaged anywhere in this package: a percentile is
// only ever read from a merged histogram.
package stats

package comparison

import (
	"fmt"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
)

// Server CPU per operation and server query p99 are one figure per run, from the server section
// the manager adds to a run's result once Spanner's statistics are
// collected (docs/server-stats.md). It has no per-interval series, so it
// is compared run by run only, and a run without it makes its row
// inconclusive and says why.

// ServerCPUPerOp is the run's Spanner CPU per logical operation of op, in
// microseconds.
func ServerCPUPerOp(d *result.Document, op string) (float64, error) {
	if d.Server == nil {
		return 0, fmt.Errorf("run %s has no server statistics (not available on the emulator, or not collected: see its ServerStatsCollected condition)", d.Run)
	}
	o := d.Server.Operation(op)
	if o == nil || o.Statements == nil || o.Statements.CPUSecondsPerOp == nil {
		return 0, fmt.Errorf("run %s: operation %s's server CPU was not captured", d.Run, op)
	}
	return *o.Statements.CPUSecondsPerOp * 1e6, nil
}

// ServerQueryP99 is the run's Spanner server latency p99 per execution of
// op's queries, in microseconds: the percentile of the merged SPANNER_SYS
// latency histograms of the run's minutes.
func ServerQueryP99(d *result.Document, op string) (float64, error) {
	if d.Server == nil {
		return 0, fmt.Errorf("run %s has no server statistics (not available on the emulator, or not collected: see its ServerStatsCollected condition)", d.Run)
	}
	o := d.Server.Operation(op)
	if o == nil || o.Statements == nil || o.Statements.LatencyP99Seconds == nil {
		return 0, fmt.Errorf("run %s: operation %s's server latency p99 was not captured (reads have no latency histogram)", d.Run, op)
	}
	return *o.Statements.LatencyP99Seconds * 1e6, nil
}

// IsServerStats says whether s is read from a run's SPANNER_SYS figures.
func IsServerStats(s v1alpha1.CampaignStatistic) bool {
	return s == v1alpha1.StatisticServerCPUPerOp || s == v1alpha1.StatisticServerQueryP99
}

// serverQueryOperations are the operations of d with a server latency
// p99 (its queries), or every operation when none has one, so that each
// row says why.
func serverQueryOperations(d *result.Document) []string {
	var out []string
	if d.Server != nil {
		for _, o := range d.Server.Operations {
			if o.Statements != nil && o.Statements.LatencyP99Seconds != nil {
				out = append(out, o.Name)
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, o := range d.Totals {
		out = append(out, o.Name)
	}
	return out
}

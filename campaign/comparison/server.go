package comparison

import (
	"fmt"

	"github.com/spanbench/spanbench/load/result"
)

// Server CPU per operation is one figure per run, from the server section
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

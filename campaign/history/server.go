package history

import (
	"fmt"

	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/result"
)

// ServerFigures are an operation's Spanner figures in an iteration: the
// means of its runs' (each run has one figure, from the server section
// the manager adds to its result; docs/server-stats.md). They let the
// trend find a regression of server CPU per operation across iterations
// like a latency one, after the runs are pruned.
type ServerFigures struct {
	// CPUMicrosPerOp is Spanner's CPU per logical operation, in
	// microseconds (comparison.ServerCPUPerOp, the per-split corrected
	// figure).
	CPUMicrosPerOp float64 `json:"cpuMicrosPerOp"`
	// ExecutionsPerOp is Spanner's executions per logical operation (the
	// splits a read touched); absent when a run had none.
	ExecutionsPerOp *float64 `json:"executionsPerOp,omitempty"`
	// Coverage is the share of the client's operations in minutes where
	// Spanner's TOP tables had the operation's row.
	Coverage float64 `json:"coverage"`
	// QueryP99Micros is Spanner's server latency p99 per execution of the
	// operation's queries, in microseconds (comparison.ServerQueryP99);
	// absent when a run had none (a read has no latency histogram).
	QueryP99Micros *float64 `json:"queryP99Micros,omitempty"`
}

// summarizeServer is the mean of runs' server figures of op, or nil when
// any run lacks its server CPU: a mean over the runs that have it would
// not be the cell's.
func summarizeServer(runs []*result.Document, op string) *ServerFigures {
	if len(runs) == 0 {
		return nil
	}
	var sf ServerFigures
	var execs, p99 float64
	haveExecs, haveP99 := true, true
	for _, d := range runs {
		cpu, err := comparison.ServerCPUPerOp(d, op)
		if err != nil {
			return nil
		}
		st := d.Server.Operation(op).Statements
		sf.CPUMicrosPerOp += cpu
		sf.Coverage += st.Coverage
		if st.ExecutionsPerOp == nil {
			haveExecs = false
		} else {
			execs += *st.ExecutionsPerOp
		}
		if v, err := comparison.ServerQueryP99(d, op); err != nil {
			haveP99 = false
		} else {
			p99 += v
		}
	}
	n := float64(len(runs))
	sf.CPUMicrosPerOp /= n
	sf.Coverage /= n
	if haveExecs {
		e := execs / n
		sf.ExecutionsPerOp = &e
	}
	if haveP99 {
		m := p99 / n
		sf.QueryP99Micros = &m
	}
	return &sf
}

// validate refuses figures no summary writes.
func (s *ServerFigures) validate() error {
	if s == nil {
		return nil
	}
	if !finite(s.CPUMicrosPerOp) || !finite(s.Coverage) || s.Coverage > 1 || s.ExecutionsPerOp != nil && !finite(*s.ExecutionsPerOp) ||
		s.QueryP99Micros != nil && !finite(*s.QueryP99Micros) {
		return fmt.Errorf("server figures %+v: want finite figures, not negative, coverage within [0, 1]", *s)
	}
	return nil
}

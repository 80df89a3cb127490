package result

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ServerSchemaVersion versions the document's optional server section on
// its own: the section is added to a run's merged result after the run, and
// a reader that does not know it ignores it (docs/result-format.md).
const ServerSchemaVersion = "spanbench.io/server-stats/v1"

// Bounds of a server section: a run has at most 256 operations, and
// Spanner keeps minute statistics for 6 hours (360 minutes).
const (
	maxServerOperations = 256
	maxServerMinutes    = 24 * 60
	maxServerNotes      = 16
	maxServerText       = 1024
)

// Server is what Spanner's own statistics tables (SPANNER_SYS) say about
// the run's operations, per logical operation (docs/server-stats.md). It
// is written by the manager once the statistics minutes of the run have
// settled; documents without it are read as before.
type Server struct {
	// Version is ServerSchemaVersion.
	Version string `json:"version"`
	// Source is the tables' prefix, SPANNER_SYS. in production.
	Source string `json:"source"`
	// CollectedAt is when the tables were read.
	CollectedAt time.Time `json:"collectedAt"`
	// Minutes are the ends (INTERVAL_END) of the whole minutes read.
	Minutes []time.Time `json:"minutes"`
	// ApportionedOps counts the client's operations split between two
	// minutes in proportion to time.
	ApportionedOps int64 `json:"apportionedOps,omitempty"`
	// Operations are the figures per operation.
	Operations []ServerOperation `json:"operations"`
	// Notes are the collection's caveats.
	Notes []string `json:"notes,omitempty"`
}

// ServerOperation are one operation's server figures. Every figure is
// absent when no row had it; NotCaptured lists the tags with no row at
// all, whose figures are unknown rather than zero.
type ServerOperation struct {
	// Name is the operation's name.
	Name string `json:"name"`
	// ClientOps is the client's count of logical operations in the minutes
	// read.
	ClientOps int64 `json:"clientOps"`
	// NotCaptured says which tags had no row where.
	NotCaptured []string `json:"notCaptured,omitempty"`
	// Statements are the reads' and queries' figures.
	Statements *ServerStatements `json:"statements,omitempty"`
	// Transactions are the read-write transactions' figures.
	Transactions *ServerTransactions `json:"transactions,omitempty"`
}

// ServerStatements aggregate QUERY_STATS and READ_STATS rows of a request
// tag.
type ServerStatements struct {
	Minutes                       int      `json:"minutes"`
	Coverage                      float64  `json:"coverage"`
	ClientOps                     int64    `json:"clientOps"`
	Executions                    int64    `json:"executions"`
	ExecutionsPerOp               *float64 `json:"executionsPerOp,omitempty"`
	CPUSecondsPerExecution        *float64 `json:"cpuSecondsPerExecution,omitempty"`
	CPUSecondsPerOp               *float64 `json:"cpuSecondsPerOp,omitempty"`
	LatencySeconds                *float64 `json:"latencySeconds,omitempty"`
	RowsPerOp                     *float64 `json:"rowsPerOp,omitempty"`
	RowsScannedPerOp              *float64 `json:"rowsScannedPerOp,omitempty"`
	BytesPerOp                    *float64 `json:"bytesPerOp,omitempty"`
	RemoteServerCallsPerExecution *float64 `json:"remoteServerCallsPerExecution,omitempty"`
}

// ServerTransactions aggregate TXN_STATS rows of a transaction tag.
type ServerTransactions struct {
	Minutes              int      `json:"minutes"`
	Coverage             float64  `json:"coverage"`
	ClientOps            int64    `json:"clientOps"`
	Attempts             int64    `json:"attempts"`
	AttemptsPerOp        *float64 `json:"attemptsPerOp,omitempty"`
	CommitAttempts       int64    `json:"commitAttempts"`
	CommitAborts         int64    `json:"commitAborts"`
	CommitRetries        int64    `json:"commitRetries"`
	AbortRate            *float64 `json:"abortRate,omitempty"`
	CommitLatencySeconds *float64 `json:"commitLatencySeconds,omitempty"`
	TotalLatencySeconds  *float64 `json:"totalLatencySeconds,omitempty"`
	Participants         *float64 `json:"participants,omitempty"`
	BytesPerAttempt      *float64 `json:"bytesPerAttempt,omitempty"`
}

// Operation is the figures of the operation named name, or nil.
func (s *Server) Operation(name string) *ServerOperation {
	if s == nil {
		return nil
	}
	for i := range s.Operations {
		if s.Operations[i].Name == name {
			return &s.Operations[i]
		}
	}
	return nil
}

// Check refuses a server section a reader cannot trust: an unknown
// version, more operations, minutes or notes than a run has, an operation
// the document's totals do not name, a negative or non-finite figure. The
// section may come from a ConfigMap anyone in the namespace can edit.
func (s *Server) Check(d *Document) error {
	if s == nil {
		return nil
	}
	if s.Version != ServerSchemaVersion {
		return fmt.Errorf("server section version %q is not %q", s.Version, ServerSchemaVersion)
	}
	if len(s.Operations) > maxServerOperations || len(s.Minutes) > maxServerMinutes || len(s.Notes) > maxServerNotes {
		return errors.New("server section: more operations, minutes or notes than a run has")
	}
	if s.ApportionedOps < 0 || len(s.Source) > maxServerText {
		return errors.New("server section: negative apportioned count or overlong source")
	}
	for _, n := range s.Notes {
		if len(n) > maxServerText {
			return errors.New("server section: a note is too long")
		}
	}
	names := map[string]bool{}
	for _, t := range d.Totals {
		names[t.Name] = true
	}
	for _, o := range s.Operations {
		if !names[o.Name] {
			return fmt.Errorf("server section: operation %q is not in the result", o.Name)
		}
		if err := o.check(); err != nil {
			return fmt.Errorf("server section: operation %q: %w", o.Name, err)
		}
	}
	return nil
}

func (o ServerOperation) check() error {
	if len(o.NotCaptured) > 2 {
		return errors.New("more than two tags not captured")
	}
	for _, n := range o.NotCaptured {
		if len(n) > maxServerText {
			return errors.New("a not-captured note is too long")
		}
	}
	return o.checkFigures()
}

// checkFigures refuses negative counts, coverage outside [0, 1] and
// negative or non-finite figures.
func (o ServerOperation) checkFigures() error {
	counts := []int64{o.ClientOps}
	var figs []*float64
	var shares []float64
	if s := o.Statements; s != nil {
		counts = append(counts, int64(s.Minutes), s.ClientOps, s.Executions)
		shares = append(shares, s.Coverage)
		figs = append(figs, s.ExecutionsPerOp, s.CPUSecondsPerExecution, s.CPUSecondsPerOp, s.LatencySeconds,
			s.RowsPerOp, s.RowsScannedPerOp, s.BytesPerOp, s.RemoteServerCallsPerExecution)
	}
	if t := o.Transactions; t != nil {
		counts = append(counts, int64(t.Minutes), t.ClientOps, t.Attempts, t.CommitAttempts, t.CommitAborts, t.CommitRetries)
		shares = append(shares, t.Coverage)
		figs = append(figs, t.AttemptsPerOp, t.AbortRate, t.CommitLatencySeconds, t.TotalLatencySeconds, t.Participants, t.BytesPerAttempt)
	}
	for _, n := range counts {
		if n < 0 {
			return errors.New("a negative count")
		}
	}
	for _, c := range shares {
		if !(c >= 0 && c <= 1) {
			return errors.New("a coverage outside [0, 1]")
		}
	}
	for _, f := range figs {
		if f != nil && (*f < 0 || math.IsNaN(*f) || math.IsInf(*f, 0)) {
			return errors.New("a negative or non-finite figure")
		}
	}
	return nil
}

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
	maxLockRanges       = 10
	maxLockNames        = 8
	maxLockName         = 256
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
	// Granularity is the tables read: MINUTE (absent in documents written
	// before it was recorded), or 10MINUTE or HOUR when the collection came
	// after the minute tables had dropped the run.
	Granularity string `json:"granularity,omitempty"`
	// Minutes are the ends (INTERVAL_END) of the whole intervals read:
	// minutes, or the coarser tables' intervals.
	Minutes []time.Time `json:"minutes"`
	// ApportionedOps counts the client's operations split between two
	// minutes in proportion to time.
	ApportionedOps int64 `json:"apportionedOps,omitempty"`
	// Operations are the figures per operation.
	Operations []ServerOperation `json:"operations"`
	// Notes are the collection's caveats.
	Notes []string `json:"notes,omitempty"`
	// LockRanges are the row ranges with the most lock wait among those
	// whose sampled lock requests name the run's transactions.
	LockRanges []ServerLockRange `json:"lockRanges,omitempty"`
}

// ServerLockRange is one contended row range (LOCK_STATS_TOP_*).
type ServerLockRange struct {
	// Key is ROW_RANGE_START_KEY (a trailing + marks a range).
	Key string `json:"key"`
	// WaitSeconds is Σ LOCK_WAIT_SECONDS over the intervals read.
	WaitSeconds float64 `json:"waitSeconds"`
	// Intervals is how many intervals had the range.
	Intervals int `json:"intervals"`
	// Operations are the run's operations sampled on it.
	Operations []string `json:"operations,omitempty"`
	// Columns and Modes are the columns and lock modes sampled on it.
	Columns []string `json:"columns,omitempty"`
	Modes   []string `json:"modes,omitempty"`
}

// ServerLocks are an operation's share of the sampled lock conflicts.
type ServerLocks struct {
	// Samples is the sampled lock requests carrying its transaction tag.
	Samples int `json:"samples"`
	// Ranges is the (row range, interval) rows with such a sample.
	Ranges int `json:"ranges"`
	// WaitSecondsInvolved is the lock wait of those rows: the conflicts
	// it took part in, as waiter or holder.
	WaitSecondsInvolved float64 `json:"waitSecondsInvolved"`
	// WaitSecondsShare is that wait apportioned by its share of each
	// row's samples (an estimate).
	WaitSecondsShare float64 `json:"waitSecondsShare"`
	// Columns and Modes are the columns and lock modes of its samples.
	Columns []string `json:"columns,omitempty"`
	Modes   []string `json:"modes,omitempty"`
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
	// Locks are its transactions' share of the sampled lock conflicts;
	// absent when no sample carried its tag (unknown, not zero).
	Locks *ServerLocks `json:"locks,omitempty"`
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
	// LatencyP50Seconds and LatencyP99Seconds are read from the merged
	// LATENCY_DISTRIBUTION histograms (queries only), which hold
	// LatencyDistributionCount executions.
	LatencyP50Seconds        *float64 `json:"latencyP50Seconds,omitempty"`
	LatencyP99Seconds        *float64 `json:"latencyP99Seconds,omitempty"`
	LatencyDistributionCount int64    `json:"latencyDistributionCount,omitempty"`
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
	// TotalLatencyP50Seconds and TotalLatencyP99Seconds are read from the
	// merged TOTAL_LATENCY_DISTRIBUTION histograms, which hold
	// TotalLatencyDistributionCount attempts.
	TotalLatencyP50Seconds        *float64 `json:"totalLatencyP50Seconds,omitempty"`
	TotalLatencyP99Seconds        *float64 `json:"totalLatencyP99Seconds,omitempty"`
	TotalLatencyDistributionCount int64    `json:"totalLatencyDistributionCount,omitempty"`
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
	if err := s.checkTablesAndLocks(); err != nil {
		return fmt.Errorf("server section: %w", err)
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
	if l := o.Locks; l != nil {
		if l.Samples < 0 || l.Ranges < 0 || !finite(l.WaitSecondsInvolved) || !finite(l.WaitSecondsShare) {
			return errors.New("lock figures negative or not finite")
		}
		if err := checkNames(l.Columns, l.Modes); err != nil {
			return err
		}
	}
	return o.checkFigures()
}

// checkTablesAndLocks refuses an unknown granularity and lock ranges no
// collection writes.
func (s *Server) checkTablesAndLocks() error {
	switch s.Granularity {
	case "", "MINUTE", "10MINUTE", "HOUR":
	default:
		return fmt.Errorf("granularity %q is not MINUTE, 10MINUTE or HOUR", s.Granularity)
	}
	return checkLockRanges(s.LockRanges)
}

// checkLockRanges refuses more ranges or names than a collection writes,
// and negative or non-finite waits.
func checkLockRanges(ranges []ServerLockRange) error {
	if len(ranges) > maxLockRanges {
		return fmt.Errorf("more than %d lock ranges", maxLockRanges)
	}
	for _, r := range ranges {
		if len(r.Key) > 2*maxLockName+2 || r.Intervals < 0 || !finite(r.WaitSeconds) {
			return errors.New("a lock range with an overlong key, negative intervals or a negative or non-finite wait")
		}
		if err := checkNames(r.Operations, r.Columns, r.Modes); err != nil {
			return err
		}
	}
	return nil
}

func checkNames(lists ...[]string) error {
	for _, l := range lists {
		if len(l) > maxLockNames {
			return fmt.Errorf("more than %d lock names", maxLockNames)
		}
		for _, n := range l {
			if len(n) > maxLockName {
				return errors.New("a lock name is too long")
			}
		}
	}
	return nil
}

// finite says v is a non-negative finite figure.
func finite(v float64) bool { return v >= 0 && !math.IsInf(v, 0) }

// checkFigures refuses negative counts, coverage outside [0, 1] and
// negative or non-finite figures.
func (o ServerOperation) checkFigures() error {
	counts := []int64{o.ClientOps}
	var figs []*float64
	var shares []float64
	if s := o.Statements; s != nil {
		counts = append(counts, int64(s.Minutes), s.ClientOps, s.Executions)
		shares = append(shares, s.Coverage)
		counts = append(counts, s.LatencyDistributionCount)
		figs = append(figs, s.ExecutionsPerOp, s.CPUSecondsPerExecution, s.CPUSecondsPerOp, s.LatencySeconds,
			s.RowsPerOp, s.RowsScannedPerOp, s.BytesPerOp, s.RemoteServerCallsPerExecution, s.LatencyP50Seconds, s.LatencyP99Seconds)
	}
	if t := o.Transactions; t != nil {
		counts = append(counts, int64(t.Minutes), t.ClientOps, t.Attempts, t.CommitAttempts, t.CommitAborts, t.CommitRetries)
		shares = append(shares, t.Coverage)
		counts = append(counts, t.TotalLatencyDistributionCount)
		figs = append(figs, t.AttemptsPerOp, t.AbortRate, t.CommitLatencySeconds, t.TotalLatencySeconds, t.Participants, t.BytesPerAttempt,
			t.TotalLatencyP50Seconds, t.TotalLatencyP99Seconds)
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

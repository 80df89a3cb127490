package serverstats

import (
	"fmt"
	"math"
	"slices"
	"time"

	"cloud.google.com/go/spanner"
	"google.golang.org/genproto/googleapis/api/distribution"

	"github.com/spanbench/spanbench/spanner/latencydist"
)

// OperationStats are the server's figures for one operation. A nil
// Statements or Transactions means the shape was not captured: the TOP
// tables keep only the costliest shapes of each minute, so a missing row
// is unknown, never zero.
type OperationStats struct {
	// Name is the operation's name.
	Name string
	// ClientOps is the client's count over all the minutes read.
	ClientOps int64
	// Statements are its queries' and reads' figures.
	Statements *StatementStats
	// Transactions are its read-write transactions' figures.
	Transactions *TransactionStats
	// NotCaptured says, for each tag with no row, where it was looked for.
	NotCaptured []string
	// Locks are its transactions' share of the sampled lock conflicts; nil
	// when no sample carries its transaction tag (unknown, not zero).
	Locks *LockStats
}

// StatementStats aggregate QUERY_STATS_TOP_MINUTE and READ_STATS_TOP_MINUTE
// rows of one request tag over the minutes where the tag had a row. Per
// operation figures divide by the client's count in those minutes: Spanner
// counts a read once per split it touches, so its per-execution averages
// are per split, and only the client knows how many logical operations
// there were.
type StatementStats struct {
	// Tables are the tables that had rows.
	Tables []string
	// Minutes is how many minutes had a row.
	Minutes int
	// Coverage is the share of the client's operations that fell in those
	// minutes: 1 when every minute was captured.
	Coverage float64
	// ClientOps is the client's count in those minutes.
	ClientOps int64
	// Executions is Σ EXECUTION_COUNT.
	Executions int64
	// ExecutionsPerOp is Executions ÷ ClientOps: 1 for a query, the number
	// of splits touched for a read (nil when ClientOps is 0).
	ExecutionsPerOp *float64
	// CPUSecondsPerExecution is AVG_CPU_SECONDS weighted by executions.
	CPUSecondsPerExecution *float64
	// CPUSecondsPerOp is Σ AVG_CPU_SECONDS × EXECUTION_COUNT ÷ ClientOps.
	CPUSecondsPerOp *float64
	// LatencySeconds is AVG_LATENCY_SECONDS weighted by executions (queries
	// only: READ_STATS has no latency).
	LatencySeconds *float64
	// RowsPerOp is rows returned per operation (Σ AVG_ROWS × executions ÷
	// ClientOps).
	RowsPerOp *float64
	// RowsScannedPerOp is rows scanned per operation (queries only).
	RowsScannedPerOp *float64
	// BytesPerOp is bytes returned per operation.
	BytesPerOp *float64
	// RemoteServerCallsPerExecution is AVG_REMOTE_SERVER_CALLS weighted by
	// executions (queries only).
	RemoteServerCallsPerExecution *float64
	// LatencyP50Seconds and LatencyP99Seconds are percentiles of the
	// executions' latency, from the LATENCY_DISTRIBUTION histograms of the
	// rows that had one, merged over the intervals (queries only: READ_STATS
	// has no histogram); nil when no row had one.
	LatencyP50Seconds, LatencyP99Seconds *float64
	// LatencyDistributionCount is how many executions those histograms
	// hold.
	LatencyDistributionCount int64
}

// TransactionStats aggregate TXN_STATS_TOP_MINUTE rows of one transaction
// tag over the minutes where it had a row.
type TransactionStats struct {
	// Minutes is how many minutes had a row.
	Minutes int
	// Coverage is the share of the client's operations in those minutes.
	Coverage float64
	// ClientOps is the client's count in those minutes.
	ClientOps int64
	// Attempts is Σ ATTEMPT_COUNT (every attempt, retries included).
	Attempts int64
	// AttemptsPerOp is Attempts ÷ ClientOps (nil when ClientOps is 0).
	AttemptsPerOp *float64
	// CommitAttempts, CommitAborts and CommitRetries are Σ
	// COMMIT_ATTEMPT_COUNT, COMMIT_ABORT_COUNT and COMMIT_RETRY_COUNT.
	CommitAttempts, CommitAborts, CommitRetries int64
	// AbortRate is CommitAborts ÷ CommitAttempts.
	AbortRate *float64
	// CommitLatencySeconds is AVG_COMMIT_LATENCY_SECONDS weighted by
	// commit attempts.
	CommitLatencySeconds *float64
	// TotalLatencySeconds is AVG_TOTAL_LATENCY_SECONDS weighted by attempts.
	TotalLatencySeconds *float64
	// Participants is AVG_PARTICIPANTS weighted by commit attempts.
	Participants *float64
	// BytesPerAttempt is AVG_BYTES weighted by attempts.
	BytesPerAttempt *float64
	// TotalLatencyP50Seconds and TotalLatencyP99Seconds are percentiles of
	// the attempts' total latency (first operation to commit or abort),
	// from the merged TOTAL_LATENCY_DISTRIBUTION histograms; nil when no
	// row had one.
	TotalLatencyP50Seconds, TotalLatencyP99Seconds *float64
	// TotalLatencyDistributionCount is how many attempts those histograms
	// hold.
	TotalLatencyDistributionCount int64
}

// percentiles merges histograms and reads p50 and p99 (seconds), nil
// when none could be merged; a histogram with other buckets than the
// first is left out (Spanner's have one layout).
type percentiles struct{ m latencydist.Merged }

func (p *percentiles) add(d *distribution.Distribution) {
	if d != nil {
		_ = p.m.Add(d) // a histogram that cannot be summed is left out
	}
}

func (p *percentiles) read() (p50, p99 *float64, count int64) {
	if p.m.Count() == 0 {
		return nil, nil, 0
	}
	return ptr(p.m.Quantile(0.50)), ptr(p.m.Quantile(0.99)), p.m.Count()
}

// mean is an average weighted by counts, over the rows that had a value.
type mean struct{ sum, weight float64 }

// add counts v with weight w; NULL, negative and non-finite values (the
// tables are input, not truth) are left out.
func (m *mean) add(v spanner.NullFloat64, w int64) {
	if !v.Valid || w <= 0 || v.Float64 < 0 || math.IsNaN(v.Float64) || math.IsInf(v.Float64, 0) {
		return
	}
	m.sum += v.Float64 * float64(w)
	m.weight += float64(w)
}

func (m mean) value() *float64 {
	if m.weight == 0 {
		return nil
	}
	return ptr(m.sum / m.weight)
}

// perOp is the mean per execution times executions per operation.
func (m mean) perOp(factor *float64) *float64 {
	v := m.value()
	if v == nil || factor == nil {
		return nil
	}
	return ptr(*v * *factor)
}

func ptr(v float64) *float64 { return &v }

func ratio(n, d int64) *float64 {
	if d <= 0 {
		return nil
	}
	return ptr(float64(n) / float64(d))
}

// opsIn is the client's count in minutes.
func opsIn(op Operation, minutes map[time.Time]bool) int64 {
	var n int64
	for m := range minutes {
		n += op.Ops[m]
	}
	return n
}

func coverage(part, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return float64(part) / float64(total)
}

func aggregate(op Operation, g Granularity, minutes []time.Time, rows statRows) OperationStats {
	all := map[time.Time]bool{}
	for _, m := range minutes {
		all[m] = true
	}
	out := OperationStats{Name: op.Name, ClientOps: opsIn(op, all)}
	if op.RequestTag != "" {
		out.Statements = statements(op, out.ClientOps, rows.stmts)
		if out.Statements == nil {
			out.NotCaptured = append(out.NotCaptured, fmt.Sprintf(
				"request tag %q: no row in QUERY_STATS_TOP_%s or READ_STATS_TOP_%s", op.RequestTag, g.Suffix, g.Suffix))
		}
	}
	if op.TransactionTag != "" {
		out.Transactions = transactions(op, out.ClientOps, rows.txns)
		if out.Transactions == nil {
			out.NotCaptured = append(out.NotCaptured, fmt.Sprintf(
				"transaction tag %q: no row in TXN_STATS_TOP_%s", op.TransactionTag, g.Suffix))
		}
	}
	out.Locks = opLocks(op, rows.locks)
	return out
}

func statements(op Operation, total int64, rows []stmtRow) *StatementStats {
	seen := map[time.Time]bool{}
	var s StatementStats
	var cpu, latency, rowsOut, scanned, bytes, remote mean
	var dist percentiles
	for _, r := range rows {
		if r.tag != op.RequestTag { // the SQL selected the window's minutes only
			continue
		}
		seen[r.end] = true
		if !slices.Contains(s.Tables, r.source) {
			s.Tables = append(s.Tables, r.source)
		}
		s.Executions += r.executions
		cpu.add(r.cpu, r.executions)
		latency.add(r.latency, r.executions)
		rowsOut.add(r.rows, r.executions)
		scanned.add(r.scanned, r.executions)
		bytes.add(r.bytes, r.executions)
		remote.add(r.remote, r.executions)
		dist.add(r.dist)
	}
	if len(seen) == 0 {
		return nil
	}
	s.Minutes, s.ClientOps = len(seen), opsIn(op, seen)
	s.Coverage = coverage(s.ClientOps, total)
	s.ExecutionsPerOp = ratio(s.Executions, s.ClientOps)
	s.CPUSecondsPerExecution, s.CPUSecondsPerOp = cpu.value(), cpu.perOp(s.ExecutionsPerOp)
	s.LatencySeconds, s.RemoteServerCallsPerExecution = latency.value(), remote.value()
	s.RowsPerOp, s.RowsScannedPerOp, s.BytesPerOp = rowsOut.perOp(s.ExecutionsPerOp), scanned.perOp(s.ExecutionsPerOp), bytes.perOp(s.ExecutionsPerOp)
	s.LatencyP50Seconds, s.LatencyP99Seconds, s.LatencyDistributionCount = dist.read()
	return &s
}

func transactions(op Operation, total int64, rows []txnRow) *TransactionStats {
	seen := map[time.Time]bool{}
	var t TransactionStats
	var commit, totalLatency, participants, bytes mean
	var dist percentiles
	for _, r := range rows {
		if r.tag != op.TransactionTag {
			continue
		}
		seen[r.end] = true
		t.Attempts += r.attempts
		t.CommitAttempts += max(r.commitAttempts, 0)
		t.CommitAborts += max(r.aborts, 0)
		t.CommitRetries += max(r.retries, 0)
		commit.add(r.commitLatency, r.commitAttempts)
		participants.add(r.participants, r.commitAttempts)
		totalLatency.add(r.totalLatency, r.attempts)
		bytes.add(r.bytes, r.attempts)
		dist.add(r.dist)
	}
	if len(seen) == 0 {
		return nil
	}
	t.Minutes, t.ClientOps = len(seen), opsIn(op, seen)
	t.Coverage = coverage(t.ClientOps, total)
	t.AttemptsPerOp = ratio(t.Attempts, t.ClientOps)
	t.AbortRate = ratio(t.CommitAborts, t.CommitAttempts)
	t.CommitLatencySeconds, t.TotalLatencySeconds = commit.value(), totalLatency.value()
	t.Participants, t.BytesPerAttempt = participants.value(), bytes.value()
	t.TotalLatencyP50Seconds, t.TotalLatencyP99Seconds, t.TotalLatencyDistributionCount = dist.read()
	return &t
}

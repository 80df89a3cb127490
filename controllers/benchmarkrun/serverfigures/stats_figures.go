package serverfigures

import (
	"cmp"
	"math"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/spanner/serverstats"
)

// The collected statistics become the report's server section (the
// record), and the status's figures are derived from that section, so
// both always say the same.

// serverSection is the report's record of a collection.
func serverSection(res *serverstats.Result, source string, apportioned int64, now time.Time) *result.Server {
	s := &result.Server{Version: result.ServerSchemaVersion, Source: source, CollectedAt: now.UTC(),
		Granularity: res.Granularity.Suffix, Minutes: res.Minutes, ApportionedOps: apportioned, Notes: res.Notes}
	for _, r := range res.LockRanges {
		s.LockRanges = append(s.LockRanges, result.ServerLockRange{Key: r.Key, WaitSeconds: r.WaitSeconds,
			Intervals: r.Intervals, Operations: r.Operations, Columns: r.Columns, Modes: r.Modes})
	}
	for _, o := range res.Operations {
		op := result.ServerOperation{Name: o.Name, ClientOps: o.ClientOps, NotCaptured: o.NotCaptured}
		if l := o.Locks; l != nil {
			op.Locks = &result.ServerLocks{Samples: l.Samples, Ranges: l.Ranges, WaitSecondsInvolved: l.WaitSecondsInvolved,
				WaitSecondsShare: l.WaitSecondsShare, Columns: l.Columns, Modes: l.Modes}
		}
		if st := o.Statements; st != nil {
			op.Statements = &result.ServerStatements{Minutes: st.Minutes, Coverage: st.Coverage, ClientOps: st.ClientOps,
				Executions: st.Executions, ExecutionsPerOp: st.ExecutionsPerOp, CPUSecondsPerExecution: st.CPUSecondsPerExecution,
				CPUSecondsPerOp: st.CPUSecondsPerOp, LatencySeconds: st.LatencySeconds, RowsPerOp: st.RowsPerOp,
				RowsScannedPerOp: st.RowsScannedPerOp, BytesPerOp: st.BytesPerOp,
				RemoteServerCallsPerExecution: st.RemoteServerCallsPerExecution,
				LatencyP50Seconds:             st.LatencyP50Seconds, LatencyP99Seconds: st.LatencyP99Seconds,
				LatencyDistributionCount: st.LatencyDistributionCount}
		}
		if tx := o.Transactions; tx != nil {
			op.Transactions = &result.ServerTransactions{Minutes: tx.Minutes, Coverage: tx.Coverage, ClientOps: tx.ClientOps,
				Attempts: tx.Attempts, AttemptsPerOp: tx.AttemptsPerOp, CommitAttempts: tx.CommitAttempts,
				CommitAborts: tx.CommitAborts, CommitRetries: tx.CommitRetries, AbortRate: tx.AbortRate,
				CommitLatencySeconds: tx.CommitLatencySeconds, TotalLatencySeconds: tx.TotalLatencySeconds,
				Participants: tx.Participants, BytesPerAttempt: tx.BytesPerAttempt,
				TotalLatencyP50Seconds: tx.TotalLatencyP50Seconds, TotalLatencyP99Seconds: tx.TotalLatencyP99Seconds,
				TotalLatencyDistributionCount: tx.TotalLatencyDistributionCount}
		}
		s.Operations = append(s.Operations, op)
	}
	return s
}

// maxServerNoteBytes is the bound of status.serverStats.notes[] entries.
const maxServerNoteBytes = 256

// applyServerStats writes the server section's figures into the status.
func applyServerStats(status *v1alpha1.BenchmarkRunStatus, s *result.Server) {
	sum := status.ServerStats
	if sum == nil {
		sum = &v1alpha1.ServerStatsSummary{}
		status.ServerStats = sum
	}
	sum.Source, sum.Minutes, sum.ApportionedOperations = s.Source, int32(len(s.Minutes)), s.ApportionedOps
	sum.Granularity = cmp.Or(s.Granularity, serverstats.Minute.Suffix)
	sum.CollectionTime = &metav1.Time{Time: s.CollectedAt}
	sum.Notes = nil
	for i, n := range s.Notes {
		if i == 8 {
			break
		}
		sum.Notes = append(sum.Notes, statuswrite.Shorten(n, maxServerNoteBytes))
	}
	for i := range status.Operations {
		if o := s.Operation(status.Operations[i].Name); o != nil {
			status.Operations[i].Server = serverFigures(o)
		}
	}
}

// serverFigures are an operation's status figures: the statements' when
// the operation has any, and the transactions'.
func serverFigures(o *result.ServerOperation) *v1alpha1.ServerOperationFigures {
	f := &v1alpha1.ServerOperationFigures{}
	if len(o.NotCaptured) > 0 {
		f.NotCapturedIn = statuswrite.Shorten(strings.Join(o.NotCaptured, "; "), 512)
		f.NotCaptured = o.Statements == nil && o.Transactions == nil && o.Locks == nil
	}
	if st := o.Statements; st != nil {
		f.Coverage = decimal(&st.Coverage)
		f.Executions = st.Executions
		f.ExecutionsPerOperation = decimal(st.ExecutionsPerOp)
		f.CPUPerOperation, f.CPUPerExecution = seconds(st.CPUSecondsPerOp), seconds(st.CPUSecondsPerExecution)
		f.LatencyAvg = seconds(st.LatencySeconds)
		f.LatencyP50, f.LatencyP99 = seconds(st.LatencyP50Seconds), seconds(st.LatencyP99Seconds)
		f.RowsReturnedPerOperation, f.RowsScannedPerOperation = decimal(st.RowsPerOp), decimal(st.RowsScannedPerOp)
		f.BytesPerOperation = decimal(st.BytesPerOp)
	}
	if tx := o.Transactions; tx != nil {
		if f.Coverage == "" {
			f.Coverage = decimal(&tx.Coverage)
		}
		f.TransactionAttemptsPerOperation = decimal(tx.AttemptsPerOp)
		f.CommitAbortRate = decimal(tx.AbortRate)
		f.CommitLatencyAvg = seconds(tx.CommitLatencySeconds)
		f.TransactionLatencyP99 = seconds(tx.TotalLatencyP99Seconds)
	}
	if l := o.Locks; l != nil {
		f.LockWait = seconds(&l.WaitSecondsShare)
	}
	return f
}

// maxDecimal is the largest figure a status decimal holds (24 characters).
const maxDecimal = 1e15

// decimal is v with six significant digits as a plain decimal, "" for
// none; values below a billionth read 0.
func decimal(v *float64) string {
	if v == nil || math.IsNaN(*v) || *v < 0 {
		return ""
	}
	x := min(*v, maxDecimal)
	if x < 1e-9 {
		return "0"
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	s := strconv.FormatFloat(r, 'f', -1, 64)
	if len(s) > 24 {
		s = s[:24]
	}
	return s
}

// seconds is v seconds as a duration, nil for none.
func seconds(v *float64) *metav1.Duration {
	if v == nil || math.IsNaN(*v) || *v < 0 {
		return nil
	}
	return &metav1.Duration{Duration: time.Duration(math.Round(min(*v, float64(math.MaxInt64/2)/1e9) * 1e9))}
}

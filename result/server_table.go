package result

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// writeServerTable prints the server section, when the document has one:
// Spanner's own figures per logical operation, "not captured" for a shape
// the TOP tables did not keep, "-" for a figure the tables do not have
// (reads have no server latency).
func writeServerTable(w io.Writer, s *Server) error {
	if s == nil {
		return nil
	}
	unit := "minutes"
	if s.Granularity != "" && s.Granularity != "MINUTE" {
		unit = s.Granularity + " intervals"
	}
	fmt.Fprintf(w, "server statistics (%s, %d whole %s, %d client operations apportioned):\n",
		s.Source, len(s.Minutes), unit, s.ApportionedOps)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\tcpu/op\texec/op\tcpu/exec\tlatency avg\tp50\tp99\trows/op\tscanned/op\tcoverage\t"+
		"attempts/op\tcommit avg\ttxn p99\tlock wait\t")
	var noPercentiles []string
	for _, o := range s.Operations {
		st, tx := o.Statements, o.Transactions
		var lockWait *float64
		if o.Locks != nil {
			lockWait = &o.Locks.WaitSecondsShare
		}
		if st == nil && tx == nil {
			// A lock sample may carry a tag the TOP tables did not keep.
			fmt.Fprintf(tw, "%s\tnot captured\t\t\t\t\t\t\t\t\t\t\t\t%s\t\n", o.Name, lockCell(lockWait))
			continue
		}
		if st != nil && st.LatencyP99Seconds == nil {
			noPercentiles = append(noPercentiles, o.Name)
		}
		if st == nil {
			st = &ServerStatements{Coverage: tx.Coverage}
		}
		if tx == nil {
			tx = &ServerTransactions{}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", o.Name, secs(st.CPUSecondsPerOp),
			num(st.ExecutionsPerOp), secs(st.CPUSecondsPerExecution), secs(st.LatencySeconds), secs(st.LatencyP50Seconds),
			secs(st.LatencyP99Seconds), num(st.RowsPerOp), num(st.RowsScannedPerOp), strconv.FormatFloat(st.Coverage, 'f', 3, 64),
			num(tx.AttemptsPerOp), secs(tx.CommitLatencySeconds), secs(tx.TotalLatencyP99Seconds), secs(lockWait))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeServerLines(w, s, noPercentiles)
	for _, n := range s.Notes {
		fmt.Fprintf(w, "server note: %s\n", n)
	}
	return nil
}

// lockCell is a not-captured row's lock wait: empty when none was sampled.
func lockCell(v *float64) string {
	if v == nil {
		return ""
	}
	return secs(v)
}

// writeServerLines prints what the table has no column for: operations
// without percentiles and the contended row ranges.
func writeServerLines(w io.Writer, s *Server, noPercentiles []string) {
	if len(noPercentiles) > 0 {
		fmt.Fprintf(w, "server latency percentiles not captured for: %s (no LATENCY_DISTRIBUTION histogram: reads have none)\n",
			strings.Join(noPercentiles, ", "))
	}
	for _, r := range s.LockRanges {
		fmt.Fprintf(w, "lock contention: %s: %s wait over %d intervals, operations %s, columns %s, modes %s\n", r.Key,
			secs(&r.WaitSeconds), r.Intervals, strings.Join(r.Operations, ","), strings.Join(r.Columns, ","), strings.Join(r.Modes, ","))
	}
}

// secs prints seconds as FormatMicros does, "-" for none.
func secs(v *float64) string {
	if v == nil {
		return "-"
	}
	us := int64(*v * 1e6)
	if us == 0 && *v > 0 {
		return fmt.Sprintf("%.3gµs", *v*1e6)
	}
	return FormatMicros(us)
}

// num prints a figure with 3 significant digits, "-" for none.
func num(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'g', 3, 64)
}

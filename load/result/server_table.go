package result

import (
	"fmt"
	"io"
	"strconv"
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
	fmt.Fprintf(w, "server statistics (%s, %d whole minutes, %d client operations apportioned):\n",
		s.Source, len(s.Minutes), s.ApportionedOps)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\tcpu/op\texec/op\tcpu/exec\tlatency avg\trows/op\tscanned/op\tcoverage\tattempts/op\tcommit avg\t")
	for _, o := range s.Operations {
		st, tx := o.Statements, o.Transactions
		if st == nil && tx == nil {
			fmt.Fprintf(tw, "%s\tnot captured\t\t\t\t\t\t\t\t\t\n", o.Name)
			continue
		}
		if st == nil {
			st = &ServerStatements{Coverage: tx.Coverage}
		}
		if tx == nil {
			tx = &ServerTransactions{}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", o.Name, secs(st.CPUSecondsPerOp), num(st.ExecutionsPerOp),
			secs(st.CPUSecondsPerExecution), secs(st.LatencySeconds), num(st.RowsPerOp), num(st.RowsScannedPerOp),
			strconv.FormatFloat(st.Coverage, 'f', 3, 64), num(tx.AttemptsPerOp), secs(tx.CommitLatencySeconds))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range s.Notes {
		fmt.Fprintf(w, "server note: %s\n", n)
	}
	return nil
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

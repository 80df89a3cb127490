package result

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable prints a document for a person: what ran where, then one row
// per operation and an overall row, then the caveats.
func WriteTable(w io.Writer, d *Document) error {
	writeHeading(w, d)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	gfe := d.hasGFE()
	fmt.Fprint(tw, "operation\ttype\tcount\trate/s\tp50\tp90\tp99\tp99.9\tmax\tnot found\terrors\t")
	if gfe {
		fmt.Fprint(tw, "GFE p50\tGFE p99\t")
	}
	fmt.Fprintln(tw)
	for _, op := range d.Totals {
		writeRow(tw, op, gfe)
	}
	writeRow(tw, d.Overall, gfe)
	if err := tw.Flush(); err != nil {
		return err
	}
	if !gfe {
		fmt.Fprintln(w, d.GFENote(d.Overall))
	}
	if err := writeStreamsTable(w, d); err != nil {
		return err
	}
	writeSearchTable(w, d.Search)
	if missed := d.MeasuredMissed(); missed > 0 {
		fmt.Fprintf(w, "missed sends (in-flight cap reached) after the warm-up: %d\n", missed)
	}
	if err := writeServerTable(w, d.Server); err != nil {
		return err
	}
	writeTPCC(w, d.TPCC)
	if err := writeMonitoringTable(w, d); err != nil {
		return err
	}
	for _, n := range d.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}

// writeHeading prints the document's first line: the target, the runners,
// the time measured and the warm-up before it.
func writeHeading(w io.Writer, d *Document) {
	fmt.Fprintf(w, "run %s: %s/%s/%s on %s", d.Run, d.Target.Project, d.Target.Instance, d.Target.Database, d.Target.Endpoint)
	if d.Target.InstanceConfig != "" {
		fmt.Fprintf(w, " (%s", d.Target.InstanceConfig)
		if d.Target.ProcessingUnits > 0 {
			fmt.Fprintf(w, ", %d PU", d.Target.ProcessingUnits)
		}
		fmt.Fprint(w, ")")
	}
	fmt.Fprintf(w, ", %d runner(s), %s measured", len(d.Shards), d.End.Sub(d.WarmUp.End).Round(time.Millisecond))
	if d.WarmUp.Intervals > 0 {
		fmt.Fprintf(w, " after a %s warm-up", d.WarmUp.End.Sub(d.Start).Round(time.Millisecond))
		if !d.WarmUp.Stable {
			fmt.Fprint(w, " (NOT stable: the warm-up hit its maximum)")
		}
		if d.WarmUp.EndedBy == WarmUpEndedByServer {
			fmt.Fprintf(w, " (ended by the server's signal: intervals %d-%d cut after the client's)",
				d.WarmUp.Intervals-d.WarmUp.ServerIntervals, d.WarmUp.Intervals-1)
		}
	}
	fmt.Fprintln(w)
}

// writeStreamsTable prints, for a streams run, one row per stream and
// operation and a row of each stream's overall, with the stream's own
// window and a batch's wall time; the table above merged the streams.
func writeStreamsTable(w io.Writer, d *Document) error {
	if !d.HasStreams() {
		return nil
	}
	fmt.Fprintln(w, "per stream (each measured from its own start, after its own warm-up):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stream\toperation\ttype\tcount\trate/s\tp50\tp90\tp99\tp99.9\tmax\tnot found\terrors\t")
	for _, s := range d.Streams {
		for _, op := range s.Totals {
			if op.OK+op.NotFound+op.ErrorCount() == 0 {
				continue // an operation of other streams
			}
			fmt.Fprintf(tw, "%s\t", s.Name)
			writeRow(tw, op, false)
		}
		fmt.Fprintf(tw, "%s\t", s.Name)
		writeRow(tw, s.Overall, false)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i := range d.Streams {
		s := &d.Streams[i]
		fmt.Fprintf(w, "stream %s: started %s after the run, %s measured", s.Name,
			s.Start.Sub(d.Start).Round(time.Millisecond), s.End.Sub(s.WarmUp.End).Round(time.Millisecond))
		if s.WallTimeSeconds > 0 {
			fmt.Fprintf(w, ", batch wall time %s", FormatSeconds(s.WallTimeSeconds))
		}
		if c, ok := d.CutShort(s); ok {
			fmt.Fprintf(w, "; a batch: %s", c)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// FormatSeconds prints a duration in seconds to the millisecond.
func FormatSeconds(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}

// writeRow prints op's row, with its GFE p50 and p99 when the table has
// those columns ("n/a" for an operation without).
func writeRow(w io.Writer, op Operation, gfe bool) {
	l := op.Latency
	fmt.Fprintf(w, "%s\t%s\t%d\t%.1f\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t", op.Name, op.Type, op.OK, op.Throughput,
		FormatMicros(l.P50), FormatMicros(l.P90), FormatMicros(l.P99), FormatMicros(l.P999), FormatMicros(l.Max), op.NotFound, ErrorSummary(op.Errors))
	switch g := op.GFELatency; {
	case !gfe:
	case g == nil:
		fmt.Fprint(w, "n/a\tn/a\t")
	default:
		fmt.Fprintf(w, "%s\t%s\t", FormatMicros(g.P50), FormatMicros(g.P99))
	}
	fmt.Fprintln(w)
}

// hasGFE reports whether any operation has a GFE latency: the table shows
// its columns only then.
func (d *Document) hasGFE() bool {
	for _, op := range d.Totals {
		if op.GFELatency != nil {
			return true
		}
	}
	return false
}

// FormatMicros prints a latency with a unit that keeps 3 significant
// digits ("-" for none), the way every spanbench report writes latencies.
func FormatMicros(us int64) string {
	switch {
	case us == 0:
		return "-"
	case us < 1000:
		return fmt.Sprintf("%dµs", us)
	case us < 1_000_000:
		return fmt.Sprintf("%.3gms", float64(us)/1000)
	}
	return fmt.Sprintf("%.3gs", float64(us)/1e6)
}

// ErrorSummary prints error counts by gRPC code, sorted ("0" for none).
func ErrorSummary(errs map[string]uint64) string {
	if len(errs) == 0 {
		return "0"
	}
	parts := make([]string, 0, len(errs))
	for code, n := range errs {
		parts = append(parts, fmt.Sprintf("%s=%d", code, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

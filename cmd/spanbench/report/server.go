package report

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spanbench/spanbench/result"
)

// The page shows a run's server figures when its document has them: the
// SPANNER_SYS statistics per operation (server section) and Cloud
// Monitoring's figures (monitoring section). Like the text report, "not
// captured" is said, never drawn as zero, and "-" marks a figure Spanner
// does not report for that kind of operation.

// serverView is a run's SPANNER_SYS statistics.
type serverView struct {
	Source  string
	Minutes int
	// Unit names the intervals read: minute(s), or the coarser tables'.
	Unit  string
	Rows  []serverRow
	Notes []string
	// Locks are the most contended row ranges, one line each.
	Locks []string
}

// serverRow is one operation's statistics; NotCaptured leaves the rest
// empty.
type serverRow struct {
	Name                                                     string
	NotCaptured                                              bool
	CPUPerOp, ExecutionsPerOp, CPUPerExecution, LatencyAvg   string
	P50, P99                                                 string
	RowsPerOp, ScannedPerOp, Coverage, AttemptsPerOp, Commit string
	TxnP99, LockWait                                         string
}

func newServerView(s *result.Server) *serverView {
	if s == nil {
		return nil
	}
	v := &serverView{Source: s.Source, Minutes: len(s.Minutes), Unit: "minute(s)", Notes: s.Notes}
	if s.Granularity != "" && s.Granularity != "MINUTE" {
		v.Unit = s.Granularity + " interval(s), from the " + s.Granularity + " tables"
	}
	for _, r := range s.LockRanges {
		v.Locks = append(v.Locks, fmt.Sprintf("%s: %s lock wait over %d interval(s); operations %s; columns %s; modes %s",
			r.Key, seconds(&r.WaitSeconds), r.Intervals, strings.Join(r.Operations, ", "), strings.Join(r.Columns, ", "),
			strings.Join(r.Modes, ", ")))
	}
	for _, o := range s.Operations {
		st, tx := o.Statements, o.Transactions
		if st == nil && tx == nil {
			// A lock sample may carry a tag the TOP tables did not keep.
			row := serverRow{Name: o.Name, NotCaptured: true, LockWait: "-"}
			if o.Locks != nil {
				row.LockWait = seconds(&o.Locks.WaitSecondsShare)
			}
			v.Rows = append(v.Rows, row)
			continue
		}
		if st == nil {
			st = &result.ServerStatements{Coverage: tx.Coverage}
		}
		if tx == nil {
			tx = &result.ServerTransactions{}
		}
		row := serverRow{Name: o.Name, CPUPerOp: seconds(st.CPUSecondsPerOp), ExecutionsPerOp: figure3(st.ExecutionsPerOp),
			CPUPerExecution: seconds(st.CPUSecondsPerExecution), LatencyAvg: seconds(st.LatencySeconds),
			P50: seconds(st.LatencyP50Seconds), P99: seconds(st.LatencyP99Seconds), RowsPerOp: figure3(st.RowsPerOp),
			ScannedPerOp: figure3(st.RowsScannedPerOp), Coverage: strconv.FormatFloat(st.Coverage, 'f', 3, 64),
			AttemptsPerOp: figure3(tx.AttemptsPerOp), Commit: seconds(tx.CommitLatencySeconds), TxnP99: seconds(tx.TotalLatencyP99Seconds),
			LockWait: "-"}
		if o.Statements != nil && st.LatencyP99Seconds == nil {
			row.P50, row.P99 = "not captured", "not captured"
		}
		if o.Locks != nil {
			row.LockWait = seconds(&o.Locks.WaitSecondsShare)
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// monitoringView is a run's Cloud Monitoring figures.
type monitoringView struct {
	From, To string
	// WarmUp says which signal ended the warm-up; ServerEnded marks the
	// case where the figures include the server's warm-up minutes.
	WarmUp      string
	ServerEnded bool
	CPU         []monitoringCPURow
	Latency     []monitoringLatencyRow
	Requests    []result.MonitoringRequests
	Notes       []string
}

type monitoringCPURow struct{ Priority, Location, Mean, Max string }

type monitoringLatencyRow struct {
	Method   string
	Count    int64
	P50, P99 string
}

// newMonitoringView is d's monitoring section for the page, or nil.
func newMonitoringView(d *result.Document) *monitoringView {
	m, cut := d.Monitoring, d.WarmUp.EndedBy == result.WarmUpEndedByServer
	if m == nil {
		return nil
	}
	from := m.MeasuredFrom
	if from.IsZero() {
		from = m.WindowStart
	}
	v := &monitoringView{From: from.UTC().Format("2006-01-02 15:04 MST"), To: m.WindowEnd.UTC().Format("15:04 MST"),
		Requests: m.Requests, Notes: m.Notes}
	v.WarmUp, v.ServerEnded = serverWarmUpText(m.WarmUp, cut)
	for _, c := range m.CPU {
		loc := c.Location
		if loc == "" {
			loc = "-"
		}
		v.CPU = append(v.CPU, monitoringCPURow{Priority: c.Priority, Location: loc, Mean: percentOf(c.MeanRatio), Max: percentOf(c.MaxRatio)})
	}
	for _, l := range m.Latency {
		v.Latency = append(v.Latency, monitoringLatencyRow{Method: l.Method, Count: l.Count, P50: seconds(&l.P50Seconds), P99: seconds(&l.P99Seconds)})
	}
	return v
}

// serverWarmUpText says which signal ended the warm-up, as the text
// report does, and whether a reader must be warned: the server ended it
// but its end did not cut the figures (cut false).
func serverWarmUpText(w *result.MonitoringWarmUp, cut bool) (string, bool) {
	switch {
	case w == nil:
		return "", false
	case !w.Settled:
		return "the server's request rate and p99 never settled; the Client signal ended the warm-up", false
	case w.EndedBy == result.WarmUpEndedByServer && cut:
		return "the Server signal ended the warm-up: the server settled at " + w.SettledAt.UTC().Format("15:04 MST") +
			", after the client, and the figures start there", false
	case w.EndedBy == result.WarmUpEndedByServer:
		return "the Server signal ended the warm-up: the server settled at " + w.SettledAt.UTC().Format("15:04 MST") +
			", after the client, so the figures include server warm-up minutes", true
	case w.EndedBy == result.WarmUpEndedByClient:
		return "the Client signal ended the warm-up (the server settled at " + w.SettledAt.UTC().Format("15:04 MST") + ")", false
	}
	return "the server settled at " + w.SettledAt.UTC().Format("15:04 MST"), false
}

// seconds prints a figure in seconds as the tables print latencies, "-"
// for none.
func seconds(v *float64) string {
	if v == nil {
		return "-"
	}
	us := int64(*v * 1e6)
	if us == 0 && *v > 0 {
		return strconv.FormatFloat(*v*1e6, 'g', 3, 64) + "µs"
	}
	return result.FormatMicros(us)
}

// figure3 prints a figure with 3 significant digits, "-" for none.
func figure3(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'g', 3, 64)
}

func percentOf(ratio float64) string { return strconv.FormatFloat(ratio*100, 'f', 1, 64) + " %" }

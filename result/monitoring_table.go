package result

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"
)

// writeMonitoringTable prints d's monitoring section, when it has one:
// which signal ended the warm-up, CPU by priority and region, server
// latency per method and requests per status.
func writeMonitoringTable(w io.Writer, d *Document) error {
	m := d.Monitoring
	if m == nil {
		return nil
	}
	fmt.Fprintf(w, "cloud monitoring (%s to %s, %gs alignment):\n", monitoringTime(m.measuredFrom()),
		monitoringTime(m.WindowEnd), m.AlignmentSeconds)
	writeMonitoringWarmUp(w, m.WarmUp, d.WarmUp.EndedBy == WarmUpEndedByServer)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if len(m.CPU) > 0 {
		fmt.Fprintln(tw, "cpu priority\tlocation\tmean\tmax\t")
		for _, c := range m.CPU {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", c.Priority, orDash(c.Location), percent(c.MeanRatio), percent(c.MaxRatio))
		}
	}
	if len(m.Latency) > 0 {
		fmt.Fprintln(tw, "method\trequests\tp50\tp99\t")
		for _, l := range m.Latency {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t\n", l.Method, l.Count, secs(&l.P50Seconds), secs(&l.P99Seconds))
		}
	}
	if len(m.Requests) > 0 {
		fmt.Fprintln(tw, "status\trequests\t\t\t")
		for _, q := range m.Requests {
			fmt.Fprintf(tw, "%s\t%d\t\t\t\n", q.Status, q.Count)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range m.Notes {
		fmt.Fprintf(w, "cloud monitoring note: %s\n", n)
	}
	return nil
}

// writeMonitoringWarmUp says which signal ended the warm-up: the client's
// (the figures start after it) or the server's — the figures start where
// the server settled when its end cut them (cut), else they include
// minutes before it (a document whose cut could not be applied).
func writeMonitoringWarmUp(w io.Writer, wu *MonitoringWarmUp, cut bool) {
	switch {
	case wu == nil:
		return
	case !wu.Settled:
		fmt.Fprintln(w, "server warm-up: never settled; the client's signal ended the warm-up")
	case wu.EndedBy == WarmUpEndedByServer && cut:
		fmt.Fprintf(w, "server warm-up: settled at %s, after the client's: the Server signal ended the warm-up (the figures start there)\n",
			monitoringTime(wu.SettledAt))
	case wu.EndedBy == WarmUpEndedByServer:
		fmt.Fprintf(w, "server warm-up: settled at %s, after the client's: the Server signal ended the warm-up (the figures include server warm-up minutes)\n",
			monitoringTime(wu.SettledAt))
	case wu.EndedBy == WarmUpEndedByClient:
		fmt.Fprintf(w, "server warm-up: settled at %s; the Client signal ended the warm-up\n", monitoringTime(wu.SettledAt))
	default:
		fmt.Fprintf(w, "server warm-up: settled at %s\n", monitoringTime(wu.SettledAt))
	}
}

func (m *Monitoring) measuredFrom() time.Time {
	if m.MeasuredFrom.IsZero() {
		return m.WindowStart
	}
	return m.MeasuredFrom
}

func monitoringTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

func percent(ratio float64) string { return strconv.FormatFloat(ratio*100, 'f', 1, 64) + "%" }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

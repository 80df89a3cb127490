package result

import "time"

// The server's warm-up signal (docs/server-stats.md) is read from Cloud
// Monitoring minutes after the run's results are final. When it says the
// server settled after the client's warm-up ended, the monitoring section
// written into the run's report carries that end, and every derivation of
// the document (Finalize, a merge, a report read back) cuts the intervals
// before it: the section is the one owner of the cut, so a report read
// again derives the same totals.

// serverWarmUp extends the client's warm-up w of d's n intervals to the
// server's end, rounded up to whole intervals, when d's monitoring section
// says the server ended it. An end that would cut every interval is not
// applied: no figures would be left (a section edited by hand can say so;
// the server's rule needs 3 minutes of the run after its end).
func serverWarmUp(d *Document, w WarmUp, n int) WarmUp {
	m := d.Monitoring
	if m == nil || m.WarmUp == nil || m.WarmUp.EndedBy != WarmUpEndedByServer || !m.WarmUp.Settled || d.IntervalSeconds <= 0 {
		return w
	}
	k := wholeIntervals(m.WarmUp.SettledAt.Sub(d.Start), d.IntervalSeconds, n)
	if k <= w.Intervals || k >= n {
		return w
	}
	w.ServerIntervals, w.Intervals, w.EndedBy = k-w.Intervals, k, WarmUpEndedByServer
	w.End = d.Start.Add(time.Duration(k) * d.interval())
	return w
}

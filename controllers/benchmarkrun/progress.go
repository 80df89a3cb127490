package benchmarkrun

import (
	"math"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/protocol"
)

// The run's progress (status.progress) for `kubectl get`: live figures
// while it runs, merged from the runners' live reports (protocol.KeyLive
// in their shard maps, which the manager's cache holds already), then the
// final ones. The live figures move only when every runner has reported
// the same interval, one protocol.LiveDue says is reported, newer than
// the status's and ended by the manager's clock: they are exact (counts
// added up, p99 of the merged histograms), and a run gets at most one
// live status write per protocol.LivePeriod of its load, however often
// its runners write.

// liveProgress moves run.Status.Progress to the interval every shard has
// reported, if it may (see above); otherwise the status keeps the figures
// it has. A report that does not decode, names another start time than
// the one control publishes (a runner of an earlier run of the same
// name), or whose merge counts fewer operations or errors than the status
// already shows, is never shown. retry is how long until the reported
// interval ends by the manager's clock, when that alone held it back
// (runners' clocks run a little ahead); else 0.
func (r *BenchmarkRunReconciler) liveProgress(run *v1alpha1.BenchmarkRun, reports []shardReport, control controlRecord) (retry time.Duration) {
	p := run.Status.Progress
	if run.Status.StartTime == nil || (p != nil && !p.Live) || control.err != nil {
		return 0
	}
	start := control.start
	w := run.Spec.Workload.Resolved()
	interval := w.Interval.Duration
	shown := -1
	if p != nil && p.Interval != nil {
		shown = int(*p.Interval)
	}
	lives, ok := sameLiveInterval(reports, start, interval, shown)
	if !ok {
		return 0
	}
	at := lives[0].Interval
	elapsed := time.Duration(at+1) * interval
	if wait := start.Add(elapsed).Sub(r.now()); wait > 0 {
		return wait
	}
	m, ok := mergeLive(lives)
	// The manager keeps no count per shard: it refuses a merge whose
	// operations grew by less than the reported interval alone counts
	// (they went backwards, or a shard's counter went back), or whose
	// errors went backwards.
	if !ok || (p != nil && (m.operations-p.Operations < m.inInterval || m.errors < p.Errors)) {
		return 0
	}
	live := &v1alpha1.RunProgress{
		Live:       true,
		Elapsed:    metav1.Duration{Duration: min(elapsed, w.TotalDuration())},
		Total:      metav1.Duration{Duration: w.TotalDuration()},
		Interval:   ptr.To(int32(at)),
		Operations: m.operations,
		Errors:     m.errors,
		Throughput: v1alpha1.FormatThroughput(float64(m.inInterval) / interval.Seconds()),
		UpdateTime: ptr.To(metav1.NewTime(r.now())),
	}
	if m.latency.TotalCount() > 0 {
		live.P99 = v1alpha1.LatencyFromMicros(m.latency.ValueAtPercentiles(99)[0])
	}
	run.Status.Progress = withColumns(live)
	return 0
}

// sameLiveInterval decodes every shard's live report if all of them are
// of this run's life (start), name the same due interval and a newer one
// than shown. It returns at the first shard that is not, so a reconcile
// woken by one shard's write decodes little while the others catch up.
func sameLiveInterval(reports []shardReport, start time.Time, interval time.Duration, shown int) ([]protocol.LiveReport, bool) {
	lives := make([]protocol.LiveReport, 0, len(reports))
	for _, s := range reports {
		if s.err != nil || s.Live == "" {
			return nil, false
		}
		l, err := protocol.DecodeLiveReport(s.Live)
		if err != nil || !l.Start.Equal(start) || !protocol.LiveDue(l.Interval, interval) || l.Interval <= shown ||
			(len(lives) > 0 && l.Interval != lives[0].Interval) {
			return nil, false
		}
		lives = append(lives, l)
	}
	return lives, len(lives) > 0
}

// liveFigures are the shards' live reports of one interval, merged.
type liveFigures struct {
	operations, errors, inInterval int64
	latency                        *histogram.Compact
}

// mergeLive adds the reports up, exactly; false when a sum would pass
// an int64 or a histogram does not decode.
func mergeLive(lives []protocol.LiveReport) (liveFigures, bool) {
	m := liveFigures{latency: histogram.NewCompact()}
	var dec histogram.Decoder
	for _, l := range lives {
		// A report's errors and interval are within its operations
		// (DecodeLiveReport): bounding the operations' sum bounds all.
		if l.Operations > uint64(math.MaxInt64-m.operations) || dec.AddTo(m.latency, l.Latency) != nil {
			return liveFigures{}, false
		}
		m.operations += int64(l.Operations)
		m.errors += int64(l.Errors)
		m.inInterval += int64(l.IntervalOperations)
	}
	return m, true
}

// finalProgress replaces the live figures with the run's final results
// once status.overall holds them, in the same status write, so that the
// columns never go blank between the two. A run that ended without results
// keeps its last live figures.
func finalProgress(run *v1alpha1.BenchmarkRun) {
	o := run.Status.Overall
	if o == nil {
		return
	}
	w := run.Spec.Workload.Resolved()
	final := &v1alpha1.RunProgress{
		Elapsed:    metav1.Duration{Duration: w.TotalDuration()},
		Total:      metav1.Duration{Duration: w.TotalDuration()},
		Operations: o.Count + o.NotFound + o.Errors,
		Errors:     o.Errors,
		Throughput: o.Throughput,
	}
	if o.Latency != nil {
		final.P99 = o.Latency.P99
	}
	if p := run.Status.Progress; p != nil {
		final.UpdateTime = p.UpdateTime
	}
	run.Status.Progress = withColumns(final)
}

// withColumns fills p's column texts from its figures; "(live)" marks a
// live figure.
func withColumns(p *v1alpha1.RunProgress) *v1alpha1.RunProgress {
	mark := ""
	if p.Live {
		mark = " (live)"
	}
	p.Summary = shortDuration(p.Elapsed.Duration) + "/" + shortDuration(p.Total.Duration)
	p.Achieved, p.Latency = "", ""
	if p.Throughput != "" {
		p.Achieved = p.Throughput + "/s" + mark
	}
	if p.P99 != nil {
		p.Latency = p.P99.Duration.String() + mark
	}
	return p
}

// shortDuration is d to the second, without zero trailing units: 2m10s,
// 5m, 1h.
func shortDuration(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

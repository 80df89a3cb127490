package result

import (
	"math"

	"github.com/spanbench/spanbench/result/histogram"
)

// detectStable finds the end of an Auto warm-up: the first interval that
// starts a window of `window` complete intervals whose throughput and p99
// each stay within tolerancePercent of the window's mean. Without such a
// window before `max`, the warm-up ends at max and is reported unstable.
func detectStable(d *Document, points []StabilityPoint, wu WarmUpSettings) (intervals int, stable bool) {
	window := max(orDefault(wu.Window, DefaultWarmUpWindow), 1)
	tol := float64(orDefault(wu.TolerancePercent, DefaultWarmUpTolerance)) / 100
	maxIntervals := len(points)
	if wu.Max > 0 {
		maxIntervals = wholeIntervals(wu.Max, d.IntervalSeconds, len(points))
	}
	if start, ok := FirstStable(points[:min(len(points), maxIntervals+window)], window, tol); ok {
		return start, true
	}
	return maxIntervals, false
}

// FirstStable is the warm-up rule, its one owner: the first index that
// starts a window of `window` complete points whose throughput and p99 each
// stay within tol (a fraction, 0.1 for 10 %) of the window's mean. The
// client's intervals use it, and so does the server's minute series
// (spanner/monitoring), so both signals are read by the same rule.
func FirstStable(points []StabilityPoint, window int, tol float64) (start int, ok bool) {
	window = max(window, 1)
	for start := 0; start+window <= len(points); start++ {
		if withinTolerance(points[start:start+window], tol) {
			return start, true
		}
	}
	return 0, false
}

// StabilityPoint is one interval's throughput and p99 (any unit, the same
// for every point of a series). Complete is false for an interval the
// series does not cover in full: it cannot count as stable.
type StabilityPoint struct {
	Throughput, P99 float64
	Complete        bool
}

// intervalPoint is the point of interval index, from its successful
// operations and its latency over all operations. The last interval is
// incomplete when the run ended inside it and cannot count as stable.
func intervalPoint(d *Document, index int, ok uint64, all *histogram.Compact) StabilityPoint {
	runIntervals := d.End.Sub(d.Start).Seconds() / d.IntervalSeconds
	return StabilityPoint{
		Throughput: float64(ok) / d.IntervalSeconds,
		P99:        float64(all.ValueAtPercentiles(99)[0]),
		Complete:   float64(index+1) <= runIntervals,
	}
}

func withinTolerance(ps []StabilityPoint, tol float64) bool {
	var sumT, sumP float64
	for _, p := range ps {
		if !p.Complete || p.Throughput == 0 {
			return false
		}
		sumT += p.Throughput
		sumP += p.P99
	}
	meanT, meanP := sumT/float64(len(ps)), sumP/float64(len(ps))
	for _, p := range ps {
		if math.Abs(p.Throughput-meanT) > tol*meanT || math.Abs(p.P99-meanP) > tol*meanP {
			return false
		}
	}
	return true
}

// orDefault is v, or def when v is unset (0).
func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

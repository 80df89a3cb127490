package result

import (
	"math"

	"github.com/spanbench/spanbench/load/histogram"
)

// detectStable finds the end of an Auto warm-up: the first interval that
// starts a window of `window` complete intervals whose throughput and p99
// each stay within tolerancePercent of the window's mean. Without such a
// window before `max`, the warm-up ends at max and is reported unstable.
func detectStable(d *Document, points []point, wu WarmUpSettings) (intervals int, stable bool) {
	window := max(orDefault(wu.Window, DefaultWarmUpWindow), 1)
	tol := float64(orDefault(wu.TolerancePercent, DefaultWarmUpTolerance)) / 100
	maxIntervals := len(points)
	if wu.Max > 0 {
		maxIntervals = wholeIntervals(wu.Max, d.IntervalSeconds, len(points))
	}
	for start := 0; start <= maxIntervals && start+window <= len(points); start++ {
		if withinTolerance(points[start:start+window], tol) {
			return start, true
		}
	}
	return maxIntervals, false
}

// point is one interval's throughput and p99 over all operations.
type point struct {
	throughput, p99 float64
	complete        bool
}

// intervalPoint is the point of interval index, from its successful
// operations and its latency over all operations. The last interval is
// incomplete when the run ended inside it and cannot count as stable.
func intervalPoint(d *Document, index int, ok uint64, all *histogram.Compact) point {
	runIntervals := d.End.Sub(d.Start).Seconds() / d.IntervalSeconds
	return point{
		throughput: float64(ok) / d.IntervalSeconds,
		p99:        float64(all.ValueAtPercentiles(99)[0]),
		complete:   float64(index+1) <= runIntervals,
	}
}

func withinTolerance(ps []point, tol float64) bool {
	var sumT, sumP float64
	for _, p := range ps {
		if !p.complete || p.throughput == 0 {
			return false
		}
		sumT += p.throughput
		sumP += p.p99
	}
	meanT, meanP := sumT/float64(len(ps)), sumP/float64(len(ps))
	for _, p := range ps {
		if math.Abs(p.throughput-meanT) > tol*meanT || math.Abs(p.p99-meanP) > tol*meanP {
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

package result

import (
	"math"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/spanbench/spanbench/load/histogram"
)

// detectStable finds the end of an Auto warm-up: the first interval that
// starts a window of `window` complete intervals whose throughput and p99
// each stay within tolerancePercent of the window's mean. Without such a
// window before `max`, the warm-up ends at max and is reported unstable.
func detectStable(d *Document, decoded []map[string]histSet, wu WarmUpSettings) (intervals int, stable bool) {
	window := orDefault(wu.Window, DefaultWarmUpWindow)
	tol := float64(orDefault(wu.TolerancePercent, DefaultWarmUpTolerance)) / 100
	maxIntervals := len(d.Intervals)
	if wu.Max > 0 {
		maxIntervals = int(math.Ceil(wu.Max.Seconds() / d.IntervalSeconds))
	}
	points := intervalPoints(d, decoded)
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

// intervalPoints computes a point per interval, by index. The last interval
// is incomplete when the run ended inside it and cannot count as stable.
func intervalPoints(d *Document, decoded []map[string]histSet) []point {
	n := 0
	for _, in := range d.Intervals {
		n = max(n, in.Index+1)
	}
	points := make([]point, n)
	runIntervals := d.End.Sub(d.Start).Seconds() / d.IntervalSeconds
	for i, in := range d.Intervals {
		all := histogram.New()
		var ok uint64
		for _, op := range in.Operations {
			ok += op.OK
			all.Merge(decoded[i][op.Name].latency())
		}
		points[in.Index] = point{
			throughput: float64(ok) / d.IntervalSeconds,
			p99:        float64(p99(all)),
			complete:   float64(in.Index+1) <= runIntervals,
		}
	}
	return points
}

func p99(h *hdr.Histogram) int64 { return h.ValueAtQuantile(99) }

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

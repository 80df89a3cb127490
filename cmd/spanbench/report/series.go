package report

import (
	"fmt"
	"math"
	"sort"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/plot/plotter"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
)

// opSeries is one operation's time series in a run: x is seconds since
// the run's start (an interval's midpoint), latencies are in milliseconds.
type opSeries struct {
	name       string
	throughput plotter.XYs
	p50, p99   plotter.XYs
}

// runSeries is what the time plots of one run draw.
type runSeries struct {
	ops []opSeries
	// target is the target rate over all operations (empty in closed loop).
	target plotter.XYs
	// warmUpEnd is where the warm-up ended, in seconds since the start.
	warmUpEnd float64
	// end is the end of the last interval, in seconds since the start.
	end float64
}

// operationNames lists a document's operations: the spec's, in spec
// order, then any others its intervals hold, by name.
func operationNames(d *result.Document) []string {
	var names []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	for _, o := range d.Spec.Settings().Operations {
		add(o.Name)
	}
	var extra []string
	for _, in := range d.Intervals {
		for _, op := range in.Operations {
			if !seen[op.Name] {
				extra = append(extra, op.Name)
			}
		}
	}
	sort.Strings(extra)
	for _, n := range extra {
		add(n)
	}
	for _, op := range d.Totals {
		add(op.Name)
	}
	return names
}

// timeSeries computes a run's per-interval throughput and latency
// quantiles. Each quantile comes from that interval's merged histogram,
// decoded here: the document's own p50/p99 fields are not trusted.
func timeSeries(d *result.Document) (runSeries, error) {
	names := operationNames(d)
	s := runSeries{ops: make([]opSeries, len(names))}
	index := map[string]int{}
	for i, n := range names {
		s.ops[i].name = n
		index[n] = i
	}
	step := d.IntervalSeconds
	if step <= 0 {
		return s, fmt.Errorf("run %s: intervalSeconds is %v; a time series needs a positive interval", d.Run, step)
	}
	s.warmUpEnd = float64(d.WarmUp.Intervals) * step
	for _, in := range d.Intervals {
		x := (float64(in.Index) + 0.5) * step
		s.end = math.Max(s.end, float64(in.Index+1)*step)
		if in.TargetRate > 0 {
			s.target = append(s.target, plotter.XY{X: x, Y: in.TargetRate})
		}
		ok := make([]uint64, len(names))
		for _, op := range in.Operations {
			i := index[op.Name]
			ok[i] = op.OK
			h, err := histogram.Decode(op.LatencyHistogram)
			if err != nil {
				return s, fmt.Errorf("run %s, interval %d, operation %s: %w", d.Run, in.Index, op.Name, err)
			}
			if h.TotalCount() == 0 {
				continue
			}
			s.ops[i].p50 = append(s.ops[i].p50, plotter.XY{X: x, Y: millis(h.ValueAtQuantile(50))})
			s.ops[i].p99 = append(s.ops[i].p99, plotter.XY{X: x, Y: millis(h.ValueAtQuantile(99))})
		}
		// An operation absent from an interval completed nothing in it.
		for i := range names {
			s.ops[i].throughput = append(s.ops[i].throughput, plotter.XY{X: x, Y: float64(ok[i]) / step})
		}
	}
	s.warmUpEnd = math.Min(s.warmUpEnd, s.end)
	return s, nil
}

// distribution is one curve of a percentile-distribution plot: x is
// 1/(1-q), y the latency at quantile q in milliseconds.
type distribution struct {
	latency, service plotter.XYs
}

// pointsPerDecade is how many quantiles a distribution curve has per
// factor of ten of 1/(1-q).
const pointsPerDecade = 12

// distributions computes each operation's percentile distribution after
// the warm-up, from the totals' merged histograms, by operation name.
func distributions(d *result.Document) (map[string]distribution, error) {
	out := map[string]distribution{}
	for _, op := range d.Totals {
		lat, err := histogram.Decode(op.LatencyHistogram)
		if err != nil {
			return nil, fmt.Errorf("run %s, operation %s: %w", d.Run, op.Name, err)
		}
		svc, err := histogram.Decode(op.ServiceHistogram)
		if err != nil {
			return nil, fmt.Errorf("run %s, operation %s: %w", d.Run, op.Name, err)
		}
		if lat.TotalCount() == 0 {
			continue
		}
		out[op.Name] = distribution{latency: quantileCurve(lat), service: quantileCurve(svc)}
	}
	return out, nil
}

// quantileCurve samples h at quantiles evenly spaced on the 1/(1-q) axis,
// up to the decade where h's values run out: with n values, quantiles
// beyond 1-1/n say nothing more than the maximum, where the curve ends.
func quantileCurve(h *hdr.Histogram) plotter.XYs {
	n := h.TotalCount()
	if n == 0 {
		return nil
	}
	points := decades(n) * pointsPerDecade
	xys := make(plotter.XYs, 0, points+1)
	for i := 0; i <= points; i++ {
		x := math.Pow(10, float64(i)/pointsPerDecade)
		q := 100 * (1 - 1/x)
		if i == points {
			q = 100 // the maximum, as HdrHistogram's own plots end
		}
		xys = append(xys, plotter.XY{X: x, Y: millis(h.ValueAtQuantile(q))})
	}
	return xys
}

// decades is how many factors of ten of 1/(1-q) n values resolve (at
// least one, so a curve always has a width).
func decades(n int64) int {
	return max(1, int(math.Ceil(math.Log10(float64(n)))))
}

func millis(micros int64) float64 { return float64(micros) / 1000 }

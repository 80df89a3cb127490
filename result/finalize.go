package result

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/spanbench/spanbench/result/histogram"
)

// Finalize derives everything that is not raw data from the intervals: each
// interval's p50/p99/max, where the warm-up ended, and the totals after it.
// It is idempotent and is run after every merge, so a document's derived
// figures always agree with its intervals. It decodes one interval at a
// time (twice: once for the intervals' figures, once for the totals after
// the warm-up), so its memory does not grow with the run's length.
func Finalize(d *Document) error {
	c := &codec{}
	if d.HasStreams() {
		return finalizeStreams(d, c)
	}
	return derive(d, c, decodingSource(d, c))
}

// intervalSource calls fn with each interval of a document that want
// accepts, and its operations' histograms, valid during the call only.
type intervalSource func(want func(*Interval) bool, fn func(in *Interval, sets map[string]histSet) error) error

// decodingSource decodes d's intervals one at a time.
func decodingSource(d *Document, c *codec) intervalSource {
	return func(want func(*Interval) bool, fn func(*Interval, map[string]histSet) error) error {
		sets := map[string]histSet{}
		for i := range d.Intervals {
			in := &d.Intervals[i]
			if !want(in) {
				continue
			}
			clear(sets)
			for _, op := range in.Operations {
				s := newHistSet()
				if err := op.Histograms.addTo(c, s); err != nil {
					return fmt.Errorf("interval %d, operation %s: %w", in.Index, op.Name, err)
				}
				sets[op.Name] = s
			}
			if err := fn(in, sets); err != nil {
				return err
			}
		}
		return nil
	}
}

// derive computes the intervals' figures, the warm-up and the totals of d
// from src. The totals' histograms are written in today's encoding, so d
// becomes a document of today's version (a v1 document's intervals keep
// their v1 histograms, which today's readers read too).
func derive(d *Document, c *codec, src intervalSource) error {
	d.SchemaVersion = SchemaVersion
	if d.Search != nil {
		d.SchemaVersion = SchemaVersionSearch
	}
	n := 0
	for _, in := range d.Intervals {
		if in.Index < 0 || in.Index >= MaxIntervals {
			return fmt.Errorf("interval index %d is outside 0 to %d", in.Index, MaxIntervals-1)
		}
		n = max(n, in.Index+1)
	}
	points := make([]StabilityPoint, n)
	all := func(*Interval) bool { return true }
	err := src(all, func(in *Interval, sets map[string]histSet) error {
		overall := histogram.NewCompact()
		var ok uint64
		for j := range in.Operations {
			op := &in.Operations[j]
			lat := sets[op.Name].latency()
			s := histogram.SummarizeCompact(lat)
			op.P50, op.P99, op.Max = s.P50, s.P99, s.Max
			overall.Merge(lat)
			ok += op.OK
		}
		points[in.Index] = intervalPoint(d, in.Index, ok, overall)
		return nil
	})
	if err != nil {
		return err
	}
	d.WarmUp = findWarmUp(d, points)
	for i := range d.Intervals {
		d.Intervals[i].WarmUp = d.Intervals[i].Index < d.WarmUp.Intervals
	}
	return computeTotals(d, c, src)
}

func (d *Document) interval() time.Duration {
	return time.Duration(d.IntervalSeconds * float64(time.Second))
}

// findWarmUp applies the spec's warm-up mode to the intervals' points.
func findWarmUp(d *Document, points []StabilityPoint) WarmUp {
	wu := d.Spec.Settings().WarmUp
	w := WarmUp{Mode: WarmUpNone, End: d.Start, Stable: true}
	if d.IntervalSeconds <= 0 {
		return w
	}
	w.Mode = wu.Mode
	switch wu.Mode {
	case WarmUpFixed:
		// Rounded up to whole intervals: results only exclude whole intervals.
		w.Intervals = wholeIntervals(wu.Duration, d.IntervalSeconds, len(points))
	case WarmUpAuto:
		w.Intervals, w.Stable = detectStable(d, points, wu)
	}
	w.End = d.Start.Add(time.Duration(w.Intervals) * d.interval())
	return serverWarmUp(d, w, len(points))
}

// wholeIntervals is how many intervals of the given length d spans,
// rounded up, and at most n (the run's): the warm-up never extends past the
// intervals there are, whatever a spec says.
func wholeIntervals(d time.Duration, intervalSeconds float64, n int) int {
	k := math.Ceil(d.Seconds() / intervalSeconds)
	if !(k > 0) {
		return 0
	}
	return int(min(k, float64(n)))
}

// computeTotals merges the intervals after the warm-up into per-operation
// totals and an overall figure.
func computeTotals(d *Document, c *codec, src intervalSource) error {
	type acc struct {
		op    Operation
		hists histSet
	}
	byName := map[string]*acc{}
	overall := &acc{op: Operation{Name: "overall"}, hists: newHistSet()}
	for _, o := range d.Spec.Settings().Operations {
		byName[o.Name] = &acc{op: Operation{Name: o.Name, Type: o.Type}, hists: newHistSet()}
	}
	measured := func(in *Interval) bool { return !in.WarmUp }
	err := src(measured, func(in *Interval, sets map[string]histSet) error {
		for _, op := range in.Operations {
			a := byName[op.Name]
			if a == nil {
				return fmt.Errorf("interval %d has operation %q, which the spec does not define", in.Index, op.Name)
			}
			for _, t := range []*acc{a, overall} {
				if err := t.op.Counts.Add(op.Counts); err != nil {
					return fmt.Errorf("totals of %s: %w", t.op.Name, err)
				}
				t.hists.add(sets[op.Name])
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	seconds := d.End.Sub(d.WarmUp.End).Seconds()
	finish := func(a *acc) (Operation, error) {
		a.op.Latency, a.op.Service = histogram.SummarizeCompact(a.hists.latency()), histogram.SummarizeCompact(a.hists.service())
		if e := a.hists.errorLatency(); e.TotalCount() > 0 {
			s := histogram.SummarizeCompact(e)
			a.op.ErrorLatency = &s
		}
		if g := a.hists.gfeLatency(); g.TotalCount() > 0 {
			s := histogram.SummarizeCompact(g)
			a.op.GFELatency = &s
		}
		if seconds > 0 {
			a.op.Throughput = float64(a.op.OK) / seconds
		}
		return a.op, a.op.Histograms.encode(c, a.hists)
	}
	d.Totals = d.Totals[:0]
	for _, a := range byName {
		op, err := finish(a)
		if err != nil {
			return err
		}
		d.Totals = append(d.Totals, op)
	}
	sort.Slice(d.Totals, func(i, j int) bool { return d.Totals[i].Name < d.Totals[j].Name })
	d.Overall, err = finish(overall)
	deriveTPCC(d)
	return err
}

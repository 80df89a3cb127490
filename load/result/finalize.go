package result

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/spanbench/spanbench/load/histogram"
)

// Finalize derives everything that is not raw data from the intervals: each
// interval's p50/p99/max, where the warm-up ended, and the totals after it.
// It is idempotent and is run after every merge, so a document's derived
// figures always agree with its intervals.
func Finalize(d *Document) error {
	decoded, err := decodeIntervals(d.Intervals)
	if err != nil {
		return err
	}
	for i := range d.Intervals {
		for j := range d.Intervals[i].Operations {
			op := &d.Intervals[i].Operations[j]
			s := histogram.Summarize(decoded[i][op.Name].latency())
			op.P50, op.P99, op.Max = s.P50, s.P99, s.Max
		}
	}
	d.WarmUp = findWarmUp(d, decoded)
	for i := range d.Intervals {
		d.Intervals[i].WarmUp = d.Intervals[i].Index < d.WarmUp.Intervals
	}
	return computeTotals(d, decoded)
}

// decodeIntervals decodes each interval's histograms once.
func decodeIntervals(intervals []Interval) ([]map[string]histSet, error) {
	out := make([]map[string]histSet, len(intervals))
	for i, in := range intervals {
		out[i] = map[string]histSet{}
		for _, op := range in.Operations {
			hists, err := op.Histograms.decode()
			if err != nil {
				return nil, fmt.Errorf("interval %d, operation %s: %w", in.Index, op.Name, err)
			}
			out[i][op.Name] = hists
		}
	}
	return out, nil
}

func (d *Document) interval() time.Duration {
	return time.Duration(d.IntervalSeconds * float64(time.Second))
}

// findWarmUp applies the spec's warm-up mode to the intervals.
func findWarmUp(d *Document, decoded []map[string]histSet) WarmUp {
	wu := d.Spec.Settings().WarmUp
	w := WarmUp{Mode: WarmUpNone, End: d.Start, Stable: true}
	if d.IntervalSeconds <= 0 {
		return w
	}
	w.Mode = wu.Mode
	switch wu.Mode {
	case WarmUpFixed:
		// Rounded up to whole intervals: results only exclude whole intervals.
		w.Intervals = int(math.Ceil(wu.Duration.Seconds() / d.IntervalSeconds))
	case WarmUpAuto:
		w.Intervals, w.Stable = detectStable(d, decoded, wu)
	}
	w.End = d.Start.Add(time.Duration(w.Intervals) * d.interval())
	return w
}

// computeTotals merges the intervals after the warm-up into per-operation
// totals and an overall figure.
func computeTotals(d *Document, decoded []map[string]histSet) error {
	type acc struct {
		op    Operation
		hists histSet
	}
	byName := map[string]*acc{}
	overall := &acc{op: Operation{Name: "overall"}, hists: newHistSet()}
	for _, o := range d.Spec.Settings().Operations {
		byName[o.Name] = &acc{op: Operation{Name: o.Name, Type: o.Type}, hists: newHistSet()}
	}
	for i, in := range d.Intervals {
		if in.WarmUp {
			continue
		}
		for _, op := range in.Operations {
			a := byName[op.Name]
			if a == nil {
				return fmt.Errorf("interval %d has operation %q, which the spec does not define", in.Index, op.Name)
			}
			for _, t := range []*acc{a, overall} {
				t.op.Counts.Add(op.Counts)
				if err := t.hists.add(decoded[i][op.Name]); err != nil {
					return err
				}
			}
		}
	}
	seconds := d.End.Sub(d.WarmUp.End).Seconds()
	finish := func(a *acc) (Operation, error) {
		a.op.Latency, a.op.Service = histogram.Summarize(a.hists.latency()), histogram.Summarize(a.hists.service())
		if e := a.hists.errorLatency(); e.TotalCount() > 0 {
			s := histogram.Summarize(e)
			a.op.ErrorLatency = &s
		}
		if seconds > 0 {
			a.op.Throughput = float64(a.op.OK) / seconds
		}
		return a.op, a.op.Histograms.encode(a.hists)
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
	var err error
	d.Overall, err = finish(overall)
	return err
}

//go:build !runner

package main

import (
	"fmt"
	"math"
	"sort"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/spanbench/spanbench/campaign/stats"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
)

// opSeries is one operation of one run after its warm-up: the per-interval
// figures the single-run interval sections, and their exact merge.
type opSeries struct {
	intervals []stats.Interval // latency of successes, OK count, seconds
	errors    []int64          // failed operations per interval
	merged    *hdr.Histogram   // every measured interval's latency, merged
	ok, errs  int64
	seconds   float64
}

// runSeries reads each operation's measured intervals from a result: the
// intervals from the warm-up's end (result.WarmUp.Intervals, the same cut
// its Totals use) to the run's end. An index with no entry for an operation
// is an interval in which it completed nothing; the last interval is as long
// as the run lasted into it, so Σ seconds is the measured time of the Totals
// and Σ OK / Σ seconds their throughput.
func runSeries(path string, d *result.Document) (map[string]*opSeries, error) {
	if !(d.IntervalSeconds > 0) || !d.End.After(d.Start) {
		return nil, fmt.Errorf("%s: no time series (interval %gs, %s to %s)", path, d.IntervalSeconds, d.Start, d.End)
	}
	step := time.Duration(d.IntervalSeconds * float64(time.Second))
	n := int(math.Ceil(d.End.Sub(d.Start).Seconds() / d.IntervalSeconds))
	first := d.WarmUp.Intervals
	if first < 0 || first >= n {
		return nil, fmt.Errorf("%s: no measured intervals after the warm-up (%d of %d intervals are warm-up)", path, first, n)
	}
	series := map[string]*opSeries{}
	for _, name := range operationNames(d) {
		s := &opSeries{merged: histogram.New(), intervals: make([]stats.Interval, n-first), errors: make([]int64, n-first)}
		for i := range s.intervals {
			start := d.Start.Add(time.Duration(first+i) * step)
			end := start.Add(step)
			if end.After(d.End) {
				end = d.End
			}
			s.intervals[i] = stats.Interval{Latency: histogram.New(), Seconds: end.Sub(start).Seconds()}
			s.seconds += s.intervals[i].Seconds
		}
		series[name] = s
	}
	for _, in := range d.Intervals {
		if in.Index < first {
			continue
		}
		// Completions drained just after the run's end (the engine's last,
		// partial interval) count with the last interval, as the Totals
		// count them within the measured time.
		i := min(in.Index, n-1) - first
		for _, op := range in.Operations {
			if err := series[op.Name].add(i, op); err != nil {
				return nil, fmt.Errorf("%s: interval %d, operation %s: %w", path, in.Index, op.Name, err)
			}
		}
	}
	return series, nil
}

// add records one interval's entry for the operation.
func (s *opSeries) add(i int, op result.IntervalOperation) error {
	h, err := histogram.Decode(op.LatencyHistogram)
	if err != nil {
		return err
	}
	in := &s.intervals[i]
	if err := histogram.Merge(in.Latency, h); err != nil {
		return err
	}
	if err := histogram.Merge(s.merged, h); err != nil {
		return err
	}
	var errs uint64
	for _, c := range op.Errors {
		errs += c
	}
	if op.OK > math.MaxInt64/2 || errs > math.MaxInt64/2 {
		return fmt.Errorf("counts %d ok, %d errors are out of range", op.OK, errs)
	}
	in.Ops += int64(op.OK)
	s.errors[i] += int64(errs)
	s.ok += int64(op.OK)
	s.errs += int64(errs)
	return nil
}

// operationNames lists the operations a result measured, sorted: those in
// its totals and any in its intervals.
func operationNames(d *result.Document) []string {
	seen := map[string]bool{}
	for _, op := range d.Totals {
		seen[op.Name] = true
	}
	for _, in := range d.Intervals {
		for _, op := range in.Operations {
			seen[op.Name] = true
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// pool merges several runs' series of one operation exactly: histograms
// merged, counts and seconds summed. It is what the table prints as a
// side's figure; percentiles are read from the merge, never averaged.
func pool(runs []*opSeries) (*opSeries, error) {
	p := &opSeries{merged: histogram.New()}
	for _, r := range runs {
		if err := histogram.Merge(p.merged, r.merged); err != nil {
			return nil, err
		}
		p.ok, p.errs, p.seconds = p.ok+r.ok, p.errs+r.errs, p.seconds+r.seconds
	}
	return p, nil
}

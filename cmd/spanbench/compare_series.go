//go:build !runner

package main

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/spanbench/spanbench/campaign/comparison"
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
// and Σ OK / Σ seconds their throughput. A streams result has no top-level
// series: each operation's is its stream's (comparison.StreamOf, the rule the
// campaign comparison follows), timed from the stream's start.
func runSeries(path string, d *result.Document) (map[string]*opSeries, error) {
	series := map[string]*opSeries{}
	for _, name := range operationNames(d) {
		w, err := windowOf(d, name)
		if errors.Is(err, comparison.ErrNoStream) {
			continue // listed by the spec, run by no stream of this result
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if series[name], err = w.series(name, d.IntervalSeconds); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return series, nil
}

// window is a time series and the span it covers: a run's, or one of its
// streams'.
type window struct {
	start, end time.Time
	warmUp     int // intervals
	intervals  []result.Interval
}

// windowOf is the window that holds op's series in d.
func windowOf(d *result.Document, op string) (window, error) {
	if !d.HasStreams() {
		return window{d.Start, d.End, d.WarmUp.Intervals, d.Intervals}, nil
	}
	s, err := comparison.StreamOf(d, op)
	if err != nil {
		return window{}, err
	}
	return window{s.Start, s.End, s.WarmUp.Intervals, s.Intervals}, nil
}

// series is op's measured series in w, intervals of intervalSeconds.
func (w window) series(op string, intervalSeconds float64) (*opSeries, error) {
	if !(intervalSeconds > 0) || !w.end.After(w.start) {
		return nil, fmt.Errorf("no time series (interval %gs, %s to %s)", intervalSeconds, w.start, w.end)
	}
	step := time.Duration(intervalSeconds * float64(time.Second))
	n := int(math.Ceil(w.end.Sub(w.start).Seconds() / intervalSeconds))
	first := w.warmUp
	if first < 0 || first >= n {
		return nil, fmt.Errorf("no measured intervals after the warm-up (%d of %d intervals are warm-up)", first, n)
	}
	s := &opSeries{merged: histogram.New(), intervals: make([]stats.Interval, n-first), errors: make([]int64, n-first)}
	for i := range s.intervals {
		start := w.start.Add(time.Duration(first+i) * step)
		end := start.Add(step)
		if end.After(w.end) {
			end = w.end
		}
		s.intervals[i] = stats.Interval{Latency: histogram.New(), Seconds: end.Sub(start).Seconds()}
		s.seconds += s.intervals[i].Seconds
	}
	for _, in := range w.intervals {
		if in.Index < first {
			continue
		}
		// Completions drained just after the run's end (the engine's last,
		// partial interval) count with the last interval, as the Totals
		// count them within the measured time.
		i := min(in.Index, n-1) - first
		for _, o := range in.Operations {
			if o.Name != op {
				continue
			}
			if err := s.add(i, o); err != nil {
				return nil, fmt.Errorf("interval %d, operation %s: %w", in.Index, op, err)
			}
		}
	}
	return s, nil
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

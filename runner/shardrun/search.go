package shardrun

import (
	"context"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/capacity"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/runner/schedule"
)

// SearchSteps are a capacity search's steps as a process runs them, the
// one owner of how a step runs and is measured for `spanbench run` and
// the runner pods alike: each step a constant rate for its warm-up and
// measured time, judged from its own measured intervals only, its
// intervals following the previous steps' in the search's document.
type SearchSteps struct {
	// Interval is the workload's interval; PerStep one step's length.
	Interval, PerStep time.Duration
	// WarmUp and Intervals are a step's warm-up and whole length, in
	// intervals.
	WarmUp, Intervals int
	spec              *v1alpha1.WorkloadSpec
}

// SearchStepsOf is the step geometry of a resolved workload with a search.
func SearchStepsOf(w *v1alpha1.WorkloadSpec) SearchSteps {
	st := SearchSteps{Interval: w.Interval.Duration, PerStep: w.Load.Search.PerStep(), spec: w}
	st.WarmUp, st.Intervals = w.SearchStepIntervals()
	return st
}

// Window is step k's measured intervals in the search's document,
// [first, end): after its warm-up (WorkloadSpec.SearchWindow).
func (st SearchSteps) Window(k int) (first, end int) { return st.spec.SearchWindow(k) }

// Run runs step k at rate (all shards' together; cfg's shard takes its
// share) from start, and measures it from its own intervals after the
// warm-up (capacity.Measure). The document's intervals, and those cfg's
// Drained sees, are numbered in the search's document: step k's follow
// the k steps before it.
func (st SearchSteps) Run(ctx context.Context, cfg engine.Config, k int, rate float64, start time.Time) (*result.Document, capacity.Measurement, error) {
	offset := k * st.Intervals
	cfg.Start, cfg.Seed = start, cfg.Seed+int64(k)
	cfg.Load.Profile = schedule.Profile{{From: rate, To: rate, Duration: st.PerStep}}
	if drained := cfg.Drained; drained != nil {
		cfg.Drained = func(in result.Interval) {
			in.Index += offset
			drained(in)
		}
	}
	doc, err := engine.Run(ctx, cfg)
	if err != nil {
		return nil, capacity.Measurement{}, err
	}
	m, err := capacity.Measure(doc.Intervals, st.WarmUp, st.Intervals, st.Interval.Seconds(), rate)
	if err != nil {
		return nil, capacity.Measurement{}, err
	}
	for i := range doc.Intervals {
		doc.Intervals[i].Index += offset
	}
	return doc, m, nil
}

// AppendStep adds a step's document (from Run) to the search's: its
// intervals follow the previous steps', its shards' end and missed sends
// join the search's.
func AppendStep(out, step *result.Document) *result.Document {
	if out == nil {
		return step
	}
	out.Intervals = append(out.Intervals, step.Intervals...)
	out.End = step.End
	for i := range out.Shards {
		if i < len(step.Shards) {
			out.Shards[i].Ended = step.Shards[i].Ended
			out.Shards[i].Missed += step.Shards[i].Missed
		}
	}
	return out
}

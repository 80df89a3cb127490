package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/capacity"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/runner/schedule"
	"github.com/spanbench/spanbench/spanner/customcheck"
)

// errSearchShards refuses a search split over processes: each step's
// decision reads all runners' merged intervals, which separate processes
// cannot share.
var errSearchShards = errors.New("load.search: a capacity search decides each step from all its runners' intervals; run it in one process (no --shard)")

// runSearch runs a capacity search (load.search) with cfg, the engine
// configuration of the workload w bound to its session: one step after the
// other, each a constant rate for its warm-up and measured time, started at
// the instant the previous one's schedule ends (or, if that one drained
// past it, at the next interval boundary after it did). Each step is
// judged from its own measured intervals only (capacity.Measure and
// Evaluate), and the search chooses the next rate from that verdict. It
// prints each step to progress as it goes, and returns one document: the
// steps' intervals back to back, with the search's section.
func runSearch(ctx context.Context, cfg engine.Config, w *v1alpha1.WorkloadSpec, shards int, progress io.Writer) (*result.Document, error) {
	if shards > 1 {
		return nil, errSearchShards
	}
	st, err := newSearchSteps(cfg, w)
	if err != nil {
		return nil, err
	}
	result.WriteSearchHeading(progress, st.sec)
	start := cfg.Start
	if start.IsZero() {
		start = time.Now()
	}
	deadline := start.Add(w.Duration.Duration)
	var out *result.Document
	next := start
	for k := 0; ; k++ {
		rate, due := st.search.Next()
		if !due {
			break
		}
		if now := time.Now(); next.Before(now) {
			next = next.Add(now.Sub(next).Truncate(st.interval) + st.interval)
		}
		if next.Add(st.per).After(deadline) {
			fmt.Fprintf(progress, "the next step would end after the run's duration (%s): the search stops unfinished\n", w.Duration.Duration)
			break
		}
		doc, r, err := st.run(ctx, k, rate, next)
		if err != nil {
			return nil, fmt.Errorf("search step %d at %g ops/s: %w", k+1, rate, err)
		}
		result.WriteSearchStep(progress, k+1, &r)
		out = appendStep(out, doc, k*st.intervals)
		next = next.Add(st.per)
	}
	if out == nil {
		return nil, fmt.Errorf("load.search: no step fits in the run's duration (%s)", w.Duration.Duration)
	}
	st.sec.Outcome = st.search.Outcome(cfg.Target.ProcessingUnits)
	out.Search = st.sec
	if err := result.Finalize(out); err != nil {
		return nil, err
	}
	result.WriteSearchOutcome(progress, st.sec)
	return out, nil
}

// searchSteps runs a search's steps: the search, its resolved SLO, the
// engine configuration each step varies, and the steps' geometry in
// intervals.
type searchSteps struct {
	cfg           engine.Config
	search        *capacity.Search
	slo           capacity.SLO
	sec           *result.Search
	interval, per time.Duration
	// warm and intervals are a step's warm-up and whole length, in
	// intervals.
	warm, intervals int
}

func newSearchSteps(cfg engine.Config, w *v1alpha1.WorkloadSpec) (*searchSteps, error) {
	spec := w.Load.Search
	p, slo, errs := customcheck.SearchParams(field.NewPath("workload", "load", "search"), spec)
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	search, err := capacity.New(p)
	if err != nil {
		return nil, err
	}
	st := &searchSteps{cfg: cfg, search: search, slo: slo.Resolve(cfg.Target.InstanceConfig),
		interval: w.Interval.Duration, per: spec.PerStep()}
	st.warm, st.intervals = int(spec.StepWarmUp()/st.interval), int(st.per/st.interval)
	st.sec = &result.Search{From: p.From, Max: p.Max, Resolution: p.Resolution, Confirm: string(p.Confirm),
		WarmUpSeconds: spec.StepWarmUp().Seconds(), StepSeconds: spec.StepDuration.Seconds(), MaxSteps: search.MaxSteps()}
	if st.sec.Confirm == "" {
		st.sec.Confirm = string(capacity.ConfirmMajority)
	}
	for _, c := range st.slo {
		st.sec.SLO = append(st.sec.SLO, c.String())
	}
	return st, nil
}

// run runs step k at rate from start, judges it from its own measured
// intervals and tells the search.
func (st *searchSteps) run(ctx context.Context, k int, rate float64, start time.Time) (*result.Document, capacity.StepResult, error) {
	step := st.cfg
	step.Start, step.Seed = start, st.cfg.Seed+int64(k)
	step.Load.Profile = schedule.Profile{{From: rate, To: rate, Duration: st.per}}
	doc, err := engine.Run(ctx, step)
	if err != nil {
		return nil, capacity.StepResult{}, err
	}
	m, err := capacity.Measure(doc.Intervals, st.warm, st.intervals, st.interval.Seconds(), rate)
	if err != nil {
		return nil, capacity.StepResult{}, err
	}
	r, err := capacity.Evaluate(st.slo, m)
	if err != nil {
		return nil, capacity.StepResult{}, err
	}
	r.FirstInterval, r.EndInterval = k*st.intervals+st.warm, (k+1)*st.intervals
	return doc, r, st.search.Record(r)
}

// appendStep adds a step's document to the search's: its intervals
// follow the previous steps' (their indexes shifted by offset), its
// shards' end and missed sends join the search's.
func appendStep(out, step *result.Document, offset int) *result.Document {
	for i := range step.Intervals {
		step.Intervals[i].Index += offset
	}
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

package pod

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/capacity"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/shardrun"
	"github.com/spanbench/spanbench/spanner/customcheck"
)

// runSearch runs this runner's share of a capacity search (load.search):
// the steps the controller publishes (protocol.SearchStep), each from its
// published instant, so that every runner changes rate at the same
// instants; after each step it reports its measurement of it
// (protocol.SearchReport) and waits for the next step or the end of the
// search. Step 0 is the search's first rate from the run's start. It
// returns the steps' intervals back to back in one document, as
// `spanbench run` does; the controller adds the search's section when it
// merges the shards.
func (r *runner) runSearch(ctx context.Context, cfg engine.Config, w *v1alpha1.WorkloadSpec) (*result.Document, error) {
	plan, err := customcheck.PlanSearch(w, "")
	if err != nil {
		return nil, err
	}
	first, err := capacity.New(plan.Params)
	if err != nil {
		return nil, err
	}
	rate, _ := first.Next()
	geo := shardrun.SearchStepsOf(w)
	runStart := cfg.Start
	step := protocol.SearchStep{Start: runStart, Step: 0, Rate: rate, At: runStart}
	var out *result.Document
	for {
		if late := time.Since(step.At); late > MaxLateStart {
			return nil, fmt.Errorf("search step %d was due at %s, %s before this runner learned of it (more than %s)",
				step.Step, step.At.UTC().Format(time.RFC3339Nano), late.Round(time.Millisecond), MaxLateStart)
		}
		r.log.Info("search step", "step", step.Step, "rate", step.Rate, "at", step.At)
		doc, m, err := geo.Run(ctx, cfg, step.Step, step.Rate, step.At)
		if err != nil {
			return nil, fmt.Errorf("search step %d at %g ops/s: %w", step.Step, step.Rate, err)
		}
		out = shardrun.AppendStep(out, doc)
		if err := r.reportSearchStep(ctx, runStart, step.Step, m); err != nil {
			return nil, err
		}
		next, err := r.waitForSearchStep(ctx, runStart, step.Step+1, step.At.Add(geo.PerStep))
		if err != nil {
			return nil, err
		}
		if next.Done {
			r.log.Info("the search is done", "steps", step.Step+1)
			// The totals are derived again from all the steps' intervals
			// (each step's document had its own).
			return out, result.Finalize(out)
		}
		step = next
	}
}

// reportSearchStep writes the runner's measurement of step into its shard
// map, retrying transient errors: the controller judges the step from it.
func (r *runner) reportSearchStep(ctx context.Context, start time.Time, step int, m capacity.Measurement) error {
	rep, err := protocol.NewSearchReport(start, step, m)
	if err != nil {
		return err
	}
	maps, err := protocol.EncodeSearchReport(rep)
	if err != nil {
		return err
	}
	if err := r.patchOwn(ctx, maps); err != nil {
		return fmt.Errorf("reporting search step %d: %w", step, err)
	}
	return nil
}

// waitForSearchStep polls the control map for step want (or the end of
// the search), published for the run started at start, until
// Options.SearchDecisionTimeout after ended (the previous step's end): a
// controller that never decides does not keep the runner forever.
func (r *runner) waitForSearchStep(ctx context.Context, start time.Time, want int, ended time.Time) (protocol.SearchStep, error) {
	waitCtx, cancel := context.WithDeadline(ctx, ended.Add(r.o.SearchDecisionTimeout))
	defer cancel()
	tick := time.NewTicker(r.o.PollInterval)
	defer tick.Stop()
	for {
		s, ok, err := r.readSearchStep(waitCtx)
		switch {
		case err != nil:
			return protocol.SearchStep{}, err
		case ok && !s.Start.Equal(start):
			return protocol.SearchStep{}, fmt.Errorf("ConfigMap %s publishes a search step of a run started at %s, not this one's %s",
				r.control, s.Start.UTC().Format(time.RFC3339Nano), start.UTC().Format(time.RFC3339Nano))
		case ok && s.Step == want:
			return s, nil
		case ok && s.Step > want:
			return protocol.SearchStep{}, fmt.Errorf("the controller published search step %d while this runner waited for step %d", s.Step, want)
		}
		select {
		case <-waitCtx.Done():
			if ctx.Err() != nil {
				return protocol.SearchStep{}, fmt.Errorf("interrupted while waiting for search step %d: %w", want, ctx.Err())
			}
			return protocol.SearchStep{}, fmt.Errorf("no search step %d nor the search's end was published in ConfigMap %s within %s of step %d's end",
				want, r.control, r.o.SearchDecisionTimeout, want-1)
		case <-tick.C:
		}
	}
}

// readSearchStep reads the published step once; transient errors read as
// "not yet".
func (r *runner) readSearchStep(ctx context.Context) (protocol.SearchStep, bool, error) {
	var cm corev1.ConfigMap
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := r.c.Get(callCtx, r.control, &cm); err != nil {
		if retriable(err) || ctx.Err() != nil {
			return protocol.SearchStep{}, false, nil
		}
		return protocol.SearchStep{}, false, fmt.Errorf("reading ConfigMap %s while waiting for a search step: %w", r.control, err)
	}
	s, ok, err := protocol.DecodeSearchStep(cm.Data)
	if err != nil {
		return protocol.SearchStep{}, false, fmt.Errorf("ConfigMap %s: %w", r.control, err)
	}
	return s, ok, nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/capacity"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/runner/shardrun"
	"github.com/spanbench/spanbench/spanner/customcheck"
	"github.com/spanbench/spanbench/spanner/monitoring"
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
// steps' intervals back to back, with the search's section. cpu, when not
// nil, reads each step's high-priority CPU from Cloud Monitoring after the
// step (Cloud Spanner with a cpu condition: stepCPUReader); nil leaves the
// cpu condition not measured, as on the emulator.
func runSearch(ctx context.Context, cfg engine.Config, w *v1alpha1.WorkloadSpec, shards int, cpu *monitoring.StepCPU, progress io.Writer) (*result.Document, error) {
	if shards > 1 {
		return nil, errSearchShards
	}
	st, err := newSearchSteps(cfg, w, cpu)
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
			next = next.Add(now.Sub(next).Truncate(st.geo.Interval) + st.geo.Interval)
		}
		if next.Add(st.geo.PerStep).After(deadline) {
			fmt.Fprintf(progress, "the next step would end after the run's duration (%s): the search stops unfinished\n", w.Duration.Duration)
			st.search.StopOutOfTime()
			break
		}
		doc, r, err := st.run(ctx, k, rate, next)
		if err != nil {
			return nil, fmt.Errorf("search step %d at %g ops/s: %w", k+1, rate, err)
		}
		result.WriteSearchStep(progress, k+1, &r)
		out = shardrun.AppendStep(out, doc)
		next = next.Add(st.geo.PerStep)
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
// engine configuration each step varies, and the steps' geometry.
type searchSteps struct {
	cfg    engine.Config
	search *capacity.Search
	slo    capacity.SLO
	sec    *result.Search
	geo    shardrun.SearchSteps
	cpu    *monitoring.StepCPU
	spec   *v1alpha1.SearchSpec
}

func newSearchSteps(cfg engine.Config, w *v1alpha1.WorkloadSpec, cpu *monitoring.StepCPU) (*searchSteps, error) {
	plan, err := customcheck.PlanSearch(w, cfg.Target.InstanceConfig)
	if err != nil {
		return nil, err
	}
	search, err := capacity.New(plan.Params)
	if err != nil {
		return nil, err
	}
	geo := shardrun.SearchStepsOf(w)
	// Admission's worst case (customcheck.CheckSearchWorstCase) as this
	// run steps: with each step's wait for its CPU when it reads one. A
	// manifest's target already counted it; a workload file's or a
	// flag's target (--spanner) is known only here.
	if fe := customcheck.CheckSearchWorstCase(field.NewPath("workload"), w, cpu != nil); fe != nil {
		return nil, fe
	}
	return &searchSteps{cfg: cfg, search: search, slo: plan.SLO, sec: plan.Section, geo: geo, cpu: cpu, spec: w.Load.Search}, nil
}

// stepCPUReader is the step CPU reader of a search run by `spanbench run`:
// one on Cloud Spanner (--spanner) whose SLO has a cpu condition, reading
// the target instance through --monitoring-endpoint with Application
// Default Credentials; nil otherwise (the emulator reports no CPU: the
// condition stays not measured). closeFn closes its client.
func stepCPUReader(ctx context.Context, f *runFlags, t v1alpha1.TargetSpec, w *v1alpha1.WorkloadSpec) (cpu *monitoring.StepCPU, closeFn func(), err error) {
	if !f.spanner || !customcheck.SearchJudgesCPU(w, t) {
		return nil, func() {}, nil
	}
	client, err := monitoring.NewClient(ctx, monitoring.Endpoint{Address: f.monitoringEndpoint})
	if err != nil {
		return nil, nil, fmt.Errorf("--monitoring-endpoint: %w", err)
	}
	return &monitoring.StepCPU{Client: client, Clock: clock.RealClock{},
		Instance: monitoring.Instance{Project: t.Project, Instance: t.Instance.Name, Database: t.Database}}, func() { _ = client.Close() }, nil
}

// run runs step k at rate from start, judges it from its own measured
// intervals and tells the search.
func (st *searchSteps) run(ctx context.Context, k int, rate float64, start time.Time) (*result.Document, capacity.StepResult, error) {
	doc, m, err := st.geo.Run(ctx, st.cfg, k, rate, start)
	if err != nil {
		return nil, capacity.StepResult{}, err
	}
	if st.cpu != nil {
		from, end := st.spec.MeasuredTimes(start)
		if m.CPU, m.CPUNote, err = st.cpu.Read(ctx, from, end); err != nil {
			return nil, capacity.StepResult{}, err
		}
	}
	r, err := capacity.Evaluate(st.slo, m)
	if err != nil {
		return nil, capacity.StepResult{}, err
	}
	r.FirstInterval, r.EndInterval = st.geo.Window(k)
	return doc, r, st.search.Record(r)
}

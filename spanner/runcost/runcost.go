// Package runcost prices a BenchmarkRun from its spec alone, before
// anything exists: the plan the price catalog's formulas
// (spanner/pricing) take, and the estimates of a run and of a campaign
// iteration. The manager's guardrails, the admission webhook and
// `spanbench run` all estimate through it, so that they agree; it links
// no manager code, so the runner build may hold it.
package runcost

import (
	"fmt"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/pricing"
	"github.com/spanbench/spanbench/spanner/workload"
)

// Plan is what a run's spec says its cost depends on, before anything
// exists: the manager's estimate and `spanbench run`'s come from it alike.
// The setup time is the deadlines' upper bound (prepare + load): the spec
// gives no expected load time. An Existing instance is sized by what the
// spec declares; without a declared size its cost is unknown.
func Plan(run *v1alpha1.BenchmarkRun) pricing.Plan {
	t := &run.Spec.Target
	w := run.Spec.Workload.Resolved()
	bytes, err := workload.DatasetBytes(&w, t.Dialect)
	if err != nil {
		bytes = -1 // unknown, never 0
	}
	d := run.Spec.Deadlines.Resolve()
	p := pricing.Plan{
		Config:          t.Instance.Config,
		Edition:         pricing.Edition(t.Instance.Edition),
		Holding:         pricing.Existing,
		ProcessingUnits: int64(t.Instance.Capacity()),
		Setup:           v1alpha1.SaturatingSum(d.Prepare, d.Load),
		Run:             run.Spec.Workload.TotalDuration(),
		DatasetBytes:    bytes,
		RunnerMilliCPU:  RunnerMilliCPU(run),
		Emulator:        t.EmulatorHost != "",
	}
	if t.Instance.Mode == v1alpha1.InstanceEphemeral {
		p.Holding = pricing.Ephemeral
	}
	return p
}

// RunnerMilliCPU is the runner pods' summed CPU requests (0 when they
// request none: then nothing is reserved for them to price).
func RunnerMilliCPU(run *v1alpha1.BenchmarkRun) int64 {
	requests := run.Spec.Runners.Resources.Requirements().Requests
	return requests.Cpu().MilliValue() * int64(run.Replicas())
}

// Estimate is a run's estimated cost, planned from now.
func Estimate(c *pricing.Catalog, run *v1alpha1.BenchmarkRun, now time.Time) pricing.Estimate {
	return pricing.EstimateRun(c, Plan(run), now)
}

// EstimateIteration is the estimated cost of one campaign iteration: each
// cell's run, estimated as the manager estimates a run, times the
// repetitions. One unknown cell makes it unknown, with that cell named.
func EstimateIteration(c *pricing.Catalog, cells []v1alpha1.BenchmarkRunSpec, names []string, repetitions int, now time.Time) pricing.Money {
	var runs []pricing.Money
	for i := range cells {
		e := Estimate(c, &v1alpha1.BenchmarkRun{Spec: cells[i]}, now).Total
		if !e.Known() {
			return pricing.Unknown(fmt.Sprintf("cell %s: %s", names[i], e.Reason()))
		}
		for range repetitions {
			runs = append(runs, e)
		}
	}
	return pricing.Sum(runs...)
}

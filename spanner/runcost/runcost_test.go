package runcost

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/pricetest"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/spanner/pricing"
)

func TestPlanHoldsAnEphemeralInstanceThroughSetupAndAnExistingOneForTheRun(t *testing.T) {
	eph := runtest.Bare("eph").Ephemeral("regional-us-central1", 2).Deadlines(time.Minute, 20*time.Minute, 5*time.Minute).Obj()
	p := Plan(eph)
	if p.Holding != pricing.Ephemeral || p.ProcessingUnits != 2000 || p.Config != "regional-us-central1" {
		t.Errorf("ephemeral plan = %+v, want Ephemeral, 2000 PU, regional-us-central1", p)
	}
	if p.Setup < 20*time.Minute {
		t.Errorf("setup %v leaves out the 20 min load deadline: an Ephemeral instance is billed while loading", p.Setup)
	}
	if p.Run != 10*time.Minute || p.DatasetBytes <= 0 {
		t.Errorf("run %v, dataset %d bytes; want the spec's 10 min and a known dataset size", p.Run, p.DatasetBytes)
	}
	if existing := Plan(runtest.Bare("ex").Obj()); existing.Holding != pricing.Existing {
		t.Errorf("an Existing instance planned as %v", existing.Holding)
	}
}

func TestRunnerMilliCPUIsTheRequestsOfEveryReplica(t *testing.T) {
	run := runtest.Bare("r").Replicas(3).Runners(func(r *v1alpha1.RunnersSpec) {
		cpu := intstr.FromString("500m")
		r.Resources.Requests = &v1alpha1.ResourceQuantities{CPU: &cpu}
	}).Obj()
	if got := RunnerMilliCPU(run); got != 1500 {
		t.Errorf("RunnerMilliCPU = %d, want 3 × 500m = 1500", got)
	}
}

func TestEstimateIterationCountsRepetitionsAndNamesAnUnpricedCell(t *testing.T) {
	c := pricetest.Catalog(t) // 1.00 per node-hour regional, 3.00 asia1: a fixture, not a price
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	regional := runtest.Bare("a").Ephemeral("regional-us-central1", 1).Obj().Spec
	multi := runtest.Bare("b").Ephemeral("asia1", 1).Obj().Spec
	one := pricing.Sum(Estimate(c, &v1alpha1.BenchmarkRun{Spec: regional}, now).Total, Estimate(c, &v1alpha1.BenchmarkRun{Spec: multi}, now).Total)
	got := EstimateIteration(c, []v1alpha1.BenchmarkRunSpec{regional, multi}, []string{"tokyo", "asia1"}, 3, now)
	if !got.Known() || got.Micros() != 3*one.Micros() {
		t.Fatalf("iteration = %v, want 3 × %v", got, one)
	}
	unpriced := runtest.Bare("c").Ephemeral("regional-europe-west9", 1).Obj().Spec
	got = EstimateIteration(c, []v1alpha1.BenchmarkRunSpec{regional, unpriced}, []string{"tokyo", "paris"}, 3, now)
	if got.Known() || !strings.Contains(got.Reason(), "cell paris") {
		t.Errorf("iteration with an unpriced cell = %v (%q), want unknown naming cell paris", got, got.Reason())
	}
}

package benchmarkrun_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/guardrails"
	"github.com/spanbench/spanbench/internal/pricetest"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/spanner/pricing"
	"github.com/spanbench/spanbench/spanner/runcost"
)

// priceOverride is the operator's override ConfigMap holding data.
func priceOverride(data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "spanbench-system", Name: "prices"},
		Data: map[string]string{guardrails.PriceOverrideKey: data}}
}

// fixtureEstimate is run's estimate over the test fixture's prices, as
// the manager computes it at t0.
func fixtureEstimate(t *testing.T, run *v1alpha1.BenchmarkRun) pricing.Money {
	t.Helper()
	e := runcost.Estimate(pricetest.Catalog(t), run, t0)
	if !e.Total.Known() {
		t.Fatalf("the fixture does not price the run: %s", e.Total)
	}
	return e.Total
}

func limit(t *testing.T, s string) pricing.Limit {
	t.Helper()
	l, err := pricing.ParseLimit(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// microsLimit is a cap of micros millionths of a USD.
func microsLimit(t *testing.T, micros int64) pricing.Limit {
	return limit(t, fmt.Sprintf("USD %d.%06d", micros/1_000_000, micros%1_000_000))
}

// TestReconcileHoldsTheEstimateToTheCostCapBeforeCreatingAnything: the
// manager prices the run from its spec before its first Spanner call and
// records the estimate; a run above --max-run-cost, one whose cost is
// unknown under a cap, and one priced by a missing or invalid override
// fail, with the figure and the flag (or the entry) named, and no
// instance, database or Job exists. A run exactly at the cap proceeds.
func TestReconcileHoldsTheEstimateToTheCostCapBeforeCreatingAnything(t *testing.T) {
	ephemeral := func() *v1alpha1.BenchmarkRun {
		run := runtest.Run("r").Created(t0).Obj()
		run.Spec.Target.Instance.Mode = v1alpha1.InstanceEphemeral
		return run
	}
	estimate := fixtureEstimate(t, ephemeral())
	fixture := priceOverride(pricetest.Override)
	for _, tc := range []struct {
		name       string
		cap        pricing.Limit
		override   *corev1.ConfigMap
		wantReason string
		want       []string
	}{
		{"one micro-unit above the cap", microsLimit(t, estimate.Micros()-1), fixture, v1alpha1.ReasonCostLimitExceeded,
			[]string{"the run's estimated cost USD " + estimate.Decimal() + " exceeds the limit of USD", "(--max-run-cost)"}},
		{"unknown under a cap (the embedded catalog prices nothing)", limit(t, "1000"), nil, v1alpha1.ReasonCostUnknown,
			[]string{"unknown (no price for regional-asia-northeast1", "cannot be checked", "--max-run-cost"}},
		{"an override with a negative price", limit(t, "1000"),
			priceOverride(strings.Replace(pricetest.Override, `nodeHour: "3.00"`, `nodeHour: "-3.00"`, 1)), v1alpha1.ReasonPriceCatalogInvalid,
			[]string{"ConfigMap spanbench-system/prices", "prices[2] (asia1, EnterprisePlus): nodeHour"}},
		{"an override in no currency, without a cap", pricing.Limit{},
			priceOverride(strings.Replace(pricetest.Override, "currency: USD", "currency: XYZ", 1)), v1alpha1.ReasonPriceCatalogInvalid,
			[]string{"XYZ"}},
		{"an override that does not parse", pricing.Limit{}, priceOverride("prices: [: :"), v1alpha1.ReasonPriceCatalogInvalid,
			[]string{"ConfigMap spanbench-system/prices, key prices.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := ephemeral()
			objs := []client.Object{run}
			if tc.override != nil {
				objs = append(objs, tc.override)
			}
			f := newFakeReconcile(t, interceptor.Funcs{}, objs...)
			f.r.CostLimits.MaxRunCost = tc.cap
			if tc.override != nil {
				f.r.Prices = guardrails.PriceSource{Reader: f.stored, ConfigMap: client.ObjectKeyFromObject(tc.override)}
			}
			if _, err := f.reconcile(run); err != nil {
				t.Fatal(err)
			}
			got := f.run(run)
			wantCondition(t, got, v1alpha1.ConditionSucceeded, "False", tc.wantReason)
			c := condition(got, v1alpha1.ConditionSucceeded)
			for _, w := range tc.want {
				if c == nil || !strings.Contains(c.Message, w) {
					t.Errorf("condition %+v; want its message to say %q", c, w)
				}
			}
			wantNothingCreated(t, f)
		})
	}

	t.Run("a missing override ConfigMap", func(t *testing.T) {
		run := ephemeral()
		f := newFakeReconcile(t, interceptor.Funcs{}, run)
		f.r.Prices = guardrails.PriceSource{Reader: f.stored, ConfigMap: types.NamespacedName{Namespace: "spanbench-system", Name: "prices"}}
		if _, err := f.reconcile(run); err != nil {
			t.Fatal(err)
		}
		wantCondition(t, f.run(run), v1alpha1.ConditionSucceeded, "False", v1alpha1.ReasonPriceCatalogInvalid)
		wantNothingCreated(t, f)
	})

	t.Run("exactly at the cap", func(t *testing.T) {
		run := ephemeral()
		f := newFakeReconcile(t, interceptor.Funcs{}, run, fixture)
		f.r.CostLimits.MaxRunCost = microsLimit(t, estimate.Micros())
		f.r.Prices = guardrails.PriceSource{Reader: f.stored, ConfigMap: client.ObjectKeyFromObject(fixture)}
		if _, err := f.reconcile(run); err != nil {
			t.Fatal(err)
		}
		got := f.run(run)
		if c := condition(got, v1alpha1.ConditionSucceeded); c != nil {
			t.Fatalf("a run at the cap ended: %s: %s", c.Reason, c.Message)
		}
		if f.spanner.count("Instance") != 1 {
			t.Errorf("a run at the cap did not reach its instance (Instance calls %d)", f.spanner.count("Instance"))
		}
		cost := got.Status.Cost
		if cost == nil || cost.Estimate == nil || cost.Estimate.Amount != estimate.Decimal() || cost.Currency != "USD" ||
			cost.Summary != "~USD "+estimate.Decimal() || cost.Holding != v1alpha1.CostHoldingEphemeral || cost.HeldFrom == nil {
			t.Errorf("status.cost = %+v; want the estimate %s recorded, Ephemeral, held from the first pass", cost, estimate)
		}
		if cost != nil && !strings.Contains(cost.Catalog, "override spanbench-system/prices") {
			t.Errorf("status.cost.catalog = %q; want the override named", cost.Catalog)
		}
	})

	t.Run("no cap, the embedded catalog: unknown, said so, and the run proceeds", func(t *testing.T) {
		run := ephemeral()
		f := newFakeReconcile(t, interceptor.Funcs{}, run)
		if _, err := f.reconcile(run); err != nil {
			t.Fatal(err)
		}
		got := f.run(run)
		if got.Status.Cost == nil || got.Status.Cost.Summary != "unknown" || got.Status.Cost.Estimate.Amount != "" ||
			!strings.Contains(got.Status.Cost.Estimate.UnknownReason, "no price for regional-asia-northeast1") {
			t.Errorf("status.cost = %+v; want unknown with the reason", got.Status.Cost)
		}
		if f.spanner.count("Instance") != 1 {
			t.Errorf("an uncapped run did not proceed (Instance calls %d)", f.spanner.count("Instance"))
		}
	})
}

// TestReconcileCreatesNoJobAboveARestartedManagersCostCap: a run past its
// prepare stage, whose recorded estimate is above the cap of a manager
// restarted with a tighter --max-run-cost, fails when its loader or
// runner Job would be created, and no Job is.
func TestReconcileCreatesNoJobAboveARestartedManagersCostCap(t *testing.T) {
	for name, run := range map[string]*v1alpha1.BenchmarkRun{
		"loader Job": runtest.Run("load").Created(t0).TargetReady(t0).Loading(t0).Obj(),
		"runner Job": runtest.Run("bench").Created(t0).TargetReady(t0).DatasetLoaded(t0).Obj(),
	} {
		t.Run(name, func(t *testing.T) {
			run.Status.Cost = &v1alpha1.RunCost{Currency: "USD", Estimate: &v1alpha1.CostFigure{Amount: "12.50"}}
			f := newFakeReconcile(t, interceptor.Funcs{}, run)
			f.r.CostLimits.MaxRunCost = limit(t, "10")
			if _, err := f.reconcile(run); err != nil {
				t.Fatal(err)
			}
			got := f.run(run)
			wantCondition(t, got, v1alpha1.ConditionSucceeded, "False", v1alpha1.ReasonCostLimitExceeded)
			var jobs batchv1.JobList
			if err := f.stored.List(t.Context(), &jobs, client.InNamespace(run.Namespace)); err != nil || len(jobs.Items) != 0 {
				t.Errorf("%d Jobs created above the cost cap (%v)", len(jobs.Items), err)
			}
		})
	}
}

// TestReconcileRecordsWhatAFinishedRunCost: once a run ended and what it
// held is known, status.cost carries the instance, storage, runner and
// total lines, which time was charged, and the cost per million
// operations of the measured window; the figures below are worked by hand
// from the test fixture's 1.00 USD per node-hour. Without a price the
// cost is unknown, with the reason, never zero.
func TestReconcileRecordsWhatAFinishedRunCost(t *testing.T) {
	at := func(d time.Duration) *metav1.Time { return &metav1.Time{Time: t0.Add(d)} }
	estimated := &v1alpha1.RunCost{Currency: "USD", Estimate: &v1alpha1.CostFigure{Amount: "2.00"}}
	finished := func(b *runtest.Builder) *v1alpha1.BenchmarkRun {
		run := b.Created(t0).RunnersReady(t0).Succeeded(t0.Add(61 * time.Minute)).Obj()
		run.Spec.Workload.Duration = &metav1.Duration{Duration: time.Hour}
		run.Status.WarmUpEnd = at(10 * time.Minute)
		run.Status.Overall = &v1alpha1.ResultFigures{Count: 3_000_000}
		run.Status.Cost = estimated.DeepCopy()
		return run
	}
	existing := finished(runtest.Run("existing"))
	ephemeral := finished(runtest.Run("ephemeral").Ephemeral().InstanceCreated())
	ephemeral.Status.Cost.HeldFrom = at(-5 * time.Minute)
	ephemeral.Status.Target.DeletionTime = at(62 * time.Minute)
	notDeleted := finished(runtest.Run("not-deleted").Ephemeral().InstanceCreated())
	notDeleted.Status.Cost.HeldFrom = at(-5 * time.Minute)

	for _, tc := range []struct {
		name                                string
		run                                 *v1alpha1.BenchmarkRun
		holding                             v1alpha1.CostHolding
		instance, total, perMillion, status string
	}{
		// 1000 PU × 61 min (start to completion) × 1.00/node-hour; the
		// measured 50 of 61 minutes' share, per 3 million operations.
		{"Existing: the run's window", existing, v1alpha1.CostHoldingExisting, "1.016667", "1.016667", "0.277778", "USD 1.016667"},
		// Asked for 5 minutes before the start, deleted a minute after the
		// completion: 67 minutes; the measured 50 minutes' share.
		{"Ephemeral: creation to deletion", ephemeral, v1alpha1.CostHoldingEphemeral, "1.116667", "1.116667", "0.277778", "USD 1.116667"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeReconcile(t, interceptor.Funcs{}, tc.run, priceOverride(pricetest.Override))
			f.r.Prices = guardrails.PriceSource{Reader: f.stored, ConfigMap: types.NamespacedName{Namespace: "spanbench-system", Name: "prices"}}
			if _, err := f.reconcile(tc.run); err != nil {
				t.Fatal(err)
			}
			c := f.run(tc.run).Status.Cost
			if c == nil || c.Total == nil {
				t.Fatalf("status.cost = %+v; want the run's cost", c)
			}
			if c.Holding != tc.holding || c.Instance.Amount != tc.instance || c.Total.Amount != tc.total ||
				c.PerMillionOperations.Amount != tc.perMillion || c.Summary != tc.status || c.Estimate.Amount != "2.00" {
				t.Errorf("holding %s, instance %+v, total %+v, per million %+v, summary %q, estimate %+v; want %s, %s, %s, %s, %q and the estimate kept",
					c.Holding, c.Instance, c.Total, c.PerMillionOperations, c.Summary, c.Estimate, tc.holding, tc.instance, tc.total, tc.perMillion, tc.status)
			}
		})
	}

	t.Run("an Ephemeral instance not deleted yet is not priced yet", func(t *testing.T) {
		f := newFakeReconcile(t, interceptor.Funcs{}, notDeleted)
		if _, err := f.reconcile(notDeleted); err != nil {
			t.Fatal(err)
		}
		if c := f.run(notDeleted).Status.Cost; c.Total != nil {
			t.Errorf("status.cost.total = %+v before the instance's deletion", c.Total)
		}
	})

	t.Run("no price: unknown with the reason", func(t *testing.T) {
		run := existing.DeepCopy()
		f := newFakeReconcile(t, interceptor.Funcs{}, run)
		if _, err := f.reconcile(run); err != nil {
			t.Fatal(err)
		}
		c := f.run(run).Status.Cost
		if c.Total == nil || c.Total.Amount != "" || !strings.Contains(c.Total.UnknownReason, "no price for regional-asia-northeast1") ||
			c.PerMillionOperations.Amount != "" || c.Summary != "unknown" {
			t.Errorf("status.cost = %+v; want unknown with the reason", c)
		}
	})
}

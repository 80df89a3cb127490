package benchmarkrun_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/controllers/guardrails"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/internal/pricetest"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/spanner/endpoint"
)

// TestManagerRefusesARunAboveItsCostCapBeforeCreatingAnything: on a real
// API server and the emulator, with the test fixture's prices in an
// override ConfigMap and --max-run-cost at the estimate of a 2-node
// Ephemeral run, a 3-node run fails with CostLimitExceeded naming its
// figure and the flag, and neither its instance nor any Job of it exists;
// the 2-node run, exactly at the cap, gets its instance. Restarted
// without the override (the embedded catalog prices nothing), the same
// cap refuses a run whose cost is unknown, CostUnknown, nothing created.
func TestManagerRefusesARunAboveItsCostCapBeforeCreatingAnything(t *testing.T) {
	h := newHarness(t)
	allowed, override := h.pricedScenario()
	at := h.ephemeralSpec("at-cap", 1)
	capAt := microsLimit(t, fixtureEstimate(t, at).Micros())
	h.startManagerWith(managerOptions{preparer: benchmarkrun.SpannerPreparer{Emulators: allowed},
		costLimits: guardrails.CostLimits{MaxRunCost: capAt},
		prices:     guardrails.PriceSource{ConfigMap: client.ObjectKeyFromObject(override)}})

	above := h.ephemeralSpec("above-cap", 1)
	above.Spec.Target.Instance.Nodes = ptr.To[int32](3)
	h.create(above)
	h.create(at)

	got := h.finished(above, 30*time.Second)
	c := h.condition(got, v1alpha1.ConditionSucceeded)
	if c.Reason != v1alpha1.ReasonCostLimitExceeded || !strings.Contains(c.Message, "the run's estimated cost USD "+fixtureEstimate(t, above).Decimal()) ||
		!strings.Contains(c.Message, "(--max-run-cost)") {
		t.Errorf("the run above the cap ended %s: %s; want %s naming its estimate and the flag", c.Reason, c.Message, v1alpha1.ReasonCostLimitExceeded)
	}
	if got.Status.Cost == nil || got.Status.Cost.Estimate == nil || got.Status.Cost.Estimate.Amount == "" {
		t.Errorf("the refused run's status.cost = %+v; want its estimate recorded", got.Status.Cost)
	}
	h.instanceReady(at)
	h.wantNoChildren(above)
	if slices.Contains(h.instances(), above.Spec.Target.Instance.Name) {
		t.Errorf("the instance of the run above the cap exists: %v", h.instances())
	}

	h.stopManager()
	h.startManagerWith(managerOptions{preparer: benchmarkrun.SpannerPreparer{Emulators: allowed},
		costLimits: guardrails.CostLimits{MaxRunCost: capAt}})
	unknown := h.ephemeralSpec("unpriced", 1)
	h.create(unknown)
	got = h.finished(unknown, 30*time.Second)
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Reason != v1alpha1.ReasonCostUnknown || !strings.Contains(c.Message, "no price for regional-asia-northeast1") {
		t.Errorf("an unpriced run under a cap ended %s: %s; want %s with the reason", c.Reason, c.Message, v1alpha1.ReasonCostUnknown)
	}
	h.wantNoChildren(unknown)
	if slices.Contains(h.instances(), unknown.Spec.Target.Instance.Name) {
		t.Errorf("the instance of the unpriced run exists: %v", h.instances())
	}
}

// wantNoChildren: no Job exists for run, and its status records no
// instance created.
func (h *harness) wantNoChildren(run *v1alpha1.BenchmarkRun) {
	h.t.Helper()
	var jobs batchv1.JobList
	if err := h.c.List(context.Background(), &jobs, client.InNamespace(h.ns), client.MatchingLabels{v1alpha1.LabelRun: run.Name}); err != nil {
		h.t.Fatal(err)
	}
	if len(jobs.Items) != 0 {
		h.t.Errorf("%d Jobs of refused run %s", len(jobs.Items), run.Name)
	}
	if got := h.current(run); got != nil && got.Status.Target != nil && got.Status.Target.Created {
		h.t.Errorf("refused run %s records a created instance: %+v", run.Name, got.Status.Target)
	}
}

// TestFinishedRunRecordsItsCostInStatusAndReport: an Ephemeral run on the
// emulator, priced by the test fixture's override, ends with
// status.cost's lines charged from the manager's request for its instance
// to the instance's deletion (at least Spanner's hour: 2 nodes × 1 h ×
// 1.00 USD), a cost per million operations, the Cost column's summary,
// and the same cost in its report.
func TestFinishedRunRecordsItsCostInStatusAndReport(t *testing.T) {
	h := newHarness(t)
	allowed, override := h.pricedScenario()
	h.startManagerWith(managerOptions{preparer: benchmarkrun.SpannerPreparer{Emulators: allowed},
		prices: guardrails.PriceSource{ConfigMap: client.ObjectKeyFromObject(override)}})
	run := h.ephemeralSpec("priced", 1)
	h.create(run)
	runners := h.kubelet(run, 0)
	got := h.finished(run, 90*time.Second)
	runners.Wait()
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != "True" {
		t.Fatalf("run ended %s: %s", c.Reason, c.Message)
	}
	h.eventually("the run's cost is recorded", 30*time.Second, func() bool {
		got = h.current(run)
		return got.Status.Cost != nil && got.Status.Cost.Total != nil
	})
	c := got.Status.Cost
	if c.Holding != v1alpha1.CostHoldingEphemeral || c.HeldFrom == nil || c.HeldTo == nil || !c.HeldTo.Equal(got.Status.Target.DeletionTime) ||
		c.Instance.Amount != "2.00" || c.Total.Amount == "" || c.PerMillionOperations.Amount == "" || c.Summary != "USD "+c.Total.Amount {
		t.Errorf("status.cost = %+v (instance %+v, total %+v, per million %+v); want 2 nodes charged Spanner's hour, held until the deletion %v",
			c, c.Instance, c.Total, c.PerMillionOperations, got.Status.Target.DeletionTime)
	}
	report, err := runreport.ReadReport(context.Background(), h.c, client.ObjectKeyFromObject(run), pod.RunArrivals)
	if err != nil {
		t.Fatal(err)
	}
	if rc := report.Cost; rc == nil || rc.Total.Amount != c.Total.Amount || rc.PerMillionOperations.Amount != c.PerMillionOperations.Amount ||
		rc.Holding != "Ephemeral" || rc.ProcessingUnits != 2000 {
		t.Errorf("the report's cost %+v; want the status's (total %s, per million %s)", rc, c.Total.Amount, c.PerMillionOperations.Amount)
	}
}

// pricedScenario stores the test fixture's prices as an override
// ConfigMap in the scenario's namespace, and allows the scenario's
// emulator.
func (h *harness) pricedScenario() (endpoint.EmulatorAllowlist, *corev1.ConfigMap) {
	h.t.Helper()
	allowed, err := endpoint.AllowEmulators(h.emu.Host())
	if err != nil {
		h.t.Fatal(err)
	}
	override := priceOverride(pricetest.Override)
	override.Namespace = h.ns
	if err := h.c.Create(context.Background(), override); err != nil {
		h.t.Fatal(err)
	}
	return allowed, override
}

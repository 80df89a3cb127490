package benchmarkrun_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

// tpccRun is a short two-runner TPC-C run of the full mix on one Test
// warehouse with the consistency checks on.
func (h *harness) tpccRun(name, database string) *v1alpha1.BenchmarkRun {
	run := h.runSpec(name, 2)
	warehouses, rate := int32(1), int32(20)
	run.Spec.Target.Database = database
	run.Spec.Workload = v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadTPCC,
		TPCC: &v1alpha1.TPCCSpec{Warehouses: &warehouses, Population: v1alpha1.TPCCTest, ConsistencyChecks: true},
		Operations: []v1alpha1.OperationSpec{
			{Type: v1alpha1.OpNewOrder, Weight: 45}, {Type: v1alpha1.OpPayment, Weight: 43},
			{Type: v1alpha1.OpOrderStatus, Weight: 4}, {Type: v1alpha1.OpDelivery, Weight: 4}, {Type: v1alpha1.OpStockLevel, Weight: 4}},
		Load: v1alpha1.LoadSpec{Rate: &rate}, Duration: &metav1.Duration{Duration: 3 * time.Second},
		Interval: &metav1.Duration{Duration: time.Second}}
	return run
}

// TestTPCCScenarioChecksConsistencyAfterTheRun runs the real TPC-C mix on
// the emulator across two runners; the manager checks the consistency
// conditions after merging: all pass, the run succeeds, tpmC and the
// executed mix are in the status, the report and the scraped series.
func TestTPCCScenarioChecksConsistencyAfterTheRun(t *testing.T) {
	h := newHarness(t)
	h.startManagerWith(managerOptions{preparer: benchmarkrun.SpannerPreparer{}})
	run := h.tpccRun("tpcc", "tpcc")
	if err := h.c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	runners := h.kubelet(run, 0, 1)
	got := h.finished(run, 3*time.Minute)
	runners.Wait()
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue {
		t.Fatalf("run ended %s/%s: %s", c.Status, c.Reason, c.Message)
	}
	c := h.condition(got, v1alpha1.ConditionConsistencyChecked)
	t.Logf("ConsistencyChecked: %+v", c)
	if c == nil || c.Status != metav1.ConditionTrue || c.Reason != v1alpha1.ReasonConsistencyPassed {
		t.Fatalf("ConsistencyChecked is %+v; want True/Passed", c)
	}
	s := got.Status.TPCC
	if s == nil || s.TpmC == "" || s.TpmC == "0.0" || len(s.Mix) == 0 || len(s.Checks) != tpccConditions {
		t.Fatalf("status.tpcc %+v; want a tpmC above 0, the mix and %d checks", s, tpccConditions)
	}
	for _, ch := range s.Checks {
		if !ch.Passed {
			t.Errorf("check %q failed in a correct run: %s", ch.Name, ch.Detail)
		}
	}
	doc, err := runreport.ReadReport(context.Background(), h.c, client.ObjectKeyFromObject(run), pod.RunArrivals)
	if err != nil || doc.TPCC == nil || len(doc.TPCC.Checks) != tpccConditions {
		t.Fatalf("the report (err %v) has no checks: %+v", err, doc.TPCC)
	}
	if want := v1alpha1.FormatThroughput(doc.TPCC.CommittedTpmC); s.CommittedTpmC != want || s.CommittedTpmC == "0.0" {
		t.Errorf("status.tpcc.committedTpmC %q; want the report's %q, above 0", s.CommittedTpmC, want)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(&collectors.ResultsCollector{Reader: h.c})
	if v := gauge(t, reg, "spanbench_run_tpmc", map[string]string{"run": run.Name}); v <= 0 {
		t.Errorf("scraped spanbench_run_tpmc %v; want the run's tpmC %s", v, s.TpmC)
	}
	if v := gauge(t, reg, "spanbench_run_committed_tpmc", map[string]string{"run": run.Name}); v1alpha1.FormatThroughput(v) != s.CommittedTpmC {
		t.Errorf("scraped spanbench_run_committed_tpmc %v; want the run's committed tpmC %s", v, s.CommittedTpmC)
	}
	if v := gauge(t, reg, "spanbench_run_consistency_failed", map[string]string{"run": run.Name}); v != 0 {
		t.Errorf("scraped spanbench_run_consistency_failed %v for a consistent run; want 0", v)
	}
}

// tpccConditions is how many TPC-C consistency conditions a check
// checks (all but the 11th, which holds before the first Delivery only).
const tpccConditions = 11

// TestTPCCScenarioFailsARunThatLostWork corrupts the loaded database as a
// transaction that wrote a payment's warehouse update alone would (W_YTD
// no longer the sum of its districts' D_YTD, nor of its history rows'
// H_AMOUNT) before the runners start: the check names those two
// conditions, and the run fails with them.
func TestTPCCScenarioFailsARunThatLostWork(t *testing.T) {
	h := newHarness(t)
	h.startManagerWith(managerOptions{preparer: benchmarkrun.SpannerPreparer{}})
	run := h.tpccRun("lost", "lost")
	if err := h.c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	h.kubelet(run) // loads, then waits for the runner Job
	h.loseWarehousePayment(run)
	runners := h.kubelet(run, 0, 1)
	got := h.finished(run, 3*time.Minute)
	runners.Wait()
	c := h.condition(got, v1alpha1.ConditionConsistencyChecked)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonConsistencyFailed || !strings.Contains(c.Message, workload.ConditionWarehouseYTD) {
		t.Fatalf("ConsistencyChecked is %+v; want False/%s naming %q", c, v1alpha1.ReasonConsistencyFailed, workload.ConditionWarehouseYTD)
	}
	if s := h.condition(got, v1alpha1.ConditionSucceeded); s.Status != metav1.ConditionFalse || s.Reason != v1alpha1.ReasonConsistencyFailed ||
		!strings.Contains(s.Message, workload.ConditionWarehouseYTD) || got.Status.Phase != v1alpha1.PhaseFailed {
		t.Fatalf("the inconsistent run ended %s (Succeeded %s/%s: %s); want Failed naming the condition", got.Status.Phase, s.Status, s.Reason, s.Message)
	}
	failed := 0
	for _, ch := range got.Status.TPCC.Checks {
		if !ch.Passed {
			failed++
			if ch.Name != workload.ConditionWarehouseYTD && ch.Name != workload.ConditionWarehouseHistory || !strings.Contains(ch.Detail, "warehouse 1") {
				t.Errorf("check %q failed (%s); only %q and %q, in warehouse 1, should", ch.Name, ch.Detail, workload.ConditionWarehouseYTD, workload.ConditionWarehouseHistory)
			}
		}
	}
	if failed != 2 {
		t.Errorf("%d checks failed in status.tpcc.checks %+v; want 2", failed, got.Status.TPCC.Checks)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(&collectors.ResultsCollector{Reader: h.c})
	if v := gauge(t, reg, "spanbench_run_consistency_failed", map[string]string{"run": run.Name}); v != 2 {
		t.Errorf("scraped spanbench_run_consistency_failed %v; want 2", v)
	}
}

// loseWarehousePayment adds 1.00 to warehouse 1's W_YTD alone.
func (h *harness) loseWarehousePayment(run *v1alpha1.BenchmarkRun) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := session.Open(ctx, endpoint.Emulator(h.emu.Host()), run.Spec.Target)
	if err != nil {
		h.t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Client.ReadWriteTransaction(ctx, func(ctx context.Context, txn *spanner.ReadWriteTransaction) error {
		_, err := txn.Update(ctx, spanner.Statement{SQL: "UPDATE warehouse SET w_ytd = w_ytd + 100 WHERE w_id = 1"})
		return err
	})
	if err != nil {
		h.t.Fatalf("corrupting warehouse 1: %v", err)
	}
}

package benchmarkrun_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/spanner/session"
)

// stallingChecks is the real preparer, except that the manager's data
// session of the runs it names (the TPC-C consistency check's) opens only
// once release is closed, or the call's context ends: a strong full scan
// of a database at real scale takes minutes, which the emulator's Test
// population cannot.
type stallingChecks struct {
	benchmarkrun.SpannerPreparer
	stalled map[string]bool
	entered chan string
	release chan struct{}
}

func (p *stallingChecks) OpenDatabase(ctx context.Context, run *v1alpha1.BenchmarkRun) (*session.Session, error) {
	if p.stalled[run.Name] {
		p.entered <- run.Name
		select {
		case <-p.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return p.SpannerPreparer.OpenDatabase(ctx, run)
}

// TestSlowConsistencyChecksHoldNoReconcileWorker: two TPC-C runs reach
// their aggregation, and their consistency checks stall (as a scan of a
// large database would). Meanwhile another run is prepared, run,
// aggregated and succeeds: the checks hold neither a reconcile worker nor
// the one-at-a-time aggregation, and the stalled runs say they are being
// checked. A manager that restarts during the checks checks again, and
// the runs then succeed with their conditions passed.
func TestSlowConsistencyChecksHoldNoReconcileWorker(t *testing.T) {
	h := newHarness(t)
	names := []string{"check-0", "check-1"}
	p := &stallingChecks{stalled: map[string]bool{}, entered: make(chan string, 16), release: make(chan struct{})}
	for _, n := range names {
		p.stalled[n] = true
	}
	var once sync.Once
	release := func() { once.Do(func() { close(p.release) }) }
	t.Cleanup(release) // before the manager stops
	h.startManagerWith(managerOptions{preparer: p})
	var runners []*sync.WaitGroup
	for _, n := range names {
		run := h.tpccRun(n, n)
		one := int32(1)
		run.Spec.Runners.Replicas = &one
		if err := h.c.Create(context.Background(), run); err != nil {
			t.Fatal(err)
		}
		runners = append(runners, h.kubelet(run, 0))
	}
	for range names {
		select {
		case n := <-p.entered:
			t.Logf("run %s's consistency check is stalled", n)
		case <-time.After(3 * time.Minute):
			t.Fatal("the TPC-C runs' consistency checks did not both start within 3 minutes")
		}
	}
	for _, n := range names {
		h.eventually("run "+n+" says it is being checked", 10*time.Second, func() bool {
			got := h.get(n)
			c := h.condition(got, v1alpha1.ConditionConsistencyChecked)
			return got.Status.Phase == v1alpha1.PhaseAggregating && c != nil && c.Status == metav1.ConditionUnknown &&
				c.Reason == v1alpha1.ReasonConsistencyChecking
		})
	}

	free := h.runSpec("free", 1)
	free.Spec.Target.Database = "free"
	if err := h.c.Create(context.Background(), free); err != nil {
		t.Fatal(err)
	}
	h.kubelet(free, 0).Wait()
	got := h.finished(free, time.Minute)
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue {
		t.Fatalf("run free ended %s/%s while the checks were stalled: %s", c.Status, c.Reason, c.Message)
	}
	for _, n := range names {
		if got := h.get(n); got.Status.Phase != v1alpha1.PhaseAggregating {
			t.Fatalf("run %s is %s while its check is stalled; want Aggregating", n, got.Status.Phase)
		}
	}

	// The manager stops with the checks in flight; the next one finds
	// them recorded as under way and checks again, unstalled.
	h.stopManager()
	h.startManagerWith(managerOptions{preparer: benchmarkrun.SpannerPreparer{}})
	for i, n := range names {
		runners[i].Wait()
		got := h.finished(&v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: h.ns, Name: n}}, time.Minute)
		s, c := h.condition(got, v1alpha1.ConditionSucceeded), h.condition(got, v1alpha1.ConditionConsistencyChecked)
		if s.Status != metav1.ConditionTrue || c == nil || c.Reason != v1alpha1.ReasonConsistencyPassed || got.Status.TPCC == nil || len(got.Status.TPCC.Checks) != tpccConditions {
			t.Fatalf("run %s after the restart: Succeeded %s/%s (%s), ConsistencyChecked %+v, status.tpcc %+v; want it succeeded with %d checks passed",
				n, s.Status, s.Reason, s.Message, c, got.Status.TPCC, tpccConditions)
		}
	}
}

// get reads the harness namespace's run name.
func (h *harness) get(name string) *v1alpha1.BenchmarkRun {
	h.t.Helper()
	got := &v1alpha1.BenchmarkRun{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, got); err != nil {
		h.t.Fatal(fmt.Errorf("reading run %s: %w", name, err))
	}
	return got
}

// timedOutChecks is the real preparer, except that the manager's data
// session of a TPC-C run ends as a check past its time limit would (a
// strong full scan of a database at real scale can take longer than
// consistencyTimeout; the emulator's Test population cannot).
type timedOutChecks struct{ benchmarkrun.SpannerPreparer }

func (timedOutChecks) OpenDatabase(context.Context, *v1alpha1.BenchmarkRun) (*session.Session, error) {
	return nil, fmt.Errorf("opening the run's database: %w", context.DeadlineExceeded)
}

// TestAnUncheckedRunSaysSoInItsReport: the consistency check of a TPC-C
// run ends without checking anything; the run's figures still stand
// (Succeeded), but its condition says the check was skipped and why, and
// its report says it too (tpcc.notChecked), where a campaign reads it and
// compares no tpmC of it.
func TestAnUncheckedRunSaysSoInItsReport(t *testing.T) {
	h := newHarness(t)
	h.startManagerWith(managerOptions{preparer: timedOutChecks{}})
	run := h.tpccRun("unchecked", "unchecked")
	one := int32(1)
	run.Spec.Runners.Replicas = &one
	if err := h.c.Create(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	runners := h.kubelet(run, 0)
	got := h.finished(run, 3*time.Minute)
	runners.Wait()
	s, c := h.condition(got, v1alpha1.ConditionSucceeded), h.condition(got, v1alpha1.ConditionConsistencyChecked)
	if s.Status != metav1.ConditionTrue || c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonConsistencySkipped ||
		!strings.Contains(c.Message, "took longer than") {
		t.Fatalf("Succeeded %s/%s (%s), ConsistencyChecked %+v; want a succeeded run whose check is False/Skipped saying it took too long",
			s.Status, s.Reason, s.Message, c)
	}
	doc, err := runreport.ReadReport(context.Background(), h.c, client.ObjectKeyFromObject(run), pod.RunArrivals)
	if err != nil || doc.TPCC == nil || len(doc.TPCC.Checks) != 0 || doc.TPCC.NotChecked != c.Message {
		t.Fatalf("the report (err %v) has tpcc %+v; want no checks and notChecked %q", err, doc.TPCC, c.Message)
	}
}

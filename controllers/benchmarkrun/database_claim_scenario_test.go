package benchmarkrun_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
)

// namespace creates a namespace for the scenario: name after its own.
func (h *harness) namespace(suffix string) string {
	h.t.Helper()
	ns := h.ns + "-" + suffix
	if err := h.c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		h.t.Fatal(err)
	}
	return ns
}

// read is run as the API server has it now; it must exist.
func (h *harness) read(run *v1alpha1.BenchmarkRun) *v1alpha1.BenchmarkRun {
	h.t.Helper()
	got := h.current(run)
	if got == nil {
		h.t.Fatalf("run %s/%s is gone", run.Namespace, run.Name)
	}
	return got
}

// claimed waits until run holds its database.
func (h *harness) claimed(run *v1alpha1.BenchmarkRun, timeout time.Duration) {
	h.t.Helper()
	h.eventually("run "+run.Name+" holds its database", timeout, func() bool {
		return meta.IsStatusConditionTrue(h.read(run).Status.Conditions, v1alpha1.ConditionDatabaseClaimed)
	})
}

// waitsFor waits until run waits for its database, Pending, with a
// condition naming holder (namespace/name), and returns that condition.
func (h *harness) waitsFor(run *v1alpha1.BenchmarkRun, holder string, timeout time.Duration) *metav1.Condition {
	h.t.Helper()
	var c *metav1.Condition
	h.eventually("run "+run.Name+" waits for "+holder+"'s database", timeout, func() bool {
		got := h.read(run)
		c = meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionDatabaseClaimed)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == v1alpha1.ReasonDatabaseInUse &&
			strings.Contains(c.Message, "in use by run "+holder) && got.Status.Phase == v1alpha1.PhasePending
	})
	return c
}

// startedNothing checks that run, waiting for its database, has nothing
// prepared: no TargetReady condition, no loader or runner Job. It says
// what was, or "".
func (h *harness) startedNothing(run *v1alpha1.BenchmarkRun) string {
	got := h.read(run)
	if c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionTargetReady); c != nil {
		return fmt.Sprintf("run %s started preparing its database while another run held it: TargetReady %s/%s: %s", run.Name, c.Status, c.Reason, c.Message)
	}
	for _, name := range []string{v1alpha1.LoaderJobName(got), v1alpha1.RunnerJobName(got)} {
		if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: run.Namespace, Name: name}, &batchv1.Job{}); err == nil {
			return fmt.Sprintf("run %s has Job %s", run.Name, name)
		}
	}
	return ""
}

// TestARunWaitsForTheRunHoldingItsDatabaseInAnotherNamespace: one run per
// database, cluster-wide. A second run on the first's database, in
// another namespace, waits Pending with a condition naming the first and
// prepares nothing until the first has ended; then it takes the database.
func TestARunWaitsForTheRunHoldingItsDatabaseInAnotherNamespace(t *testing.T) {
	h := newHarness(t)
	claims, other := h.namespace("claims"), h.namespace("other")
	h.startManagerWith(managerOptions{preparer: benchmarkrun.SpannerPreparer{}, claimNamespace: claims})
	first := h.runSpec("first", 1)
	h.create(first)
	h.claimed(first, 30*time.Second)
	second := h.runSpec("second", 1)
	second.Namespace = other
	h.create(second)
	t.Cleanup(func() { _ = h.c.Delete(context.Background(), second) })
	h.waitsFor(second, h.ns+"/first", 30*time.Second)

	runners := h.kubelet(first, 0)
	h.consistently("run second prepares nothing while run first runs", 2*time.Second, func() (bool, string) {
		if h.read(first).IsFinished() {
			return true, ""
		}
		msg := h.startedNothing(second)
		return msg == "", msg
	})
	got := h.finished(first, 90*time.Second)
	runners.Wait()
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue {
		t.Fatalf("run first ended %s/%s: %s", c.Status, c.Reason, c.Message)
	}
	h.eventually("run second prepares its target once run first ended", 60*time.Second, func() bool {
		return meta.IsStatusConditionTrue(h.read(second).Status.Conditions, v1alpha1.ConditionTargetReady)
	})
	got = h.read(first)
	if c := h.condition(got, v1alpha1.ConditionDatabaseClaimed); c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonDatabaseReleased {
		t.Errorf("run first, ended, still says it holds its database: %+v", c)
	}
	claimedAt := h.condition(h.read(second), v1alpha1.ConditionDatabaseClaimed).LastTransitionTime
	if claimedAt.Before(got.Status.CompletionTime) {
		t.Errorf("run second took the database at %s, before run first ended at %s", claimedAt, got.Status.CompletionTime)
	}
	lease := &coordinationv1.Lease{}
	key := client.ObjectKey{Namespace: claims, Name: benchmarkrun.ClaimLeaseName(benchmarkrun.DatabaseIdentity(&second.Spec.Target))}
	if err := h.c.Get(context.Background(), key, lease); err != nil {
		t.Fatalf("the database's claim: %v", err)
	}
	if want := other + "/second"; ptr.Deref(lease.Spec.HolderIdentity, "") != want {
		t.Errorf("the database's claim names %q, want %q", ptr.Deref(lease.Spec.HolderIdentity, ""), want)
	}
}

// TestRunsOnDifferentDatabasesRunAtOnce: the claim is per database; two
// runs on two databases of one instance both prepare at once.
func TestRunsOnDifferentDatabasesRunAtOnce(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	a, b := h.runSpec("a", 1), h.runSpec("b", 1)
	b.Spec.Target.Database = "other"
	h.create(a)
	h.create(b)
	// Neither loads its dataset (no loader runs): both stay holding.
	h.eventually("both runs prepare their databases at once", 60*time.Second, func() bool {
		return meta.IsStatusConditionTrue(h.read(a).Status.Conditions, v1alpha1.ConditionTargetReady) &&
			meta.IsStatusConditionTrue(h.read(b).Status.Conditions, v1alpha1.ConditionTargetReady)
	})
}

// TestACampaignsRunQueuesWhereAStandaloneRunIsRefused: behind a run that
// holds the database, a run no campaign controls fails with reason
// DatabaseInUse, naming the holder, when its prepare deadline passes; a
// campaign's run waits past it, and starts, with a whole prepare deadline,
// once the holder is gone. The holder is deleted, not ended: its claim is
// then stale, and taken over.
func TestACampaignsRunQueuesWhereAStandaloneRunIsRefused(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	holder := h.runSpec("holder", 1)
	h.create(holder)
	h.claimed(holder, 30*time.Second)
	prepare := &metav1.Duration{Duration: 5 * time.Second}
	standalone := h.runSpec("standalone", 1)
	standalone.Spec.Deadlines.Prepare = prepare
	queued := h.runSpec("queued", 1)
	queued.Spec.Deadlines.Prepare = prepare
	// A campaign's run is one a BenchmarkCampaign controls; envtest runs no
	// garbage collector, so the owner need not exist.
	queued.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "BenchmarkCampaign",
		Name: "nightly", UID: "0b7c1a52-1f0e-4c55-9d8e-6e2f6d1c0a11", Controller: ptr.To(true)}}
	h.create(standalone)
	h.create(queued)

	got := h.finished(standalone, 30*time.Second)
	c := h.condition(got, v1alpha1.ConditionSucceeded)
	if c.Reason != v1alpha1.ReasonDatabaseInUse || !strings.Contains(c.Message, "in use by run "+h.ns+"/holder") {
		t.Fatalf("run standalone ended %s/%s: %s; want DatabaseInUse naming run holder", c.Status, c.Reason, c.Message)
	}
	if msg := h.startedNothing(standalone); msg != "" {
		t.Error(msg)
	}
	h.waitsFor(queued, h.ns+"/holder", time.Second)
	if h.read(queued).IsFinished() {
		t.Fatal("the campaign's run ended while it waited for its database")
	}

	if err := h.c.Delete(context.Background(), holder); err != nil {
		t.Fatal(err)
	}
	h.eventually("the campaign's run prepares its target once the holder is gone", 30*time.Second, func() bool {
		return meta.IsStatusConditionTrue(h.read(queued).Status.Conditions, v1alpha1.ConditionTargetReady)
	})
}

// TestConcurrentClaimsOfOneDatabaseHaveOneWinner: reconciles of several
// runs (here several reconcilers, as two managers during a hand-over)
// claim one database at once; the API server lets exactly one hold it,
// and the others are told who. The same holds when they race to take
// over a stale claim, whose holder was deleted, or ended and let go of
// its instance; a holder that ended but still deletes its instance keeps
// it.
func TestConcurrentClaimsOfOneDatabaseHaveOneWinner(t *testing.T) {
	h := &harness{t: t}
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	h.c, h.ns = c, fmt.Sprintf("t-%d", time.Now().UnixNano()%1_000_000_000)
	ns := h.ns
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.releaseRuns) // the next scenarios' managers must not take them up
	const racers = 8
	// Claims are decided on the API server alone: no emulator is dialed.
	spec := func(name string) *v1alpha1.BenchmarkRun { return runSpecAt(ns, "[::1]:9010", name, 1) }
	race := func(round string) (winners []string, losers map[string]int) {
		var runs []*v1alpha1.BenchmarkRun
		for i := range racers {
			run := spec(fmt.Sprintf("%s-%d", round, i))
			h.create(run)
			runs = append(runs, run)
		}
		var mu sync.Mutex
		losers = map[string]int{}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, run := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := &benchmarkrun.BenchmarkRunReconciler{Client: c, APIReader: c, Scheme: scheme, Clock: clock.RealClock{}, ClaimNamespace: ns}
				<-start
				holder, err := benchmarkrun.TakeDatabaseClaimForTest(context.Background(), r, run)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && holder == "":
					winners = append(winners, run.Name)
				case err == nil:
					losers[holder]++
				case apierrors.IsConflict(err):
					losers["conflict"]++
				default:
					t.Errorf("run %s's claim: %v", run.Name, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		return winners, losers
	}
	claimOf := func() *coordinationv1.Lease {
		l := &coordinationv1.Lease{}
		key := client.ObjectKey{Namespace: ns, Name: benchmarkrun.ClaimLeaseName(benchmarkrun.DatabaseIdentity(&spec("x").Spec.Target))}
		if err := c.Get(context.Background(), key, l); err != nil {
			t.Fatalf("the claim: %v", err)
		}
		return l
	}
	checkOne := func(what, round string) string {
		t.Helper()
		winners, losers := race(round)
		if len(winners) != 1 {
			t.Fatalf("%s: %d runs hold the database (%v), want exactly 1; the others were told %v", what, len(winners), winners, losers)
		}
		if got, want := ptr.Deref(claimOf().Spec.HolderIdentity, ""), ns+"/"+winners[0]; got != want {
			t.Fatalf("%s: the claim names %q, but %s was told it holds the database", what, got, want)
		}
		return winners[0]
	}

	winner := checkOne("a new claim", "new")
	winnerRun := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: winner}}

	// Ended, but still deleting its Ephemeral instance: not stale.
	got := h.read(winnerRun)
	got.Finalizers = []string{v1alpha1.FinalizerInstance}
	if err := c.Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	got.MarkFailed(v1alpha1.ReasonTargetUnreachable, "test", time.Now())
	if err := c.Status().Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	if w, l := race("deleting"); len(w) != 0 || l[ns+"/"+winner] != racers {
		t.Fatalf("a holder still deleting its instance lost its claim: %v took it; the others were told %v", w, l)
	}
	// Its instance let go of: stale.
	got = h.read(winnerRun)
	got.Finalizers = nil
	if err := c.Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	winner = checkOne("the claim of an ended run", "ended")

	// Deleted: stale.
	if err := c.Delete(context.Background(), &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: winner}}); err != nil {
		t.Fatal(err)
	}
	checkOne("the claim of a deleted run", "deleted")
}

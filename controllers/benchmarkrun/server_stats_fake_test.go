package benchmarkrun_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/serverfigures"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
)

// fakeDatabaseOpener is the fake Spanner side that can also "open" the
// run's database for the statistics: it fails with err (the errors a real
// project gives: permission, outage), and counts its calls.
type fakeDatabaseOpener struct {
	*fakeTargetPreparer
	err error
}

func (p *fakeDatabaseOpener) OpenDatabase(context.Context, *v1alpha1.BenchmarkRun) (*session.Session, error) {
	p.called("OpenDatabase")
	return nil, p.err
}

// succeededCloudRun aggregates a 3-minute Ephemeral Cloud Spanner run
// started at t0 (03:04:05) whose shard reported, with the fake clock at
// its end: its measured window holds the whole minutes closing at 03:06
// and 03:07, read from 03:09 on (the default 2-minute settle).
func succeededCloudRun(t *testing.T, openErr error, funcs interceptor.Funcs) (*fakeReconcile, *v1alpha1.BenchmarkRun, *fakeDatabaseOpener) {
	t.Helper()
	run := runtest.Run("r").CloudSpanner().Ephemeral().Finalizers(v1alpha1.FinalizerInstance).InstanceCreated().
		Created(t0).RunnersReady(t0).
		Condition(v1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, v1alpha1.ReasonShardsReported, t0).Obj()
	run.Spec.Workload.Duration = &metav1.Duration{Duration: 3 * time.Minute}
	f := newFakeReconcile(t, funcs, run)
	opener := &fakeDatabaseOpener{fakeTargetPreparer: f.spanner, err: openErr}
	f.r.Preparer = opener
	f.clock.SetTime(t0.Add(3*time.Minute + time.Second))
	shardSucceeded(t, f, run, withoutTruncation)
	res, err := f.reconcile(run)
	wantResult(t, res, err, true, false)
	got := f.run(run)
	wantCondition(t, got, v1alpha1.ConditionSucceeded, metav1.ConditionTrue, v1alpha1.ReasonCompleted)
	wantCondition(t, got, v1alpha1.ConditionServerStatsCollected, metav1.ConditionFalse, v1alpha1.ReasonServerStatsPending)
	s := got.Status.ServerStats
	if s == nil || s.Minutes != 2 || !s.WindowEnd.Time.Equal(time.Date(2026, 1, 2, 3, 7, 0, 0, time.UTC)) {
		t.Fatalf("status.serverStats %+v; want the 2 whole minutes 03:05-03:07", s)
	}
	f.emitted()
	return f, got, opener
}

// TestServerStatsWaitForTheirMinutesToSettleThenGiveUpOnOutages: a
// succeeded Cloud run stays Succeeded while its statistics are pending;
// the manager comes back when the last minute has settled (not before, and
// not by polling), keeps the Ephemeral instance until then, retries an
// outage, and gives up with a clear reason after GiveUpAfter, then deletes
// the instance.
func TestServerStatsWaitForTheirMinutesToSettleThenGiveUpOnOutages(t *testing.T) {
	f, run, opener := succeededCloudRun(t, spanner.ToSpannerError(status.Error(codes.Unavailable, "connection refused (injected)")), interceptor.Funcs{})

	res, err := f.reconcile(run)
	readyAt := time.Date(2026, 1, 2, 3, 9, 0, 0, time.UTC)
	if err != nil || res.RequeueAfter != readyAt.Sub(f.clock.Now()) {
		t.Fatalf("before the minutes settled: Reconcile = %+v, %v; want a requeue at %s (in %s)", res, err, readyAt, readyAt.Sub(f.clock.Now()))
	}
	if n := opener.count("OpenDatabase") + opener.count("ReleaseInstance"); n != 0 {
		t.Fatalf("before the minutes settled the manager dialed Spanner (%d calls) or deleted the instance", n)
	}
	wantCondition(t, f.run(run), v1alpha1.ConditionSucceeded, metav1.ConditionTrue, v1alpha1.ReasonCompleted)

	f.clock.SetTime(readyAt)
	res, err = f.reconcile(run)
	got := f.run(run)
	wantCondition(t, got, v1alpha1.ConditionServerStatsCollected, metav1.ConditionFalse, v1alpha1.ReasonServerStatsPending)
	if err != nil || res.RequeueAfter != 30*time.Second || !strings.Contains(condition(got, v1alpha1.ConditionServerStatsCollected).Message, "Unavailable") {
		t.Fatalf("an outage: Reconcile = %+v, %v, condition %+v; want a retry in 30s naming Unavailable", res, err, condition(got, v1alpha1.ConditionServerStatsCollected))
	}
	if strings.Contains(condition(got, v1alpha1.ConditionServerStatsCollected).Message, "connection refused") {
		t.Errorf("the condition quotes the dial error: %q", condition(got, v1alpha1.ConditionServerStatsCollected).Message)
	}
	if opener.count("ReleaseInstance") != 0 {
		t.Fatal("the instance was deleted while its statistics were still to be read")
	}

	f.clock.SetTime(readyAt.Add(serverfigures.DefaultServerStatsGiveUp))
	_, _ = f.reconcile(run)
	got = f.run(run)
	wantCondition(t, got, v1alpha1.ConditionServerStatsCollected, metav1.ConditionFalse, v1alpha1.ReasonServerStatsFailed)
	if c := condition(got, v1alpha1.ConditionServerStatsCollected); !strings.Contains(c.Message, "gave up") {
		t.Errorf("giving up says %q; want it to say it gave up and why", c.Message)
	}
	wantCondition(t, got, v1alpha1.ConditionSucceeded, metav1.ConditionTrue, v1alpha1.ReasonCompleted)
	if opener.count("ReleaseInstance") != 1 {
		t.Errorf("after the collection ended the instance was released %d times, want 1", opener.count("ReleaseInstance"))
	}
	f.wantEvents("Warning "+serverfigures.EventServerStatsNotCollected, "Normal "+benchmarkrun.EventInstanceDeleted)
}

// TestServerStatsWithoutPermissionDegradeNeverFailTheRun: a manager
// identity without spanner.databases.select gets "not collected:
// PermissionDenied" once, not retried, and the run stays Succeeded.
func TestServerStatsWithoutPermissionDegradeNeverFailTheRun(t *testing.T) {
	f, run, opener := succeededCloudRun(t, spanner.ToSpannerError(status.Error(codes.PermissionDenied, "caller lacks spanner.databases.select (injected)")), interceptor.Funcs{})
	f.clock.SetTime(time.Date(2026, 1, 2, 3, 9, 0, 0, time.UTC))
	_, _ = f.reconcile(run)
	got := f.run(run)
	wantCondition(t, got, v1alpha1.ConditionServerStatsCollected, metav1.ConditionFalse, v1alpha1.ReasonPermissionDenied)
	wantCondition(t, got, v1alpha1.ConditionSucceeded, metav1.ConditionTrue, v1alpha1.ReasonCompleted)
	if c := condition(got, v1alpha1.ConditionServerStatsCollected); !strings.HasPrefix(c.Message, "not collected: PermissionDenied") ||
		!strings.Contains(c.Message, "roles/spanner.databaseReader") {
		t.Errorf("condition message %q; want it to start with \"not collected: PermissionDenied\" and name the role", c.Message)
	}
	_, _ = f.reconcile(run)
	if n := opener.count("OpenDatabase"); n != 1 {
		t.Errorf("PermissionDenied was tried %d times, want once: it does not heal by retrying", n)
	}
	for _, o := range got.Status.Operations {
		if o.Server != nil {
			t.Errorf("operation %s has server figures %+v though nothing was collected", o.Name, o.Server)
		}
	}
}

// TestServerStatsOfTheEmulatorAreNotAvailable: an emulator run is marked
// at once, dials nothing and requeues nothing for the statistics.
func TestServerStatsOfTheEmulatorAreNotAvailable(t *testing.T) {
	run := runtest.Run("r").Created(t0).RunnersReady(t0).
		Condition(v1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, v1alpha1.ReasonShardsReported, t0).Obj()
	f := newFakeReconcile(t, interceptor.Funcs{}, run)
	opener := &fakeDatabaseOpener{fakeTargetPreparer: f.spanner, err: errors.New("must not be called")}
	f.r.Preparer = opener
	shardSucceeded(t, f, run)
	_, _ = f.reconcile(run)
	res, err := f.reconcile(run)
	wantResult(t, res, err, false, false)
	got := f.run(run)
	wantCondition(t, got, v1alpha1.ConditionServerStatsCollected, metav1.ConditionFalse, v1alpha1.ReasonNotAvailableOnEmulator)
	wantCondition(t, got, v1alpha1.ConditionSucceeded, metav1.ConditionTrue, v1alpha1.ReasonCompleted)
	if n := opener.count("OpenDatabase"); n != 0 {
		t.Errorf("the manager opened the emulator's database %d times for statistics it does not have", n)
	}
}

// TestClassifyServerStatsErrorNamesTheCauseWithoutDialText: the reasons of
// real gRPC statuses as the Spanner client returns them.
func TestClassifyServerStatsErrorNamesTheCauseWithoutDialText(t *testing.T) {
	for _, tc := range []struct {
		err       error
		reason    string
		transient bool
	}{
		{spanner.ToSpannerError(status.Error(codes.PermissionDenied, "Caller is missing IAM permission spanner.databases.select")), v1alpha1.ReasonPermissionDenied, false},
		{fmt.Errorf("query: %w", spanner.ToSpannerError(status.Error(codes.PermissionDenied, "denied"))), v1alpha1.ReasonPermissionDenied, false},
		{spanner.ToSpannerError(status.Error(codes.NotFound, "Database not found: projects/p/instances/i/databases/d")), v1alpha1.ReasonStatisticsNotFound, false},
		{spanner.ToSpannerError(status.Error(codes.InvalidArgument, "Table not found: NOPE_QUERY_STATS_TOP_MINUTE")), v1alpha1.ReasonStatisticsNotFound, false},
		{spanner.ToSpannerError(status.Error(codes.Unavailable, "connection error: desc = \"transport: Error while dialing: dial tcp 10.0.0.7:443\"")), v1alpha1.ReasonServerStatsFailed, true},
		{spanner.ToSpannerError(status.Error(codes.InvalidArgument, "Syntax error")), v1alpha1.ReasonServerStatsFailed, false},
		{fmt.Errorf("dialing: %w", endpoint.ErrNotAllowed), v1alpha1.ReasonServerStatsFailed, false},
	} {
		reason, msg, transient := serverfigures.ClassifyServerStatsError(tc.err)
		if reason != tc.reason || transient != tc.transient {
			t.Errorf("%v: reason %s, transient %v; want %s, %v", tc.err, reason, transient, tc.reason, tc.transient)
		}
		if strings.Contains(msg, "10.0.0.7") || strings.Contains(msg, "dial tcp") {
			t.Errorf("%v: the message quotes the dial error: %q", tc.err, msg)
		}
	}
}

// withoutTruncation makes shardSucceeded report the workload's whole
// duration, for a fake clock set at its end.
const withoutTruncation = true

// TestServerStatsOfAPartialRunAreNotCollected: when a runner's results are
// missing, Spanner's statistics still hold its operations while the
// client's counts do not, so per-operation figures would be inflated: the
// condition says so and nothing is dialed.
func TestServerStatsOfAPartialRunAreNotCollected(t *testing.T) {
	run := runtest.Run("r").CloudSpanner().Replicas(2).Created(t0).RunnersReady(t0).
		Condition(v1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, v1alpha1.ReasonShardsReported, t0).Obj()
	run.Spec.Workload.Duration = &metav1.Duration{Duration: 3 * time.Minute}
	f := newFakeReconcile(t, interceptor.Funcs{}, run)
	opener := &fakeDatabaseOpener{fakeTargetPreparer: f.spanner, err: errors.New("must not be called")}
	f.r.Preparer = opener
	f.clock.SetTime(t0.Add(3*time.Minute + time.Second))
	shardSucceeded(t, f, run, withoutTruncation) // shard 0 of 2 only
	_, _ = f.reconcile(run)
	f.clock.SetTime(t0.Add(time.Hour))
	_, _ = f.reconcile(run)
	got := f.run(run)
	wantCondition(t, got, v1alpha1.ConditionSucceeded, metav1.ConditionTrue, v1alpha1.ReasonPartialResults)
	wantCondition(t, got, v1alpha1.ConditionServerStatsCollected, metav1.ConditionFalse, v1alpha1.ReasonPartialResults)
	if n := opener.count("OpenDatabase"); n != 0 {
		t.Errorf("the statistics of a partial run were read %d times", n)
	}
}

// TestServerStatsRetryWhenTheReportCannotBeRead: an API server that fails
// to return the report is retried with backoff, the collection staying
// Pending; it is not the report's fault.
func TestServerStatsRetryWhenTheReportCannotBeRead(t *testing.T) {
	fl := &failing{err: errAPIDown}
	f, run, opener := succeededCloudRun(t, errors.New("must not be called"), gettingFails(fl))
	fl.obj = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ResultConfigMapName(run)}}
	f.clock.SetTime(time.Date(2026, 1, 2, 3, 9, 0, 0, time.UTC))
	_, err := f.reconcile(run)
	if err == nil {
		t.Fatal("a report the API server did not return was not retried")
	}
	wantCondition(t, f.run(run), v1alpha1.ConditionServerStatsCollected, metav1.ConditionFalse, v1alpha1.ReasonServerStatsPending)
	if opener.count("OpenDatabase")+opener.count("ReleaseInstance") != 0 {
		t.Error("without the report the manager dialed Spanner or deleted the instance")
	}
}

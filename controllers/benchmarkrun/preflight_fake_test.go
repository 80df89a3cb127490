package benchmarkrun_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/internal/gcpadminfake"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/preflight"
)

// The manager's preflight (preflight.go) against the stand-in of Google's
// admin APIs and IAM (internal/gcpadminfake), which the real preflight
// clients reach with client options; the rest of the Spanner side is the
// fake preparer, whose Instance call is where an instance would be
// created.

// preflightKey is a service-account key whose secret parts must never
// reach a condition or an event.
const preflightKey = `{"type":"service_account","project_id":"spanbench-test","private_key_id":"KEYID-0123456789abcdef",
"private_key":"-----BEGIN PRIVATE KEY-----\nSECRET-KEY-MATERIAL\n-----END PRIVATE KEY-----\n",
"client_email":"bench-manager@spanbench-test.iam.gserviceaccount.com","client_id":"1234567890"}`

// everyPermission is every permission a run may need: granted on the
// project, every check passes.
var everyPermission = []string{preflight.PermInstanceConfigsGet, preflight.PermInstancesCreate, preflight.PermInstancesGet,
	preflight.PermInstancesList, preflight.PermInstancesDelete, preflight.PermInstanceOperationsGet, preflight.PermDatabasesCreate,
	preflight.PermDatabaseOperationsGet, preflight.PermDatabasesGet, preflight.PermDatabasesGetDdl, preflight.PermDatabasesUpdateDdl,
	preflight.PermDatabasesSplitPoints, preflight.PermSessionsCreate, preflight.PermSessionsDelete, preflight.PermDatabasesRead,
	preflight.PermDatabasesSelect, preflight.PermDatabasesWrite, preflight.PermBeginReadOnly, preflight.PermBeginReadWrite,
	preflight.PermTimeSeriesList}

// standInPreparer is the fake preparer with its Cloud Spanner endpoint
// at the stand-in, where the preflight asks.
type standInPreparer struct {
	*fakeTargetPreparer
	cloud endpoint.Endpoint
}

func (p standInPreparer) Endpoint(run *v1alpha1.BenchmarkRun) endpoint.Endpoint {
	return endpoint.For(run.Spec.Target, p.cloud)
}

// newPreflightReconcile is the fake-client reconciler of run with the
// preflight on, asking s, with granted given on the run's project; the
// project has one instance configuration, regional-asia-northeast1.
func newPreflightReconcile(t *testing.T, run *v1alpha1.BenchmarkRun, granted ...string) (*fakeReconcile, *gcpadminfake.StandIn) {
	t.Helper()
	s := gcpadminfake.Start(t)
	project := "projects/" + run.Spec.Target.Project
	s.AddConfig(project + "/instanceConfigs/regional-asia-northeast1")
	s.Grant(project, granted...)
	f := newFakeReconcile(t, interceptor.Funcs{}, run)
	f.r.Preparer = standInPreparer{fakeTargetPreparer: f.spanner, cloud: endpoint.Cloud(s.Addr(), s.ClientOptions()...)}
	f.r.Preflight = benchmarkrun.PreflightConfig{Enabled: true, NodeQuota: 10,
		Credentials: func() preflight.Credentials {
			return preflight.Credentials{JSON: []byte(preflightKey), Source: "the manager's key (test)"}
		},
		ResourceManager: s.Addr(), ResourceManagerOptions: s.ClientOptions()}
	return f, s
}

// reconcileUntil reconciles run until done says so, at most passes times.
func (f *fakeReconcile) reconcileUntil(run *v1alpha1.BenchmarkRun, passes int, done func(*v1alpha1.BenchmarkRun) bool) *v1alpha1.BenchmarkRun {
	f.t.Helper()
	for range passes {
		if _, err := f.reconcile(run); err != nil {
			f.t.Fatal(err)
		}
		if got := f.run(run); done(got) {
			return got
		}
	}
	got := f.run(run)
	f.t.Fatalf("run %s not there after %d reconciles; conditions: %+v", run.Name, passes, got.Status.Conditions)
	return nil
}

// wantNothingCreated checks that a run refused before creation (by its
// preflight or its cost cap) had no instance asked for, and that no
// Job or Role of the run exists.
func wantNothingCreated(t *testing.T, f *fakeReconcile) {
	t.Helper()
	for _, call := range []string{"Instance", "Database", "Prepare"} {
		if n := f.spanner.count(call); n != 0 {
			t.Errorf("the preparer's %s was called %d times: the preflight failed, nothing may be created", call, n)
		}
	}
	var jobs batchv1.JobList
	var roles rbacv1.RoleList
	for _, l := range []client.ObjectList{&jobs, &roles} {
		if err := f.stored.List(context.Background(), l, client.InNamespace(runtest.Namespace)); err != nil {
			t.Fatal(err)
		}
	}
	if len(jobs.Items)+len(roles.Items) != 0 {
		t.Errorf("%d Jobs and %d Roles exist after a failed preflight, want none", len(jobs.Items), len(roles.Items))
	}
}

// TestPreflightMissingInstanceCreateFailsTheRunBeforeItsInstance: an
// Ephemeral Cloud Spanner run whose manager may not create instances
// fails with Preflight=False naming spanner.instances.create and
// roles/spanner.admin, and nothing is created: no instance asked for, no
// finalizer, no Job, no Role.
func TestPreflightMissingInstanceCreateFailsTheRunBeforeItsInstance(t *testing.T) {
	run := runtest.Run("r").Created(t0).CloudSpanner().Ephemeral().Obj()
	f, _ := newPreflightReconcile(t, run, slices.DeleteFunc(slices.Clone(everyPermission),
		func(p string) bool { return p == preflight.PermInstancesCreate })...)
	got := f.reconcileUntil(run, 5, func(r *v1alpha1.BenchmarkRun) bool { return r.IsFinished() && len(r.Finalizers) == 0 })

	wantCondition(t, got, v1alpha1.ConditionPreflight, metav1.ConditionFalse, v1alpha1.ReasonPreflightFailed)
	wantCondition(t, got, v1alpha1.ConditionSucceeded, metav1.ConditionFalse, v1alpha1.ReasonPreflightFailed)
	if got.Status.Phase != v1alpha1.PhaseFailed {
		t.Errorf("phase %s, want %s", got.Status.Phase, v1alpha1.PhaseFailed)
	}
	msg := condition(got, v1alpha1.ConditionPreflight).Message
	for _, want := range []string{"spanner.instances.create on projects/spanbench-test", "grant roles/spanner.admin", "1 permission(s) missing"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Preflight's message does not say %q: %s", want, msg)
		}
	}
	for _, c := range got.Status.Conditions {
		for _, secret := range []string{"SECRET-KEY-MATERIAL", "KEYID-0123456789abcdef", "PRIVATE KEY"} {
			if strings.Contains(c.Message, secret) {
				t.Errorf("condition %s quotes key material (%q): %s", c.Type, secret, c.Message)
			}
		}
	}
	if c := condition(got, v1alpha1.ConditionTargetReady); c != nil {
		t.Errorf("TargetReady %s/%s set although the target was never prepared", c.Status, c.Reason)
	}
	wantNothingCreated(t, f)
	if events := f.emitted(); !slices.Contains(events, "Warning "+v1alpha1.ReasonPreflightFailed) {
		t.Errorf("events %q, want a Warning %s", events, v1alpha1.ReasonPreflightFailed)
	}
}

// TestPreflightOtherFailuresFailTheRunNamingTheCheck: a failure that is
// no missing permission (here the instance configuration does not exist
// in the project) fails the run the same way, naming the check.
func TestPreflightOtherFailuresFailTheRunNamingTheCheck(t *testing.T) {
	run := runtest.Run("r").Created(t0).CloudSpanner().Ephemeral().Obj()
	run.Spec.Target.Instance.Config = "asia1" // allowed by the guardrails; the stand-in has only regional-asia-northeast1
	f, _ := newPreflightReconcile(t, run, everyPermission...)
	got := f.reconcileUntil(run, 5, func(r *v1alpha1.BenchmarkRun) bool { return r.IsFinished() })
	wantCondition(t, got, v1alpha1.ConditionPreflight, metav1.ConditionFalse, v1alpha1.ReasonPreflightFailed)
	if msg := condition(got, v1alpha1.ConditionPreflight).Message; !strings.Contains(msg, "instance configuration: projects/spanbench-test/instanceConfigs/asia1 does not exist") {
		t.Errorf("Preflight's message does not name the missing configuration: %s", msg)
	}
	wantNothingCreated(t, f)
}

// TestPreflightAllGrantedLetsTheRunProceedToCreation: with every
// permission granted the preflight passes, naming whose credentials it
// checked, and the run goes on to create its instance and get ready.
func TestPreflightAllGrantedLetsTheRunProceedToCreation(t *testing.T) {
	run := runtest.Run("r").Created(t0).CloudSpanner().Ephemeral().Obj()
	f, _ := newPreflightReconcile(t, run, everyPermission...)
	got := f.reconcileUntil(run, 5, func(r *v1alpha1.BenchmarkRun) bool {
		return condition(r, v1alpha1.ConditionTargetReady) != nil && condition(r, v1alpha1.ConditionTargetReady).Status == metav1.ConditionTrue
	})
	wantCondition(t, got, v1alpha1.ConditionPreflight, metav1.ConditionTrue, v1alpha1.ReasonPreflightPassed)
	if msg := condition(got, v1alpha1.ConditionPreflight).Message; !strings.Contains(msg, "bench-manager@spanbench-test.iam.gserviceaccount.com") ||
		!strings.Contains(msg, "Cloud Spanner") {
		t.Errorf("Preflight's message names neither the service account nor Cloud Spanner: %s", msg)
	}
	if n := f.spanner.count("Instance"); n == 0 {
		t.Error("the instance was never asked for after the preflight passed")
	}
	if got.IsFinished() {
		t.Errorf("run finished: %+v", got.Status.Conditions)
	}
}

// TestPreflightIsAskedOnceAndNotAgainOnceItPassed: a passed preflight is
// recorded; later passes of the prepare stage do not ask Google again.
func TestPreflightIsAskedOnceAndNotAgainOnceItPassed(t *testing.T) {
	run := runtest.Run("r").Created(t0).CloudSpanner().Ephemeral().Obj()
	f, _ := newPreflightReconcile(t, run, everyPermission...)
	f.spanner.instance.State = "CREATING" // the prepare stage polls
	for range 3 {
		if _, err := f.reconcile(run); err != nil {
			t.Fatal(err)
		}
	}
	wantCondition(t, f.run(run), v1alpha1.ConditionPreflight, metav1.ConditionTrue, v1alpha1.ReasonPreflightPassed)
	// Revoke everything: a preflight asked again would fail the run.
	f.r.Preflight.ResourceManager = gcpadminfake.Start(t).Addr()
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	got := f.run(run)
	if got.IsFinished() {
		t.Errorf("the preflight was asked again after it passed: %+v", got.Status.Conditions)
	}
	if n := f.spanner.count("Instance"); n != 4 {
		t.Errorf("Instance asked %d times in 4 passes, want 4 (the preflight passed in the first)", n)
	}
}

// TestPreflightOnTheEmulatorIsSkipped: an emulator run gets
// Preflight=True, skipped, without a call to Google (the stand-in
// addresses here accept no connection: a call would fail the run), and
// goes on.
func TestPreflightOnTheEmulatorIsSkipped(t *testing.T) {
	run := runtest.Run("r").Created(t0).Obj()
	f := newFakeReconcile(t, interceptor.Funcs{}, run)
	f.r.Preflight = benchmarkrun.PreflightConfig{Enabled: true, ResourceManager: "127.0.0.1:1"}
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	got := f.run(run)
	wantCondition(t, got, v1alpha1.ConditionPreflight, metav1.ConditionTrue, v1alpha1.ReasonPreflightSkippedOnEmulator)
	if msg := condition(got, v1alpha1.ConditionPreflight).Message; !strings.HasPrefix(msg, "skipped: emulator (localhost:9010)") {
		t.Errorf("Preflight's message %q, want it to say the emulator was skipped", msg)
	}
	if got.IsFinished() || f.spanner.count("Instance") != 1 {
		t.Errorf("the emulator run did not go on to its instance: Instance asked %d times, conditions %+v", f.spanner.count("Instance"), got.Status.Conditions)
	}
}

// TestPreflightOffSetsNoCondition: a manager with --preflight=false (the
// zero config) asks nothing and records no Preflight condition.
func TestPreflightOffSetsNoCondition(t *testing.T) {
	run := runtest.Run("r").Created(t0).CloudSpanner().Ephemeral().Obj()
	f := newFakeReconcile(t, interceptor.Funcs{}, run)
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	if c := condition(f.run(run), v1alpha1.ConditionPreflight); c != nil {
		t.Errorf("Preflight %s/%s with the preflight off, want none", c.Status, c.Reason)
	}
}

// TestPreflightRunsOutsideTheReconcile: with the manager's SpannerCalls
// the checks run in the background: the first pass returns at once with
// Preflight=Unknown (Checking) and asks for no instance; a later pass
// takes the outcome.
func TestPreflightRunsOutsideTheReconcile(t *testing.T) {
	run := runtest.Run("r").Created(t0).CloudSpanner().Ephemeral().Obj()
	f, _ := newPreflightReconcile(t, run, slices.DeleteFunc(slices.Clone(everyPermission),
		func(p string) bool { return p == preflight.PermInstancesCreate })...)
	f.r.SpannerCalls = benchmarkrun.NewSpannerCalls(f.clock)
	res, err := f.reconcile(run)
	if err != nil || res.RequeueAfter <= 0 {
		t.Fatalf("first pass: %+v, %v; want a poll while the checks run", res, err)
	}
	wantCondition(t, f.run(run), v1alpha1.ConditionPreflight, metav1.ConditionUnknown, v1alpha1.ReasonPreflightChecking)
	// The call ends in a goroutine, which no event shows: later passes
	// poll for its outcome.
	await.Eventually(t, await.Poll{Within: 30 * time.Second, Every: 20 * time.Millisecond}, "a pass taking the preflight's outcome", func() (bool, string) {
		if _, err := f.reconcile(run); err != nil {
			t.Fatal(err)
		}
		got := f.run(run)
		return got.IsFinished(), fmt.Sprintf("%+v", got.Status.Conditions)
	})
	wantCondition(t, f.run(run), v1alpha1.ConditionPreflight, metav1.ConditionFalse, v1alpha1.ReasonPreflightFailed)
	wantNothingCreated(t, f)
}

// TestPreflightGoogleNotAnsweringIsRetriedThenPasses: a preflight whose
// project permissions Google does not answer (Unavailable, from the
// stand-in) is Retrying, with the error, asked again after a wait that
// grows, and nothing is created meanwhile; once Google answers it passes
// and the run goes on to its instance.
func TestPreflightGoogleNotAnsweringIsRetriedThenPasses(t *testing.T) {
	run := runtest.Run("r").Created(t0).CloudSpanner().Ephemeral().Obj()
	f, s := newPreflightReconcile(t, run, everyPermission...)
	s.Fail(gcpadminfake.MethodProjectTestIam, codes.Unavailable, 3)
	for i, want := range []time.Duration{5 * time.Second, 5 * time.Second, 10 * time.Second} {
		res, err := f.reconcile(run)
		if err != nil {
			t.Fatal(err)
		}
		got := f.run(run)
		wantCondition(t, got, v1alpha1.ConditionPreflight, metav1.ConditionUnknown, v1alpha1.ReasonPreflightRetrying)
		msg := condition(got, v1alpha1.ConditionPreflight).Message
		for _, w := range []string{"Google did not answer", "Unavailable", "project permissions", "until spec.deadlines.prepare"} {
			if !strings.Contains(msg, w) {
				t.Errorf("attempt %d: Preflight's message does not say %q: %s", i+1, w, msg)
			}
		}
		if got.IsFinished() {
			t.Fatalf("attempt %d: the run ended on a check Google did not answer: %+v", i+1, got.Status.Conditions)
		}
		if res.RequeueAfter != want {
			t.Errorf("attempt %d: asked again after %s, want %s", i+1, res.RequeueAfter, want)
		}
		wantNothingCreated(t, f)
		f.clock.Step(res.RequeueAfter)
	}
	got := f.reconcileUntil(run, 3, func(r *v1alpha1.BenchmarkRun) bool { return f.spanner.count("Instance") > 0 })
	wantCondition(t, got, v1alpha1.ConditionPreflight, metav1.ConditionTrue, v1alpha1.ReasonPreflightPassed)
}

// TestPreflightGoogleNotAnsweringUntilTheDeadlineFailsTheRun: a check
// Google never answers is asked again, the waits doubling up to a
// minute, until spec.deadlines.prepare passes; then the run fails with
// PreflightFailed, saying so, and nothing was created.
func TestPreflightGoogleNotAnsweringUntilTheDeadlineFailsTheRun(t *testing.T) {
	for _, code := range []codes.Code{codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted} {
		t.Run(code.String(), func(t *testing.T) {
			run := runtest.Run("r").Created(t0).CloudSpanner().Ephemeral().Obj()
			f, s := newPreflightReconcile(t, run, everyPermission...)
			s.Fail(gcpadminfake.MethodProjectTestIam, code, -1)
			var waits []time.Duration
			for !f.run(run).IsFinished() {
				if len(waits) > 40 {
					t.Fatalf("still retrying after %d attempts (waits %v): the retries are not bounded", len(waits), waits)
				}
				res, err := f.reconcile(run)
				if err != nil {
					t.Fatal(err)
				}
				if res.RequeueAfter > 0 {
					waits = append(waits, res.RequeueAfter)
					f.clock.Step(res.RequeueAfter)
				}
			}
			got := f.run(run)
			wantCondition(t, got, v1alpha1.ConditionPreflight, metav1.ConditionFalse, v1alpha1.ReasonPreflightFailed)
			wantCondition(t, got, v1alpha1.ConditionSucceeded, metav1.ConditionFalse, v1alpha1.ReasonPreflightFailed)
			if msg := condition(got, v1alpha1.ConditionPreflight).Message; !strings.Contains(msg, "Google did not answer until spec.deadlines.prepare passed") ||
				!strings.Contains(msg, code.String()) {
				t.Errorf("Preflight's message does not say Google did not answer until the deadline (%s): %s", code, msg)
			}
			if len(waits) < 3 || waits[0] != 5*time.Second || slices.Max(waits) != time.Minute {
				t.Errorf("waits %v: want them to start at 5s and grow to a minute", waits)
			}
			wantNothingCreated(t, f)
		})
	}
}

// TestPreflightRefusedByGoogleFailsAtOnce: any other answer (denied, not
// found, invalid) is a refusal asking again does not change: the first
// pass fails the run, nothing created.
func TestPreflightRefusedByGoogleFailsAtOnce(t *testing.T) {
	for _, code := range []codes.Code{codes.PermissionDenied, codes.NotFound, codes.InvalidArgument, codes.Internal} {
		t.Run(code.String(), func(t *testing.T) {
			run := runtest.Run("r").Created(t0).CloudSpanner().Ephemeral().Obj()
			f, s := newPreflightReconcile(t, run, everyPermission...)
			s.Fail(gcpadminfake.MethodProjectTestIam, code, -1)
			if _, err := f.reconcile(run); err != nil {
				t.Fatal(err)
			}
			wantCondition(t, f.run(run), v1alpha1.ConditionPreflight, metav1.ConditionFalse, v1alpha1.ReasonPreflightFailed)
			got := f.reconcileUntil(run, 5, func(r *v1alpha1.BenchmarkRun) bool { return r.IsFinished() })
			if msg := condition(got, v1alpha1.ConditionPreflight).Message; !strings.Contains(msg, code.String()) || strings.Contains(msg, "did not answer") {
				t.Errorf("Preflight's message does not give Google's refusal (%s): %s", code, msg)
			}
			wantNothingCreated(t, f)
		})
	}
}

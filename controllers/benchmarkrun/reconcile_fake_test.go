package benchmarkrun_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/children"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/target"
)

// The tests in this file drive Reconcile against controller-runtime's fake
// client, with interceptors injecting the API errors a real API server
// returns only under races (conflicts, AlreadyExists) or outages (Get,
// List, Delete errors). They check Reconcile's decisions in milliseconds;
// the envtest scenarios prove the whole flow.

// t0 is the fake clock's time when a test starts; runs are created then.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// errAPIDown is an API error that is neither a conflict nor NotFound.
var errAPIDown = apierrors.NewInternalError(errors.New("etcd is down (injected)"))

// fakeReconcile is one Reconcile under test: the real reconciler over the
// fake client and a fake Spanner side, with a fake clock and recorder.
type fakeReconcile struct {
	t *testing.T
	// stored reads and writes the fake API server's objects directly,
	// behind the interceptors' back.
	stored  client.WithWatch
	r       *benchmarkrun.BenchmarkRunReconciler
	events  *record.FakeRecorder
	spanner *fakeTargetPreparer
	clock   *clocktesting.FakeClock
}

// newFakeReconcile stores objs in a fake API server and builds the
// reconciler over it, its calls going through funcs.
func newFakeReconcile(t *testing.T, funcs interceptor.Funcs, objs ...client.Object) *fakeReconcile {
	t.Helper()
	stored := fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(&v1alpha1.BenchmarkRun{}).
		WithObjects(objs...).Build()
	f := &fakeReconcile{t: t, stored: stored, events: record.NewFakeRecorder(100),
		spanner: &fakeTargetPreparer{instance: readyInstance()}, clock: clocktesting.NewFakeClock(t0)}
	f.r = &benchmarkrun.BenchmarkRunReconciler{Client: interceptor.NewClient(stored, funcs), Scheme: scheme,
		Recorder: f.events, Clock: f.clock, Preparer: f.spanner, Limits: defaultLimits(), ClusterID: harnessClusterID,
		Runner: children.RunnerConfig{Image: "spanbench:test"}, Arrivals: pod.RunArrivals}
	return f
}

// reconcile runs one Reconcile of run.
func (f *fakeReconcile) reconcile(run *v1alpha1.BenchmarkRun) (ctrl.Result, error) {
	return f.r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(run)})
}

// run is run as stored, or nil once it is gone.
func (f *fakeReconcile) run(run *v1alpha1.BenchmarkRun) *v1alpha1.BenchmarkRun {
	f.t.Helper()
	got := &v1alpha1.BenchmarkRun{}
	if err := f.stored.Get(context.Background(), client.ObjectKeyFromObject(run), got); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		f.t.Fatal(err)
	}
	return got
}

// exists says whether obj's key is stored, reading it into obj.
func (f *fakeReconcile) exists(obj client.Object) bool {
	f.t.Helper()
	err := f.stored.Get(context.Background(), client.ObjectKeyFromObject(obj), obj)
	if err != nil && !apierrors.IsNotFound(err) {
		f.t.Fatal(err)
	}
	return err == nil
}

// emitted drains the events recorded so far, as "Type Reason".
func (f *fakeReconcile) emitted() []string {
	var out []string
	for {
		select {
		case e := <-f.events.Events:
			fields := strings.Fields(e)
			out = append(out, strings.Join(fields[:min(2, len(fields))], " "))
		default:
			return out
		}
	}
}

// wantEvents checks the events emitted since the last look.
func (f *fakeReconcile) wantEvents(want ...string) {
	f.t.Helper()
	got := f.emitted()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		f.t.Errorf("events: got %q, want %q", got, want)
	}
}

// fakeTargetPreparer stands in for the Spanner side through the seam the
// reconciler uses (TargetPreparer): each call returns what the test set.
type fakeTargetPreparer struct {
	mu                                               sync.Mutex
	instance                                         target.InstanceInfo
	instanceErr, prepareErr, releaseErr, completeErr error
	plan                                             benchmarkrun.DatasetPlan
	// database is what Database returns (nil: done), databaseErr its error.
	database    *target.DatabaseProgress
	databaseErr error
	// calls counts the calls by method name.
	calls map[string]int
	// finalizersSeen are the run's stored finalizers when Instance was
	// called (read through stored, if set).
	stored         client.Reader
	finalizersSeen []string
	// releaseHold, when set, holds ReleaseInstance until it is closed.
	releaseHold chan struct{}
}

func readyInstance() target.InstanceInfo {
	return target.InstanceInfo{Project: "spanbench-test", ID: "bench", Config: "regional-asia-northeast1", Nodes: 1, State: "READY"}
}

func (p *fakeTargetPreparer) called(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.calls == nil {
		p.calls = map[string]int{}
	}
	p.calls[name]++
}

func (p *fakeTargetPreparer) count(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[name]
}

func (p *fakeTargetPreparer) Endpoint(run *v1alpha1.BenchmarkRun) endpoint.Endpoint {
	return endpoint.For(run.Spec.Target, endpoint.Cloud(fakeCloudEndpoint))
}

// fakeCloudEndpoint is the Cloud Spanner address the fake-client suite's
// manager is configured with; nothing ever dials it.
const fakeCloudEndpoint = "spanner-fake.invalid:443"

func (p *fakeTargetPreparer) Instance(ctx context.Context, run *v1alpha1.BenchmarkRun, _ target.Owner) (target.InstanceInfo, error) {
	p.called("Instance")
	if p.stored != nil {
		stored := &v1alpha1.BenchmarkRun{}
		if err := p.stored.Get(ctx, client.ObjectKeyFromObject(run), stored); err == nil {
			p.finalizersSeen = stored.Finalizers
		}
	}
	return p.instance, p.instanceErr
}

func (p *fakeTargetPreparer) ReleaseInstance(ctx context.Context, _ *v1alpha1.BenchmarkRun, _ target.Owner) error {
	p.called("ReleaseInstance")
	if p.releaseHold != nil {
		select {
		case <-p.releaseHold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return p.releaseErr
}

func (p *fakeTargetPreparer) Database(context.Context, *v1alpha1.BenchmarkRun, *v1alpha1.WorkloadSpec) (target.DatabaseProgress, error) {
	p.called("Database")
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.database != nil {
		return *p.database, p.databaseErr
	}
	return target.DatabaseProgress{Done: p.databaseErr == nil}, p.databaseErr
}

func (p *fakeTargetPreparer) Prepare(context.Context, *v1alpha1.BenchmarkRun, *v1alpha1.WorkloadSpec) (benchmarkrun.DatasetPlan, error) {
	p.called("Prepare")
	return p.plan, p.prepareErr
}

func (p *fakeTargetPreparer) AddSplitPoints(context.Context, *v1alpha1.BenchmarkRun, *v1alpha1.WorkloadSpec, []string) error {
	p.called("AddSplitPoints")
	return nil
}

func (p *fakeTargetPreparer) CompleteDataset(context.Context, *v1alpha1.BenchmarkRun, *v1alpha1.WorkloadSpec) error {
	p.called("CompleteDataset")
	return p.completeErr
}

// condition is run's condition of type t, or nil.
func condition(run *v1alpha1.BenchmarkRun, t string) *metav1.Condition {
	return meta.FindStatusCondition(run.Status.Conditions, t)
}

// wantCondition checks one of run's conditions.
func wantCondition(t *testing.T, run *v1alpha1.BenchmarkRun, condType string, status metav1.ConditionStatus, reason string) {
	t.Helper()
	c := condition(run, condType)
	switch {
	case c == nil:
		t.Errorf("run %s has no %s condition; conditions: %+v", run.Name, condType, run.Status.Conditions)
	case c.Status != status || c.Reason != reason:
		t.Errorf("run %s: %s is %s/%s (%s), want %s/%s", run.Name, condType, c.Status, c.Reason, c.Message, status, reason)
	}
}

// wantResult checks what Reconcile returned.
func wantResult(t *testing.T, res ctrl.Result, err error, wantRequeue bool, wantErr bool) {
	t.Helper()
	if (err != nil) != wantErr {
		t.Errorf("Reconcile returned error %v, want an error: %v", err, wantErr)
	}
	if (res.RequeueAfter > 0) != wantRequeue {
		t.Errorf("Reconcile returned %+v, want a requeue: %v", res, wantRequeue)
	}
}

// wantErrorKeepsRunGoing reconciles run once and asserts that the
// injected error (what) is returned, so controller-runtime retries it with
// backoff, and that it did not end the run.
func wantErrorKeepsRunGoing(t *testing.T, f *fakeReconcile, run *v1alpha1.BenchmarkRun, what string) {
	t.Helper()
	res, err := f.reconcile(run)
	wantResult(t, res, err, false, true)
	if c := condition(f.run(run), v1alpha1.ConditionSucceeded); c != nil {
		t.Errorf("%s ended the run: %s: %s", what, c.Reason, c.Message)
	}
}

// failing returns an interceptor error for calls on objects of obj's type
// (and name, if it has one), at most times times (0: always), after
// letting the first after calls through.
type failing struct {
	mu           sync.Mutex
	obj          client.Object
	err          error
	times, after int
	n, seen      int
}

func (f *failing) hit(o client.Object) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fmt.Sprintf("%T", o) != fmt.Sprintf("%T", f.obj) || (f.obj.GetName() != "" && f.obj.GetName() != o.GetName()) {
		return nil
	}
	if f.seen++; f.seen <= f.after || (f.times > 0 && f.n >= f.times) {
		return nil
	}
	f.n++
	return f.err
}

// TestReconcileOfAGoneRunDoesNothing: a request for a run deleted meanwhile
// is done, not an error, and creates nothing: no child object, no Spanner
// call, no event.
func TestReconcileOfAGoneRunDoesNothing(t *testing.T) {
	f := newFakeReconcile(t, interceptor.Funcs{})
	res, err := f.reconcile(runtest.Run("gone").Obj())
	wantResult(t, res, err, false, false)
	if n := len(f.spanner.calls); n != 0 {
		t.Errorf("a gone run led to %d Spanner calls", n)
	}
	for _, l := range []client.ObjectList{&corev1.ConfigMapList{}, &batchv1.JobList{}, &corev1.ServiceAccountList{}, &rbacv1.RoleList{}, &rbacv1.RoleBindingList{}} {
		if err := f.stored.List(context.Background(), l, client.InNamespace(runtest.Namespace)); err != nil {
			t.Fatal(err)
		}
		if n := meta.LenList(l); n != 0 {
			t.Errorf("a pass of a gone run left %d objects of %T", n, l)
		}
	}
	f.wantEvents()
}

// TestReconcileRetriesARunItCannotRead: an error reading the run is
// returned, so that the controller retries with its backoff.
func TestReconcileRetriesARunItCannotRead(t *testing.T) {
	run := runtest.Run("r").Created(t0).Obj()
	down := &failing{obj: &v1alpha1.BenchmarkRun{}, err: errAPIDown}
	f := newFakeReconcile(t, gettingFails(down), run)
	res, err := f.reconcile(run)
	wantResult(t, res, err, false, true)
	if n := f.spanner.count("Instance"); n != 0 {
		t.Errorf("a run that could not be read led to %d Instance calls", n)
	}
}

// statusPatchFailing fails the run's status patches with err, times times.
func statusPatchFailing(err error, times int, opts *[]client.SubResourcePatchOption) interceptor.Funcs {
	n := 0
	return interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, o ...client.SubResourcePatchOption) error {
		if opts != nil {
			*opts = append(*opts, o...)
		}
		if n < times {
			n++
			return err
		}
		return c.SubResource(sub).Patch(ctx, obj, patch, o...)
	}}
}

// TestReconcileStatusWriteThatConflictsIsRequeuedAndLosesNothing: a status patch
// that conflicts (the cached run was stale) is a quick requeue, not an
// error; this pass's events are held back, and the next pass, on fresh
// data, writes the same transition and tells it.
func TestReconcileStatusWriteThatConflictsIsRequeuedAndLosesNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"conflict", apierrors.NewConflict(schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "benchmarkruns"}, "r", errors.New("stale (injected)"))},
		{"run deleted meanwhile", apierrors.NewNotFound(schema.GroupResource{Group: v1alpha1.GroupVersion.Group, Resource: "benchmarkruns"}, "r")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := runtest.Run("r").Created(t0).Obj()
			f := newFakeReconcile(t, statusPatchFailing(tc.err, 1, nil), run)
			f.spanner.plan = benchmarkrun.DatasetPlan{Source: v1alpha1.DatasetExisting}
			res, err := f.reconcile(run)
			wantResult(t, res, err, true, false)
			if got := f.run(run); len(got.Status.Conditions) != 0 {
				t.Errorf("the failed status write changed the stored status: %+v", got.Status.Conditions)
			}
			f.wantEvents() // nothing announced that the status does not show
			res, err = f.reconcile(run)
			wantResult(t, res, err, true, false)
			wantCondition(t, f.run(run), v1alpha1.ConditionTargetReady, metav1.ConditionTrue, v1alpha1.ReasonTargetAvailable)
			f.wantEvents("Normal "+v1alpha1.ReasonProvisioning, "Normal "+v1alpha1.ReasonTargetAvailable)
		})
	}
}

// TestReconcileStatusWriteErrorIsRetried: any other error of the status write is
// returned (the controller's backoff retries), with no event.
func TestReconcileStatusWriteErrorIsRetried(t *testing.T) {
	run := runtest.Run("r").Created(t0).Obj()
	f := newFakeReconcile(t, statusPatchFailing(errAPIDown, 1, nil), run)
	res, err := f.reconcile(run)
	wantResult(t, res, err, false, true)
	f.wantEvents()
}

// TestReconcileStatusWritesNameTheirFieldOwner: managedFields say the status is
// spanbench's.
func TestReconcileStatusWritesNameTheirFieldOwner(t *testing.T) {
	run := runtest.Run("r").Created(t0).Obj()
	var opts []client.SubResourcePatchOption
	f := newFakeReconcile(t, statusPatchFailing(nil, 0, &opts), run)
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	if len(opts) == 0 {
		t.Fatal("the reconcile wrote no status")
	}
	po := &client.SubResourcePatchOptions{}
	po.ApplyOptions(opts)
	if po.FieldManager != statuswrite.FieldOwner {
		t.Errorf("status patch field manager %q, want %q", po.FieldManager, statuswrite.FieldOwner)
	}
}

// child is one kind of object a run creates, with the phase that creates
// it.
type child struct {
	name string
	obj  func(run *v1alpha1.BenchmarkRun) client.Object
	// run is a run in the phase that creates the child.
	run func() *v1alpha1.BenchmarkRun
}

func runAtBarrier() *v1alpha1.BenchmarkRun {
	return runtest.Run("r").Created(t0).DatasetLoaded(t0).Obj()
}

func runLoading() *v1alpha1.BenchmarkRun { return runtest.Run("r").Created(t0).Loading(t0).Obj() }

// childKinds are the run's children by kind; ConfigMaps and Jobs match
// whichever the run creates first.
var childKinds = []child{
	{"ServiceAccount", func(run *v1alpha1.BenchmarkRun) client.Object {
		return &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.RunnerServiceAccountName(run)}}
	}, runAtBarrier},
	{"Role", func(*v1alpha1.BenchmarkRun) client.Object { return &rbacv1.Role{} }, runAtBarrier},
	{"RoleBinding", func(*v1alpha1.BenchmarkRun) client.Object { return &rbacv1.RoleBinding{} }, runAtBarrier},
	{"ConfigMap", func(*v1alpha1.BenchmarkRun) client.Object { return &corev1.ConfigMap{} }, runAtBarrier},
	{"runner Job", func(run *v1alpha1.BenchmarkRun) client.Object {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.RunnerJobName(run)}}
	}, runAtBarrier},
	{"loader Job", func(run *v1alpha1.BenchmarkRun) client.Object {
		return &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.LoaderJobName(run)}}
	}, runLoading},
}

// createdMeanwhile makes the first Create of the child's kind find the
// name taken, as when another reconcile or a user created the object
// between the cache read and the create: it stores the object, as
// somebody else made it (labels, no owner), and returns AlreadyExists.
// created receives the stored object's key.
func createdMeanwhile(kind client.Object, labels map[string]string, created *client.ObjectKey) interceptor.Funcs {
	raced := &failing{obj: kind, times: 1, err: errors.New("raced")}
	return interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if raced.hit(obj) == nil {
			return c.Create(ctx, obj, opts...)
		}
		theirs := obj.DeepCopyObject().(client.Object)
		theirs.SetOwnerReferences(nil)
		theirs.SetLabels(labels)
		if err := c.Create(ctx, theirs, opts...); err != nil {
			return err
		}
		*created = client.ObjectKeyFromObject(theirs)
		gvk, _ := c.GroupVersionKindFor(obj)
		return apierrors.NewAlreadyExists(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, obj.GetName())
	}}
}

// TestReconcileChildCreatedMeanwhileIsAdoptedWhenItIsTheRuns: AlreadyExists on a
// child that carries the run's label and no owner: the run takes it over
// (owner reference) and goes on.
func TestReconcileChildCreatedMeanwhileIsAdoptedWhenItIsTheRuns(t *testing.T) {
	for _, ch := range childKinds {
		t.Run(ch.name, func(t *testing.T) {
			run := ch.run()
			var key client.ObjectKey
			f := newFakeReconcile(t, createdMeanwhile(ch.obj(run), map[string]string{v1alpha1.LabelRun: run.Name}, &key), run)
			res, err := f.reconcile(run)
			wantResult(t, res, err, true, false)
			if key.Name == "" {
				t.Fatalf("the run created no %s", ch.name)
			}
			got := ch.obj(run)
			got.SetName(key.Name)
			got.SetNamespace(key.Namespace)
			if !f.exists(got) || !metav1.IsControlledBy(got, run) {
				t.Errorf("%s %s, created meanwhile with the run's label, was not adopted: owners %+v", ch.name, key.Name, got.GetOwnerReferences())
			}
			if c := condition(f.run(run), v1alpha1.ConditionSucceeded); c != nil {
				t.Errorf("the run ended (%s: %s) instead of adopting its %s", c.Reason, c.Message, ch.name)
			}
		})
	}
}

// TestReconcileChildOfSomebodyElseIsRefused: AlreadyExists on a child that is not
// the run's (no run label): spanbench leaves it alone and fails the run
// with NameConflict, saying so in an event.
func TestReconcileChildOfSomebodyElseIsRefused(t *testing.T) {
	for _, ch := range childKinds {
		t.Run(ch.name, func(t *testing.T) {
			run := ch.run()
			var key client.ObjectKey
			f := newFakeReconcile(t, createdMeanwhile(ch.obj(run), map[string]string{"app": "theirs"}, &key), run)
			res, err := f.reconcile(run)
			wantResult(t, res, err, true, false) // requeued for the wrap-up
			got := ch.obj(run)
			got.SetName(key.Name)
			got.SetNamespace(key.Namespace)
			if !f.exists(got) || len(got.GetOwnerReferences()) != 0 {
				t.Errorf("%s %s of somebody else was taken over: owners %+v", ch.name, key.Name, got.GetOwnerReferences())
			}
			wantCondition(t, f.run(run), v1alpha1.ConditionSucceeded, metav1.ConditionFalse, v1alpha1.ReasonNameConflict)
			if ev := f.emitted(); !contains(ev, "Warning "+v1alpha1.ReasonNameConflict) {
				t.Errorf("events %q lack a NameConflict warning", ev)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// TestReconcileChildAPIErrorsAreRetried: an error creating a child, reading it, or
// adopting it is returned (the controller retries) and does not end the
// run.
func TestReconcileChildAPIErrorsAreRetried(t *testing.T) {
	job := &batchv1.Job{}
	cases := map[string]func(*failing) interceptor.Funcs{
		"create": func(fl *failing) interceptor.Funcs {
			return interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if err := fl.hit(obj); err != nil {
					return err
				}
				return c.Create(ctx, obj, opts...)
			}}
		},
		"get": gettingFails,
	}
	for name, funcs := range cases {
		t.Run(name, func(t *testing.T) {
			run := runAtBarrier()
			f := newFakeReconcile(t, funcs(&failing{obj: job, err: errAPIDown}), run)
			wantErrorKeepsRunGoing(t, f, run, "an API error")
		})
	}
	t.Run("adopt", func(t *testing.T) {
		run := runAtBarrier()
		ours := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.RunnerJobName(run), Namespace: run.Namespace,
			Labels: map[string]string{v1alpha1.LabelRun: run.Name}}}
		fl := &failing{obj: job, err: errAPIDown}
		f := newFakeReconcile(t, interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if err := fl.hit(obj); err != nil {
				return err
			}
			return c.Patch(ctx, obj, patch, opts...)
		}}, run, ours)
		wantErrorKeepsRunGoing(t, f, run, "an API error")
	})
}

// TestReconcileConflictInsideAPassIsARequeue: a conflict on a write other than the
// status (here the adoption patch of a child) is a quick requeue, not an
// error the controller logs and backs off from.
func TestReconcileConflictInsideAPassIsARequeue(t *testing.T) {
	run := runAtBarrier()
	ours := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.RunnerJobName(run), Namespace: run.Namespace,
		Labels: map[string]string{v1alpha1.LabelRun: run.Name}}}
	fl := &failing{obj: &batchv1.Job{}, times: 1,
		err: apierrors.NewConflict(schema.GroupResource{Group: "batch", Resource: "jobs"}, ours.Name, errors.New("stale (injected)"))}
	f := newFakeReconcile(t, interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		if err := fl.hit(obj); err != nil {
			return err
		}
		return c.Patch(ctx, obj, patch, opts...)
	}}, run, ours)
	res, err := f.reconcile(run)
	wantResult(t, res, err, true, false)
	res, err = f.reconcile(run)
	wantResult(t, res, err, true, false)
	if !f.exists(ours) || !metav1.IsControlledBy(ours, run) {
		t.Errorf("the runner Job was not adopted on the pass after the conflict: owners %+v", ours.OwnerReferences)
	}
}

// TestReconcilePodListErrorLeavesTheRunWaiting: the pods are listed only to explain
// a failure (image pull, unschedulable); when the list fails, the run
// waits at the barrier as if the pods had nothing to say, and is looked at
// again at its deadline.
func TestReconcilePodListErrorLeavesTheRunWaiting(t *testing.T) {
	run := runAtBarrier()
	f := newFakeReconcile(t, interceptor.Funcs{List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
		if _, ok := list.(*corev1.PodList); ok {
			return errAPIDown
		}
		return c.List(ctx, list, opts...)
	}}, run)
	res, err := f.reconcile(run)
	wantResult(t, res, err, true, false)
	wantCondition(t, f.run(run), v1alpha1.ConditionRunnersReady, metav1.ConditionFalse, v1alpha1.ReasonRunnersNotReady)
}

// TestReconcileShardReadErrorIsRetried: a running run whose shard ConfigMaps
// cannot be read is retried, not ended.
func TestReconcileShardReadErrorIsRetried(t *testing.T) {
	run := runtest.Run("r").Created(t0).RunnersReady(t0).Obj()
	fl := &failing{obj: &corev1.ConfigMap{}, err: errAPIDown}
	f := newFakeReconcile(t, gettingFails(fl), run)
	res, err := f.reconcile(run)
	wantResult(t, res, err, false, true)
	wantCondition(t, f.run(run), v1alpha1.ConditionRunnersReady, metav1.ConditionTrue, v1alpha1.ReasonAllRunnersReady)
}

// TestReconcileRunningRunPastItsOverrunAggregatesWhatArrived: no runner reported by
// the overrun deadline; the run moves on to aggregation with a warning.
func TestReconcileRunningRunPastItsOverrunAggregatesWhatArrived(t *testing.T) {
	run := runtest.Run("r").Created(t0).RunnersReady(t0).Obj()
	f := newFakeReconcile(t, interceptor.Funcs{}, run)
	res, err := f.reconcile(run)
	wantResult(t, res, err, true, false)
	wantCondition(t, f.run(run), v1alpha1.ConditionLoadCompleted, metav1.ConditionFalse, v1alpha1.ReasonRunning)
	f.clock.Step(time.Hour)
	res, err = f.reconcile(run)
	wantResult(t, res, err, true, false)
	wantCondition(t, f.run(run), v1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, v1alpha1.ReasonDeadlineExceeded)
	f.wantEvents("Warning " + v1alpha1.ReasonDeadlineExceeded)
	// Aggregating with nothing to merge fails the run.
	res, err = f.reconcile(run)
	wantResult(t, res, err, true, false)
	wantCondition(t, f.run(run), v1alpha1.ConditionSucceeded, metav1.ConditionFalse, v1alpha1.ReasonResultInvalid)
}

// TestReconcileRecordingTheLoadedDatasetIsRetried: once the loaders are done, a
// failure to write the dataset marker is retried, not a finished load.
func TestReconcileRecordingTheLoadedDatasetIsRetried(t *testing.T) {
	run := runtest.Run("r").Created(t0).Loading(t0).LoaderPods(1).Obj()
	f := newFakeReconcile(t, interceptor.Funcs{}, run)
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	f.spanner.completeErr = errors.New("spanner unavailable (injected)")
	loaderDone(t, f, run)
	res, err := f.reconcile(run)
	wantResult(t, res, err, false, true)
	wantCondition(t, f.run(run), v1alpha1.ConditionDatasetLoaded, metav1.ConditionFalse, v1alpha1.ReasonLoading)
	f.spanner.completeErr = nil
	res, err = f.reconcile(run)
	wantResult(t, res, err, true, false)
	wantCondition(t, f.run(run), v1alpha1.ConditionDatasetLoaded, metav1.ConditionTrue, v1alpha1.ReasonDatasetReady)
	// The finished loaders' Job stays until the run ends: deleting it
	// before the stored status says the load is done lets a pass on a
	// stale run create it again (the storm test).
	if !f.exists(&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.LoaderJobName(run), Namespace: run.Namespace}}) {
		t.Error("the loader Job was deleted while the run goes on")
	}
}

// loaderDone marks run's only loader ConfigMap as succeeded, as the
// loader pod would.
func loaderDone(t *testing.T, f *fakeReconcile, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: protocol.LoaderConfigMapName(run.Name, 0), Namespace: run.Namespace}}
	if !f.exists(cm) {
		t.Fatalf("the run created no loader ConfigMap %s", cm.Name)
	}
	markSucceeded(cm)
	if err := f.stored.Update(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
}

// TestReconcilePreparePaths: the decisions of the prepare stage, by what the
// Spanner side answers.
func TestReconcilePreparePaths(t *testing.T) {
	notReady := readyInstance()
	notReady.State = "CREATING"
	for _, tc := range []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		// set makes the fake Spanner side answer.
		set func(*fakeTargetPreparer)
		// late moves the clock past the prepare deadline first.
		late                 bool
		wantRequeue          bool
		wantCond, wantStatus string
		wantReason           string
		wantCalls            string // Spanner calls in order, comma-separated counts
	}{
		{name: "guardrails refuse", run: runtest.Run("r").Created(t0).Replicas(1000).Obj(),
			wantRequeue: true, wantCond: v1alpha1.ConditionSucceeded, wantStatus: "False", wantReason: v1alpha1.ReasonLimitExceeded, wantCalls: "0,0"},
		{name: "transient error retried", run: runtest.Run("r").Created(t0).Obj(),
			set: func(p *fakeTargetPreparer) { p.instanceErr = errors.New("connection reset (injected)") }, wantRequeue: true,
			wantCond: v1alpha1.ConditionTargetReady, wantStatus: "False", wantReason: v1alpha1.ReasonTargetUnreachable, wantCalls: "1,0"},
		{name: "transient error past the deadline fails", run: runtest.Run("r").Created(t0).Obj(), late: true,
			set: func(p *fakeTargetPreparer) { p.instanceErr = errors.New("connection reset (injected)") }, wantRequeue: true,
			wantCond: v1alpha1.ConditionSucceeded, wantStatus: "False", wantReason: v1alpha1.ReasonTargetUnreachable, wantCalls: "1,0"},
		{name: "instance still creating polled", run: runtest.Run("r").Created(t0).Obj(),
			set: func(p *fakeTargetPreparer) { p.instance = notReady }, wantRequeue: true,
			wantCond: v1alpha1.ConditionTargetReady, wantStatus: "False", wantReason: v1alpha1.ReasonProvisioning, wantCalls: "1,0"},
		{name: "instance not ready by the deadline fails", run: runtest.Run("r").Created(t0).Obj(), late: true,
			set: func(p *fakeTargetPreparer) { p.instance = notReady }, wantRequeue: true,
			wantCond: v1alpha1.ConditionSucceeded, wantStatus: "False", wantReason: v1alpha1.ReasonInstanceNotReady, wantCalls: "1,0"},
		{name: "database still being created polled", run: runtest.Run("r").Created(t0).Obj(),
			set: func(p *fakeTargetPreparer) { p.database = &creatingDatabase }, wantRequeue: true,
			wantCond: v1alpha1.ConditionTargetReady, wantStatus: "False", wantReason: v1alpha1.ReasonProvisioning, wantCalls: "1,0"},
		{name: "database not ready by the deadline fails", run: runtest.Run("r").Created(t0).Obj(), late: true,
			set: func(p *fakeTargetPreparer) { p.database = &creatingDatabase }, wantRequeue: true,
			wantCond: v1alpha1.ConditionSucceeded, wantStatus: "False", wantReason: v1alpha1.ReasonDatabaseBusy, wantCalls: "1,0"},
		{name: "database operation that failed late fails with its code", run: runtest.Run("r").Created(t0).Obj(),
			set: func(p *fakeTargetPreparer) {
				p.databaseErr = fmt.Errorf("create database d: wait: %w", status.Error(codes.PermissionDenied, "denied (injected)"))
			}, wantRequeue: true,
			wantCond: v1alpha1.ConditionSucceeded, wantStatus: "False", wantReason: v1alpha1.ReasonPermissionDenied, wantCalls: "1,0"},
		{name: "dataset mismatch fails", run: runtest.Run("r").Created(t0).Obj(),
			set: func(p *fakeTargetPreparer) { p.prepareErr = dataset.ErrMismatch }, wantRequeue: true,
			wantCond: v1alpha1.ConditionSucceeded, wantStatus: "False", wantReason: v1alpha1.ReasonDatasetMismatch, wantCalls: "1,1"},
		{name: "existing dataset skips loading", run: runtest.Run("r").Created(t0).Obj(),
			set: func(p *fakeTargetPreparer) { p.plan.Source = v1alpha1.DatasetExisting }, wantRequeue: true,
			wantCond: v1alpha1.ConditionDatasetLoaded, wantStatus: "True", wantReason: v1alpha1.ReasonDatasetReady, wantCalls: "1,1"},
		{name: "new dataset is loaded", run: runtest.Run("r").Created(t0).Obj(),
			set: func(p *fakeTargetPreparer) { p.plan.Source = v1alpha1.DatasetLoaded }, wantRequeue: true,
			wantCond: v1alpha1.ConditionDatasetLoaded, wantStatus: "False", wantReason: v1alpha1.ReasonLoading, wantCalls: "1,1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeReconcile(t, interceptor.Funcs{}, tc.run)
			if tc.set != nil {
				tc.set(f.spanner)
			}
			if tc.late {
				f.clock.Step(24 * time.Hour)
			}
			res, err := f.reconcile(tc.run)
			wantResult(t, res, err, tc.wantRequeue, false)
			wantCondition(t, f.run(tc.run), tc.wantCond, metav1.ConditionStatus(tc.wantStatus), tc.wantReason)
			if got := fmt.Sprintf("%d,%d", f.spanner.count("Instance"), f.spanner.count("Prepare")); got != tc.wantCalls {
				t.Errorf("Instance,Prepare calls: %s, want %s", got, tc.wantCalls)
			}
		})
	}
}

// creatingDatabase is a database creation Spanner is still working on.
var creatingDatabase = target.DatabaseProgress{Operation: "projects/p/instances/i/databases/d/operations/o", Creating: true, Statements: 3}

// TestReconcileRecordsTheDatabaseOperationAndPollsIt: a database still
// being created holds no reconcile: its operation is recorded, the
// condition says what is under way, the run is requeued to poll it, and
// it goes on once the operation is done.
func TestReconcileRecordsTheDatabaseOperationAndPollsIt(t *testing.T) {
	run := runtest.Run("r").Created(t0).Obj()
	f := newFakeReconcile(t, interceptor.Funcs{}, run)
	f.spanner.database = &creatingDatabase
	res, err := f.reconcile(run)
	if err != nil || res.RequeueAfter != 5*time.Second {
		t.Fatalf("reconcile while the database is created: %+v, %v; want a poll in 5 s", res, err)
	}
	got := f.run(run)
	if op := got.Status.Target.DatabaseOperation; op != creatingDatabase.Operation {
		t.Errorf("status.target.databaseOperation %q, want %q", op, creatingDatabase.Operation)
	}
	c := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.ConditionTargetReady)
	if want := creatingDatabase.Describe(run.Spec.Target.Database); c == nil || c.Message != want {
		t.Errorf("TargetReady %+v, want the message %q", c, want)
	}
	f.wantEvents("Normal " + v1alpha1.ReasonProvisioning)

	f.spanner.mu.Lock()
	f.spanner.database = nil
	f.spanner.mu.Unlock()
	if _, err := f.reconcile(got); err != nil {
		t.Fatal(err)
	}
	got = f.run(run)
	wantCondition(t, got, v1alpha1.ConditionTargetReady, metav1.ConditionTrue, v1alpha1.ReasonTargetAvailable)
	if op := got.Status.Target.DatabaseOperation; op != "" {
		t.Errorf("status.target.databaseOperation %q after the operation finished, want none", op)
	}
	f.wantEvents("Normal " + v1alpha1.ReasonTargetAvailable) // Provisioning only once
}

// TestReconcileEphemeralRunHoldsItsFinalizerBeforeItsInstanceExists: the finalizer
// is stored before the instance is asked for, so that no instance can
// exist without a run to delete it; a failure to store it is retried
// before any instance is created.
func TestReconcileEphemeralRunHoldsItsFinalizerBeforeItsInstanceExists(t *testing.T) {
	run := runtest.Run("r").Created(t0).Ephemeral().Obj()
	f := newFakeReconcile(t, interceptor.Funcs{}, run)
	f.spanner.stored = f.stored
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	if !contains(f.spanner.finalizersSeen, v1alpha1.FinalizerInstance) {
		t.Errorf("the instance was asked for while the run's finalizers were %q", f.spanner.finalizersSeen)
	}

	run = runtest.Run("r2").Created(t0).Ephemeral().Obj()
	fl := &failing{obj: &v1alpha1.BenchmarkRun{}, err: errAPIDown}
	f = newFakeReconcile(t, interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		if err := fl.hit(obj); err != nil {
			return err
		}
		return c.Patch(ctx, obj, patch, opts...)
	}}, run)
	res, err := f.reconcile(run)
	wantResult(t, res, err, false, true)
	if n := f.spanner.count("Instance"); n != 0 {
		t.Errorf("the instance was asked for %d times although the finalizer could not be stored", n)
	}
}

// deletingRun is an Ephemeral run being deleted, its instance created.
func deletingRun() *v1alpha1.BenchmarkRun {
	return runtest.Run("r").Created(t0).Ephemeral().Finalizers(v1alpha1.FinalizerInstance).
		DatasetLoaded(t0).InstanceCreated().Deleting(t0.Add(time.Minute)).Obj()
}

// TestReconcileDeletedEphemeralRunPaths: what the finalizer does with a run being
// deleted, by what deleting its instance answers.
func TestReconcileDeletedEphemeralRunPaths(t *testing.T) {
	for _, tc := range []struct {
		name          string
		releaseErr    error
		wantRequeue   bool
		wantErr       bool
		wantFinalizer bool
		wantEvent     string
	}{
		{name: "deleted", wantEvent: "Normal " + benchmarkrun.EventInstanceDeleted},
		{name: "not the run's: left alone", releaseErr: fmt.Errorf("bench: %w", target.ErrNotOwned),
			wantEvent: "Warning " + v1alpha1.ReasonInstanceNotOwned},
		{name: "still being created: polled", releaseErr: target.ErrStillCreating, wantRequeue: true, wantFinalizer: true,
			wantEvent: "Normal " + benchmarkrun.EventInstanceStillCreating},
		{name: "delete failed: retried", releaseErr: errors.New("unavailable (injected)"), wantErr: true, wantFinalizer: true,
			wantEvent: "Warning " + benchmarkrun.EventInstanceDeleteFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := deletingRun()
			runnerJob := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.RunnerJobName(run), Namespace: run.Namespace}}
			f := newFakeReconcile(t, interceptor.Funcs{}, run, runnerJob)
			f.spanner.releaseErr = tc.releaseErr
			res, err := f.reconcile(run)
			wantResult(t, res, err, tc.wantRequeue, tc.wantErr)
			if got := f.run(run); (got != nil) != tc.wantFinalizer {
				t.Errorf("run still held by its finalizer: %v, want %v", got != nil, tc.wantFinalizer)
			}
			if f.exists(runnerJob) {
				t.Error("the runner Job outlived the deleted run's finalizer pass")
			}
			f.wantEvents(tc.wantEvent)
		})
	}
}

// TestReconcileDeletedRunErrorsBeforeTheInstanceAreRetried: when the runners
// cannot be stopped, or the finalizer cannot be removed, the pass is
// retried with the finalizer kept.
func TestReconcileDeletedRunErrorsBeforeTheInstanceAreRetried(t *testing.T) {
	run := deletingRun()
	runnerJob := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.RunnerJobName(run), Namespace: run.Namespace}}
	fl := &failing{obj: &batchv1.Job{}, err: errAPIDown}
	f := newFakeReconcile(t, interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
		if err := fl.hit(obj); err != nil {
			return err
		}
		return c.Delete(ctx, obj, opts...)
	}}, run, runnerJob)
	res, err := f.reconcile(run)
	wantResult(t, res, err, false, true)
	if n := f.spanner.count("ReleaseInstance"); n != 0 {
		t.Errorf("the instance was deleted (%d calls) while its runners could not be stopped", n)
	}
	if f.run(run) == nil {
		t.Error("the run lost its finalizer")
	}

	run = deletingRun()
	fl = &failing{obj: &v1alpha1.BenchmarkRun{}, err: errAPIDown}
	f = newFakeReconcile(t, interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		if err := fl.hit(obj); err != nil {
			return err
		}
		return c.Patch(ctx, obj, patch, opts...)
	}}, run)
	res, err = f.reconcile(run)
	wantResult(t, res, err, false, true)
	if f.run(run) == nil {
		t.Error("the run is gone although its finalizer could not be removed")
	}
}

// TestReconcileDeletedRunWithoutOurFinalizerIsLeftAlone: a run being deleted that
// holds no instance finalizer (another finalizer keeps it) costs no
// Spanner call and no DELETE.
func TestReconcileDeletedRunWithoutOurFinalizerIsLeftAlone(t *testing.T) {
	run := runtest.Run("r").Created(t0).Finalizers("example.com/theirs").Deleting(t0).Obj()
	deletes := 0
	f := newFakeReconcile(t, interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
		deletes++
		return c.Delete(ctx, obj, opts...)
	}}, run)
	res, err := f.reconcile(run)
	wantResult(t, res, err, false, false)
	if n := f.spanner.count("ReleaseInstance"); n != 0 || deletes != 0 {
		t.Errorf("%d instance deletions and %d DELETEs for a run without the instance finalizer", n, deletes)
	}
}

// TestReconcileFinishedEphemeralRunDeletesItsInstanceThenLetsGo: wrap-up records
// the deletion in the status first, and drops the finalizer on the next
// pass; a deletion that fails is retried, one still being created polled.
func TestReconcileFinishedEphemeralRunDeletesItsInstanceThenLetsGo(t *testing.T) {
	run := runtest.Run("r").Created(t0).Ephemeral().Finalizers(v1alpha1.FinalizerInstance).InstanceCreated().
		Failed(v1alpha1.ReasonRunnerFailed, t0).Obj()
	f := newFakeReconcile(t, interceptor.Funcs{}, run)

	f.spanner.releaseErr = target.ErrStillCreating
	res, err := f.reconcile(run)
	wantResult(t, res, err, true, false)
	f.spanner.releaseErr = errors.New("unavailable (injected)")
	res, err = f.reconcile(run)
	wantResult(t, res, err, false, true)
	if got := f.run(run); got.Status.Target.DeletionTime != nil || !contains(got.Finalizers, v1alpha1.FinalizerInstance) {
		t.Fatalf("an instance not deleted yet was recorded as deleted (%v) or the finalizer dropped (%q)", got.Status.Target.DeletionTime, got.Finalizers)
	}
	f.emitted()

	f.spanner.releaseErr = nil
	res, err = f.reconcile(run)
	wantResult(t, res, err, true, false)
	got := f.run(run)
	if got.Status.Target.DeletionTime == nil || !contains(got.Finalizers, v1alpha1.FinalizerInstance) {
		t.Fatalf("after the deletion: deletionTime %v, finalizers %q; want the time recorded and the finalizer kept one more pass",
			got.Status.Target.DeletionTime, got.Finalizers)
	}
	f.wantEvents("Normal " + benchmarkrun.EventInstanceDeleted)
	res, err = f.reconcile(run)
	wantResult(t, res, err, false, false)
	if got := f.run(run); contains(got.Finalizers, v1alpha1.FinalizerInstance) {
		t.Errorf("the finalizer outlived the recorded deletion: %q", got.Finalizers)
	}
	if n := f.spanner.count("ReleaseInstance"); n != 3 {
		t.Errorf("%d instance deletions, want 3 (creating, failed, done)", n)
	}
}

// TestAnInstanceDeletionHoldsNoReconcile: with the manager's background
// Spanner calls, a finished Ephemeral run's instance deletion runs outside
// the reconcile: a deletion that hangs leaves the reconcile to return at
// once (the worker free for other runs), and once the deletion ends, the
// next pass takes its outcome and records it.
func TestAnInstanceDeletionHoldsNoReconcile(t *testing.T) {
	run := runtest.Run("r").Created(t0).Ephemeral().Finalizers(v1alpha1.FinalizerInstance).InstanceCreated().
		Failed(v1alpha1.ReasonRunnerFailed, t0).Obj()
	f := newFakeReconcile(t, interceptor.Funcs{}, run)
	f.r.SpannerCalls = benchmarkrun.NewSpannerCalls(f.clock)
	f.spanner.releaseHold = make(chan struct{})
	returned := make(chan error, 1)
	go func() {
		_, err := f.reconcile(run)
		returned <- err
	}()
	select {
	case err := <-returned:
		if err != nil {
			t.Fatalf("the pass that started the deletion: %v", err)
		}
	case <-time.After(10 * time.Second):
		close(f.spanner.releaseHold)
		t.Fatal("the reconcile waited for the instance deletion it started (10 s)")
	}
	if got := f.run(run); got.Status.Target.DeletionTime != nil {
		t.Fatalf("the deletion was recorded (%v) before it ended", got.Status.Target.DeletionTime)
	}
	close(f.spanner.releaseHold)
	ok, state := await.Until(context.Background(), await.Poll{Within: 10 * time.Second, Every: 20 * time.Millisecond}, func() (bool, string) {
		if _, err := f.reconcile(run); err != nil {
			return false, err.Error()
		}
		got := f.run(run)
		return got.Status.Target.DeletionTime != nil, fmt.Sprintf("deletionTime %v", got.Status.Target.DeletionTime)
	})
	if !ok {
		t.Fatalf("the ended deletion was not taken within 10 s: %s", state)
	}
	if n := f.spanner.count("ReleaseInstance"); n != 1 {
		t.Errorf("%d instance deletions, want 1", n)
	}
}

// TestReconcileFinishedRunStopsItsRunnersOnceAndThenLooksInTheCache: every
// reconcile of a finished run wraps it up again; the Jobs are deleted
// once, and later passes find them gone in the cache instead of sending
// DELETEs.
func TestReconcileFinishedRunStopsItsRunnersOnceAndThenLooksInTheCache(t *testing.T) {
	run := runtest.Run("r").Created(t0).RunnersReady(t0).Succeeded(t0).Obj()
	jobs := []client.Object{
		&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.RunnerJobName(run), Namespace: run.Namespace}},
		&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.LoaderJobName(run), Namespace: run.Namespace}},
	}
	var mu sync.Mutex
	deletes := 0
	f := newFakeReconcile(t, interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
		mu.Lock()
		deletes++
		mu.Unlock()
		return c.Delete(ctx, obj, opts...)
	}}, append(jobs, run)...)
	for range 3 {
		res, err := f.reconcile(run)
		wantResult(t, res, err, false, false)
	}
	if deletes != len(jobs) {
		t.Errorf("three passes over a finished run sent %d DELETEs, want %d (each Job once)", deletes, len(jobs))
	}
	for _, j := range jobs {
		if f.exists(j) {
			t.Errorf("Job %s outlived the run", j.GetName())
		}
	}
}

// TestReconcileFinishedRunThatCannotStopItsRunnersIsRetried: a DELETE that fails
// is returned, so that wrap-up is retried.
func TestReconcileFinishedRunThatCannotStopItsRunnersIsRetried(t *testing.T) {
	run := runtest.Run("r").Created(t0).Succeeded(t0).Obj()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.RunnerJobName(run), Namespace: run.Namespace}}
	fl := &failing{obj: &batchv1.Job{}, err: errAPIDown}
	f := newFakeReconcile(t, interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
		if err := fl.hit(obj); err != nil {
			return err
		}
		return c.Delete(ctx, obj, opts...)
	}}, run, job)
	res, err := f.reconcile(run)
	wantResult(t, res, err, false, true)
}

// markSucceeded writes a loader's final report into its ConfigMap, as a
// loader pod does; the one place in this file that knows the protocol.
func markSucceeded(cm *corev1.ConfigMap) {
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	maps.Copy(cm.Data, protocol.EncodeLoaderReport(protocol.LoaderReport{State: protocol.StateSucceeded}).Data)
}

// markReady writes a runner's readiness into its shard ConfigMap, as a
// runner pod does at the start barrier.
func markReady(cm *corev1.ConfigMap) {
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	maps.Copy(cm.Data, protocol.EncodeShardReport(protocol.ShardReport{Ready: t0}).Data)
}

// startTimeOf is the start time published in run's control ConfigMap, or
// "".
func startTimeOf(t *testing.T, f *fakeReconcile, run *v1alpha1.BenchmarkRun) string {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: protocol.ControlConfigMapName(run.Name), Namespace: run.Namespace}}
	if !f.exists(cm) {
		return ""
	}
	return cm.Data[protocol.KeyStartTime]
}

// runnersReady creates run's children and marks every runner ready.
func runnersReady(t *testing.T, f *fakeReconcile, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	for i := range int(run.Replicas()) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: protocol.ShardConfigMapName(run.Name, i), Namespace: run.Namespace}}
		if !f.exists(cm) {
			t.Fatalf("the run created no ConfigMap for shard %d", i)
		}
		markReady(cm)
		if err := f.stored.Update(context.Background(), cm); err != nil {
			t.Fatal(err)
		}
	}
}

// patchingFails fails Patch calls on objects like obj with err, times
// times (0: always).
func patchingFails(fl *failing) interceptor.Funcs {
	return interceptor.Funcs{Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
		if err := fl.hit(obj); err != nil {
			return err
		}
		return c.Patch(ctx, obj, patch, opts...)
	}}
}

// TestReconcileStartIsPublishedOnceEveryRunnerIsReady: the barrier
// publishes one start time; a conflict publishing it (another manager, a
// stale cache) is a requeue that publishes nothing, and the next pass
// publishes.
func TestReconcileStartIsPublishedOnceEveryRunnerIsReady(t *testing.T) {
	run := runtest.Run("r").Created(t0).DatasetLoaded(t0).Replicas(2).Obj()
	control := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: protocol.ControlConfigMapName(run.Name)}}
	fl := &failing{obj: control, times: 1,
		err: apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, control.Name, errors.New("stale (injected)"))}
	f := newFakeReconcile(t, patchingFails(fl), run)
	runnersReady(t, f, run)
	f.emitted()

	res, err := f.reconcile(run)
	wantResult(t, res, err, true, false)
	if s := startTimeOf(t, f, run); s != "" {
		t.Errorf("a conflicting publication published the start time %s", s)
	}
	wantCondition(t, f.run(run), v1alpha1.ConditionRunnersReady, metav1.ConditionFalse, v1alpha1.ReasonRunnersNotReady)

	res, err = f.reconcile(run)
	wantResult(t, res, err, true, false)
	got := f.run(run)
	wantCondition(t, got, v1alpha1.ConditionRunnersReady, metav1.ConditionTrue, v1alpha1.ReasonAllRunnersReady)
	if got.Status.StartTime == nil || formatStart(got.Status.StartTime.Time) != startTimeOf(t, f, run) {
		t.Errorf("status.startTime %v, published start %q: want the same time", got.Status.StartTime, startTimeOf(t, f, run))
	}
	f.wantEvents("Normal " + v1alpha1.ReasonAllRunnersReady)
}

// TestReconcileControlMapReadErrorIsRetried: at the barrier, a control
// ConfigMap that cannot be read publishes nothing and is retried.
func TestReconcileControlMapReadErrorIsRetried(t *testing.T) {
	run := runtest.Run("r").Created(t0).DatasetLoaded(t0).Obj()
	f := newFakeReconcile(t, interceptor.Funcs{}, run)
	runnersReady(t, f, run)
	// The pass reads the control map twice: to ensure it, then to publish.
	fl := &failing{obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: protocol.ControlConfigMapName(run.Name)}}, after: 1, err: errAPIDown}
	f.r.Client = interceptor.NewClient(f.stored, gettingFails(fl))
	res, err := f.reconcile(run)
	wantResult(t, res, err, false, true)
	if got := f.run(run); got.Status.StartTime != nil {
		t.Errorf("a start time %v was recorded although none could be published", got.Status.StartTime)
	}
}

// TestReconcileRunnerProblemsFailTheRunAtTheBarrier: a runner index the
// Job gave up on, or an image that cannot be pulled, fails the run before
// its start; runners not ready by the deadline fail it too, as
// unschedulable when a pod says so.
func TestReconcileRunnerProblemsFailTheRunAtTheBarrier(t *testing.T) {
	failedIndexes := "0"
	for _, tc := range []struct {
		name   string
		objs   func(run *v1alpha1.BenchmarkRun) []client.Object
		late   bool
		reason string
	}{
		{"runner index failed", func(run *v1alpha1.BenchmarkRun) []client.Object {
			return []client.Object{&batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.RunnerJobName(run), Namespace: run.Namespace,
				Labels: map[string]string{v1alpha1.LabelRun: run.Name}}, Status: batchv1.JobStatus{FailedIndexes: &failedIndexes}}}
		}, false, v1alpha1.ReasonRunnerFailed},
		{"image cannot be pulled", func(run *v1alpha1.BenchmarkRun) []client.Object {
			return []client.Object{runnerPod(run, corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Image: "spanbench:nope",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff"}}}}})}
		}, false, v1alpha1.ReasonRunnerImagePullFailed},
		{"not ready by the deadline", func(*v1alpha1.BenchmarkRun) []client.Object { return nil }, true, v1alpha1.ReasonRunnersNotReady},
		{"unschedulable by the deadline", func(run *v1alpha1.BenchmarkRun) []client.Object {
			return []client.Object{runnerPod(run, corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodScheduled,
				Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable}}})}
		}, true, v1alpha1.ReasonRunnersUnschedulable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := runAtBarrier()
			f := newFakeReconcile(t, interceptor.Funcs{}, append(tc.objs(run), run)...)
			if tc.late {
				f.clock.Step(24 * time.Hour)
			}
			res, err := f.reconcile(run)
			wantResult(t, res, err, true, false)
			wantCondition(t, f.run(run), v1alpha1.ConditionSucceeded, metav1.ConditionFalse, tc.reason)
			if ev := f.emitted(); !contains(ev, "Warning "+tc.reason) {
				t.Errorf("events %q lack a %s warning", ev, tc.reason)
			}
		})
	}
}

// runnerPod is a pod of run's runners with the given status.
func runnerPod(run *v1alpha1.BenchmarkRun, st corev1.PodStatus) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: run.Name + "-runners-0", Namespace: run.Namespace,
		Labels: map[string]string{v1alpha1.LabelRun: run.Name}}, Status: st}
}

// TestReconcileLoaderJobFailureFailsTheLoad: a loader Job that gave up on
// a slice, or failed as a whole, fails the run.
func TestReconcileLoaderJobFailureFailsTheLoad(t *testing.T) {
	failedIndexes := "0"
	for name, st := range map[string]batchv1.JobStatus{
		"slice failed every retry": {FailedIndexes: &failedIndexes},
		"Job failed":               {Conditions: []batchv1.JobCondition{{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "DeadlineExceeded"}}},
	} {
		t.Run(name, func(t *testing.T) {
			run := runLoading()
			job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.LoaderJobName(run), Namespace: run.Namespace,
				Labels: map[string]string{v1alpha1.LabelRun: run.Name}}, Status: st}
			f := newFakeReconcile(t, interceptor.Funcs{}, run, job)
			res, err := f.reconcile(run)
			wantResult(t, res, err, true, false)
			wantCondition(t, f.run(run), v1alpha1.ConditionSucceeded, metav1.ConditionFalse, v1alpha1.ReasonDatasetLoadFailed)
		})
	}
}

// TestReconcileAggregationReadErrorIsRetried: an aggregating run whose
// shard ConfigMaps cannot be read is retried, not failed for want of
// results.
func TestReconcileAggregationReadErrorIsRetried(t *testing.T) {
	run := runtest.Run("r").Created(t0).RunnersReady(t0).
		Condition(v1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, v1alpha1.ReasonShardsReported, t0).Obj()
	fl := &failing{obj: &corev1.ConfigMap{}, err: errAPIDown}
	f := newFakeReconcile(t, gettingFails(fl), run)
	wantErrorKeepsRunGoing(t, f, run, "a read error")
}

// shardSucceeded stores shard 0's final report with a minimal result, as
// a runner pod does when its load ends.
func shardSucceeded(t *testing.T, f *fakeReconcile, run *v1alpha1.BenchmarkRun, whole ...bool) {
	t.Helper()
	d := shardtest.Shard(run.Name, run.Spec.Workload.Resolved(), t0, 0, int(run.Replicas()))
	if len(whole) == 0 || !whole[0] {
		shardtest.Truncate(d, 1) // the fake clock stands at t0
	}
	storeShardDocument(t, f, run, d)
}

// storeShardDocument stores doc as shard 0's final report, as a runner
// pod does when its load ends.
func storeShardDocument(t *testing.T, f *fakeReconcile, run *v1alpha1.BenchmarkRun, doc *result.Document) {
	t.Helper()
	data, err := protocol.EncodeResult(doc)
	if err != nil {
		t.Fatal(err)
	}
	report := protocol.EncodeShardReport(protocol.ShardReport{Ready: t0, State: protocol.StateSucceeded, Result: data})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: protocol.ShardConfigMapName(run.Name, 0), Namespace: run.Namespace},
		Data: report.Data, BinaryData: report.BinaryData}
	if err := f.stored.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
}

// TestReconcileReportThatCannotBeWrittenLeavesPartialResults: the merged
// figures go into the status even when the report ConfigMap cannot be
// created; the run says its results are partial, and why.
func TestReconcileReportThatCannotBeWrittenLeavesPartialResults(t *testing.T) {
	for _, tc := range []struct {
		name      string
		createErr error
		reason    string
	}{
		{"written", nil, v1alpha1.ReasonCompleted},
		{"create fails", errAPIDown, v1alpha1.ReasonPartialResults},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := runtest.Run("r").Created(t0).RunnersReady(t0).
				Condition(v1alpha1.ConditionLoadCompleted, metav1.ConditionTrue, v1alpha1.ReasonShardsReported, t0).Obj()
			report := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ResultConfigMapName(run)}}
			fl := &failing{obj: report, err: tc.createErr}
			f := newFakeReconcile(t, interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if err := fl.hit(obj); err != nil {
					return err
				}
				return c.Create(ctx, obj, opts...)
			}}, run)
			shardSucceeded(t, f, run)
			res, err := f.reconcile(run)
			wantResult(t, res, err, true, false)
			got := f.run(run)
			wantCondition(t, got, v1alpha1.ConditionSucceeded, metav1.ConditionTrue, tc.reason)
			if got.Status.Overall == nil {
				t.Error("the merged figures are not in the status")
			}
			if hasReport := got.Status.Report != nil; hasReport != (tc.createErr == nil) {
				t.Errorf("status.report %+v; want one only when the report was written", got.Status.Report)
			}
		})
	}
}

// gettingFails fails Get calls as fl says; the object's name is the key's.
func gettingFails(fl *failing) interceptor.Funcs {
	return interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if obj.GetName() == "" {
			obj.SetName(key.Name)
		}
		if err := fl.hit(obj); err != nil {
			return err
		}
		return c.Get(ctx, key, obj, opts...)
	}}
}

// TestReconcileRestartedManagerReusesThePublishedStart: a start time
// already in the control ConfigMap (published before a restart, or by
// another manager) is the run's start; none other is published.
func TestReconcileRestartedManagerReusesThePublishedStart(t *testing.T) {
	run := runAtBarrier()
	f := newFakeReconcile(t, interceptor.Funcs{}, run)
	runnersReady(t, f, run)
	published := t0.Add(-time.Minute)
	control := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: protocol.ControlConfigMapName(run.Name), Namespace: run.Namespace}}
	if !f.exists(control) {
		t.Fatal("the run created no control ConfigMap")
	}
	maps.Copy(control.Data, protocol.EncodeStart(published))
	if err := f.stored.Update(context.Background(), control); err != nil {
		t.Fatal(err)
	}
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	if got := f.run(run).Status.StartTime; got == nil || !got.Time.Equal(published) {
		t.Errorf("status.startTime %v, want the start already published, %v", got, published)
	}
	if s := startTimeOf(t, f, run); s != formatStart(published) {
		t.Errorf("the published start became %s, want %s unchanged", s, formatStart(published))
	}
}

// TestReconcileReportMapReadErrorIsRetried: a run whose loader or shard
// ConfigMaps cannot be read (after they were ensured) is retried, not
// ended.
func TestReconcileReportMapReadErrorIsRetried(t *testing.T) {
	for name, tc := range map[string]struct {
		run func() *v1alpha1.BenchmarkRun
		cm  func(run string) string
	}{
		"loader map while loading": {runLoading, func(run string) string { return protocol.LoaderConfigMapName(run, 0) }},
		"shard map at the barrier": {runAtBarrier, func(run string) string { return protocol.ShardConfigMapName(run, 0) }},
	} {
		t.Run(name, func(t *testing.T) {
			run := tc.run()
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: tc.cm(run.Name)}}
			f := newFakeReconcile(t, gettingFails(&failing{obj: cm, after: 1, err: errAPIDown}), run)
			wantErrorKeepsRunGoing(t, f, run, "a read error")
		})
	}
}

// TestReconcileLoadPastItsDeadlineFailsTheRun: loaders that have not
// finished by spec.deadlines.load fail the run, saying how far they got.
func TestReconcileLoadPastItsDeadlineFailsTheRun(t *testing.T) {
	run := runLoading()
	f := newFakeReconcile(t, interceptor.Funcs{}, run)
	res, err := f.reconcile(run)
	wantResult(t, res, err, true, false)
	wantCondition(t, f.run(run), v1alpha1.ConditionDatasetLoaded, metav1.ConditionFalse, v1alpha1.ReasonLoading)
	f.clock.Step(24 * time.Hour)
	res, err = f.reconcile(run)
	wantResult(t, res, err, true, false)
	wantCondition(t, f.run(run), v1alpha1.ConditionSucceeded, metav1.ConditionFalse, v1alpha1.ReasonDeadlineExceeded)
}

// formatStart is a start time as the control ConfigMap publishes it.
func formatStart(t time.Time) string { return protocol.EncodeStart(t)[protocol.KeyStartTime] }

// TestReconcileTellsThePodsTheManagersCloudEndpoint: the control document
// carries the Cloud Spanner endpoint the manager uses (--spanner-endpoint),
// so loaders and runners reach the same regional or private endpoint; an
// emulator run's document names none (its host is in the target).
func TestReconcileTellsThePodsTheManagersCloudEndpoint(t *testing.T) {
	for name, tc := range map[string]struct {
		run  *v1alpha1.BenchmarkRun
		want string
	}{
		"Cloud Spanner": {runtest.Run("r").CloudSpanner().Created(t0).DatasetLoaded(t0).Obj(), fakeCloudEndpoint},
		"emulator":      {runAtBarrier(), ""},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFakeReconcile(t, interceptor.Funcs{}, tc.run)
			if _, err := f.reconcile(tc.run); err != nil {
				t.Fatal(err)
			}
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: protocol.ControlConfigMapName(tc.run.Name), Namespace: tc.run.Namespace}}
			if !f.exists(cm) {
				t.Fatal("the run created no control ConfigMap")
			}
			ctl, err := protocol.DecodeControl([]byte(cm.Data[protocol.KeyControl]))
			if err != nil {
				t.Fatal(err)
			}
			if ctl.SpannerEndpoint != tc.want {
				t.Errorf("the control document tells the pods SpannerEndpoint %q, want %q", ctl.SpannerEndpoint, tc.want)
			}
		})
	}
}

// TestASpannerCallStartsAfterTheStatusWriteOfTheReconcileThatTookIt: a
// reconcile that starts a Spanner call (here the instance's) has it run
// only once its status is written, so that the call's end (milliseconds
// on the emulator) does not queue the run while that reconcile is still
// writing; once the reconcile has returned, the call runs.
func TestASpannerCallStartsAfterTheStatusWriteOfTheReconcileThatTookIt(t *testing.T) {
	run := runtest.Run("r").Created(t0).Obj()
	var f *fakeReconcile
	var patches int
	var startedDuringWrite bool
	f = newFakeReconcile(t, interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
		patches++
		// A call started before the write runs at once: give it a
		// moment to show.
		ok, _ := await.Until(ctx, await.Poll{Within: time.Second, Every: 10 * time.Millisecond}, func() (bool, string) {
			return f.spanner.count("Instance") > 0, ""
		})
		startedDuringWrite = startedDuringWrite || ok
		return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
	}}, run)
	f.r.SpannerCalls = benchmarkrun.NewSpannerCalls(f.clock)
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	if patches == 0 {
		t.Fatal("the pass that started the instance call wrote no status: this test checks nothing")
	}
	if startedDuringWrite {
		t.Error("the instance call ran while the reconcile that started it was writing its status")
	}
	ok, _ := await.Until(context.Background(), await.Poll{Within: 10 * time.Second, Every: 10 * time.Millisecond}, func() (bool, string) {
		return f.spanner.count("Instance") > 0, ""
	})
	if !ok {
		t.Error("the instance call did not run within 10 s of its reconcile's end")
	}
}

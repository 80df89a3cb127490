package benchmarkrun_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/spanner/admin/instance/apiv1/instancepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/target"
)

// The instance lifecycle, against envtest and the real emulator: the
// emulator implements the instance admin API (any configuration name,
// nodes reported as 1000 processing units each, DeleteInstance), so the
// instances these scenarios check are real ones, read back through the
// admin API.

const testProject = "spanbench-test"

// ephemeralSpec is runSpec with an instance spanbench creates for the run.
func (h *harness) ephemeralSpec(name string, replicas int32) *v1alpha1.BenchmarkRun {
	run := h.runSpec(name, replicas)
	run.Spec.Target.Instance = v1alpha1.InstanceSpec{Name: "eph-" + name, Mode: v1alpha1.InstanceEphemeral,
		Config: "regional-asia-northeast1", Nodes: ptr.To[int32](2)}
	return run
}

// admin is the instance admin API of the scenario's emulator, opened once.
func (h *harness) admin() target.InstanceAdmin {
	h.t.Helper()
	if h.instanceAdmin == nil {
		a, err := target.OpenInstanceAdmin(context.Background(), endpoint.Emulator(h.emu.Host()))
		if err != nil {
			h.t.Fatal(err)
		}
		h.t.Cleanup(func() { _ = a.Close() })
		h.instanceAdmin = a
	}
	return h.instanceAdmin
}

// instance reads an instance from the emulator; nil when it does not exist.
func (h *harness) instance(id string) *instancepb.Instance {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in, err := h.admin().GetInstance(ctx, "projects/"+testProject+"/instances/"+id)
	if status.Code(err) == codes.NotFound {
		return nil
	}
	if err != nil {
		h.t.Fatal(err)
	}
	return in
}

// instances lists the ids of the project's instances on the emulator.
func (h *harness) instances() []string {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	all, err := h.admin().ListInstances(ctx, testProject, "")
	if err != nil {
		h.t.Fatal(err)
	}
	var ids []string
	for _, in := range all {
		ids = append(ids, in.GetName()[strings.LastIndexByte(in.GetName(), '/')+1:])
	}
	return ids
}

// current reads the run; nil once it is gone.
func (h *harness) current(run *v1alpha1.BenchmarkRun) *v1alpha1.BenchmarkRun {
	h.t.Helper()
	got := &v1alpha1.BenchmarkRun{}
	err := h.c.Get(context.Background(), client.ObjectKeyFromObject(run), got)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		h.t.Fatal(err)
	}
	return got
}

func (h *harness) create(run *v1alpha1.BenchmarkRun) {
	h.t.Helper()
	if err := h.c.Create(context.Background(), run); err != nil {
		h.t.Fatal(err)
	}
}

// instanceReady waits until the run's status records its instance READY.
func (h *harness) instanceReady(run *v1alpha1.BenchmarkRun) *v1alpha1.BenchmarkRun {
	h.t.Helper()
	var got *v1alpha1.BenchmarkRun
	h.eventually("the run's instance is READY", 20*time.Second, func() bool {
		got = h.current(run)
		return got != nil && got.Status.Target != nil && got.Status.Target.InstanceState == "READY"
	})
	return got
}

// TestEphemeralRunCreatesItsInstanceRunsAndDeletesIt: the instance has the
// requested configuration and node count and the run's labels while the
// run loads and runs, and is gone once the run has succeeded.
func TestEphemeralRunCreatesItsInstanceRunsAndDeletesIt(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.ephemeralSpec("eph", 2)
	h.create(run)
	runners := h.kubelet(run, 0, 1)
	cur := h.instanceReady(run)

	in := h.instance("eph-eph")
	if in == nil {
		t.Fatal("the run's status says its instance is READY, but the emulator has no instance eph-eph")
	}
	if in.GetConfig() != "projects/spanbench-test/instanceConfigs/regional-asia-northeast1" || in.GetNodeCount() != 2 || in.GetProcessingUnits() != 2000 {
		t.Errorf("instance has config %s, %d nodes, %d processing units; the run asked for regional-asia-northeast1 and 2 nodes",
			in.GetConfig(), in.GetNodeCount(), in.GetProcessingUnits())
	}
	wantLabels := target.Owner{Cluster: harnessClusterID, Namespace: h.ns, Run: run.Name, UID: string(cur.UID)}.Labels()
	if !maps.Equal(in.GetLabels(), wantLabels) {
		t.Errorf("instance labels %v; want %v, tying it to the run", in.GetLabels(), wantLabels)
	}
	if !controllerutil.ContainsFinalizer(cur, v1alpha1.FinalizerInstance) {
		t.Errorf("the run has finalizers %v; an Ephemeral run must hold %s while its instance exists", cur.Finalizers, v1alpha1.FinalizerInstance)
	}

	got := h.finished(run, 90*time.Second)
	runners.Wait()
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue {
		t.Fatalf("run ended %s/%s: %s", c.Status, c.Reason, c.Message)
	}
	h.eventually("the instance is deleted, the deletion recorded and the finalizer removed", 20*time.Second, func() bool {
		got = h.current(run)
		return h.instance("eph-eph") == nil && !controllerutil.ContainsFinalizer(got, v1alpha1.FinalizerInstance)
	})
	ts := got.Status.Target
	if ts == nil || !ts.Created || ts.InstanceConfig != "regional-asia-northeast1" || ptr.Deref(ts.Nodes, 0) != 2 ||
		ptr.Deref(ts.ProcessingUnits, 0) != 2000 || ts.DeletionTime == nil {
		t.Errorf("status.target = %+v; want created, regional-asia-northeast1, 2 nodes, 2000 processing units, and a deletion time", ts)
	}
	if env := got.Status.Environment; env == nil || ptr.Deref(env.ProcessingUnits, 0) != 2000 || env.InstanceConfig != "regional-asia-northeast1" {
		t.Errorf("status.environment = %+v; want the instance as Spanner reported it", env)
	}
	if ds := got.Status.Dataset; ds == nil || ds.Source != v1alpha1.DatasetLoaded || ds.Loaded != 300 || ds.Rows != 300 || ds.SchemaHash == "" || ds.Table != "usertable" {
		t.Errorf("status.dataset = %+v; want 300 of 300 rows of usertable loaded by the run, with the schema hash", ds)
	}
	h.wantEvents(run, benchmarkrun.EventInstanceCreated, benchmarkrun.EventInstanceDeleted)
}

// wantEvents waits until the run has events of every reason.
func (h *harness) wantEvents(run *v1alpha1.BenchmarkRun, reasons ...string) {
	h.t.Helper()
	var seen map[string]bool
	h.eventually("events "+strings.Join(reasons, ", ")+" are recorded", 10*time.Second, func() bool {
		events := &corev1.EventList{}
		if err := h.c.List(context.Background(), events, client.InNamespace(h.ns)); err != nil {
			return false
		}
		seen = map[string]bool{}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == run.Name {
				seen[e.Reason] = true
			}
		}
		for _, r := range reasons {
			if !seen[r] {
				return false
			}
		}
		return true
	})
}

// TestDeletedEphemeralRunDeletesItsInstance deletes a run while its
// runners send load.
func TestDeletedEphemeralRunDeletesItsInstance(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.ephemeralSpec("midway", 2)
	run.Spec.Workload.Duration = &metav1.Duration{Duration: 10 * time.Second}
	h.create(run)
	h.kubelet(run, 0, 1)
	h.eventually("the run starts", 30*time.Second, func() bool {
		cur := h.current(run)
		return cur != nil && cur.Status.StartTime != nil
	})
	if h.instance("eph-midway") == nil {
		t.Fatal("the running run has no instance")
	}
	if err := h.c.Delete(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	h.eventually("the instance and the run are gone", 30*time.Second, func() bool {
		return h.instance("eph-midway") == nil && h.current(run) == nil
	})
}

// TestFinalizerDeletesTheInstanceOfARunDeletedWhileTheManagerWasDown: the
// run is deleted while no manager runs; its finalizer keeps it until a new
// manager has deleted the instance.
func TestFinalizerDeletesTheInstanceOfARunDeletedWhileTheManagerWasDown(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.ephemeralSpec("orphaned", 1)
	h.create(run)
	h.instanceReady(run)
	h.stopManager()

	if err := h.c.Delete(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	if cur := h.current(run); cur == nil || cur.DeletionTimestamp == nil {
		t.Fatalf("the deleted run is %v; its finalizer should hold it until the instance is deleted", cur)
	}
	if h.instance("eph-orphaned") == nil {
		t.Fatal("the instance vanished without a manager")
	}

	h.startManager(benchmarkrun.SpannerPreparer{})
	h.eventually("the restarted manager deletes the instance and releases the run", 30*time.Second, func() bool {
		return h.instance("eph-orphaned") == nil && h.current(run) == nil
	})
}

// TestOrphanedLabelledInstanceIsSwept: an instance labelled for a run that
// no longer exists is deleted by the sweep; the live run's instance, an
// instance of another cluster and an unlabelled one are left alone.
func TestOrphanedLabelledInstanceIsSwept(t *testing.T) {
	h := newHarness(t)
	sweeper := &benchmarkrun.InstanceSweeper{Interval: 500 * time.Millisecond, CallTimeout: 5 * time.Second}
	h.startManagerWith(managerOptions{preparer: benchmarkrun.SpannerPreparer{}, sweep: sweeper})
	// A live Ephemeral run: its instance must survive the sweep. It also
	// makes the emulator known to the sweep.
	live := h.ephemeralSpec("live", 1)
	h.create(live)
	h.instanceReady(live)

	ghost := target.Owner{Cluster: harnessClusterID, Namespace: h.ns, Run: "ghost", UID: "00000000-0000-4000-8000-000000000001"}
	otherCluster := ghost
	otherCluster.Cluster = "another-cluster"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := h.admin()
	for id, labels := range map[string]map[string]string{"orphan": ghost.Labels(), "other-cluster": otherCluster.Labels(), "hand-made": {"team": "perf"}} {
		err := admin.CreateInstance(ctx, &instancepb.CreateInstanceRequest{Parent: "projects/" + testProject, InstanceId: id,
			Instance: &instancepb.Instance{Config: "projects/" + testProject + "/instanceConfigs/asia1", DisplayName: "sweep-" + id, NodeCount: 1, Labels: labels}})
		if err != nil {
			t.Fatal(err)
		}
	}
	h.eventually("the orphan is swept", 20*time.Second, func() bool { return h.instance("orphan") == nil })
	// One more whole sweep, done here, must find nothing else to delete.
	if n := sweeper.Sweep(ctx); n != 0 {
		t.Errorf("a sweep after the orphan was gone deleted %d instances; want 0", n)
	}
	for _, id := range []string{"eph-live", "other-cluster", "hand-made"} {
		if h.instance(id) == nil {
			t.Errorf("the sweep deleted instance %s, which it must leave alone", id)
		}
	}
	h.eventually("the sweep's event is recorded", 10*time.Second, func() bool {
		events := &corev1.EventList{}
		_ = h.c.List(context.Background(), events, client.MatchingFields{"reason": benchmarkrun.EventOrphanInstanceDeleted})
		for _, e := range events.Items {
			if e.InvolvedObject.Name == h.ns && strings.Contains(e.Message, "orphan") && strings.Contains(e.Message, "ghost") {
				return true
			}
		}
		return false
	})
}

// TestExistingInstanceIsNeverModified runs on an instance someone made,
// with a spec that names another configuration and size: the instance is
// used as it is, recorded as it is, and kept.
func TestExistingInstanceIsNeverModified(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	labels := map[string]string{"team": "perf"}
	if err := h.admin().CreateInstance(ctx, &instancepb.CreateInstanceRequest{Parent: "projects/" + testProject, InstanceId: "shared",
		Instance: &instancepb.Instance{Config: "projects/" + testProject + "/instanceConfigs/asia1", DisplayName: "shared", NodeCount: 3, Labels: labels}}); err != nil {
		t.Fatal(err)
	}
	before := h.instance("shared")
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.runSpec("existing", 1)
	run.Spec.Target.Instance = v1alpha1.InstanceSpec{Name: "shared", Mode: v1alpha1.InstanceExisting, Config: "regional-asia-northeast1", Nodes: ptr.To[int32](1)}
	h.create(run)
	h.kubelet(run, 0)
	got := h.finished(run, 90*time.Second)
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue {
		t.Fatalf("run ended %s/%s: %s", c.Status, c.Reason, c.Message)
	}
	h.eventually("the ended run is wrapped up (its runner Job deleted)", 10*time.Second, func() bool {
		job := &batchv1.Job{}
		err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: v1alpha1.RunnerJobName(run)}, job)
		return err != nil || job.DeletionTimestamp != nil
	})
	after := h.instance("shared")
	if after == nil {
		t.Fatal("the Existing instance was deleted")
	}
	if after.GetConfig() != before.GetConfig() || after.GetNodeCount() != 3 || after.GetProcessingUnits() != 3000 || !maps.Equal(after.GetLabels(), labels) {
		t.Errorf("the Existing instance changed: %v -> %v", before, after)
	}
	ts := got.Status.Target
	if ts == nil || ts.Created || ts.InstanceConfig != "asia1" || ptr.Deref(ts.Nodes, 0) != 3 || ptr.Deref(ts.ProcessingUnits, 0) != 3000 || ts.DeletionTime != nil {
		t.Errorf("status.target = %+v; want the instance as it is (asia1, 3 nodes, 3000 processing units), not created, not deleted", ts)
	}
	if env := got.Status.Environment; env == nil || env.InstanceConfig != "asia1" || ptr.Deref(env.Nodes, 0) != 3 {
		t.Errorf("status.environment = %+v; want the real instance (asia1, 3 nodes), not the spec's", env)
	}
	if len(got.Finalizers) > 0 {
		t.Errorf("an Existing run holds finalizers %v", got.Finalizers)
	}
}

// TestSecondRunOnTheSameDatabaseSkipsLoading runs twice on one database:
// the second finds the marker and creates no loaders.
func TestSecondRunOnTheSameDatabaseSkipsLoading(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	first := h.runSpec("first", 1)
	h.create(first)
	h.kubelet(first, 0)
	if got := h.finished(first, 90*time.Second); got.Status.Dataset == nil || got.Status.Dataset.Source != v1alpha1.DatasetLoaded {
		t.Fatalf("the first run's dataset is %+v; want loaded by the run", got.Status.Dataset)
	}

	second := h.runSpec("second", 1)
	h.create(second)
	h.kubelet(second, 0)
	got := h.finished(second, 90*time.Second)
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue {
		t.Fatalf("second run ended %s/%s: %s", c.Status, c.Reason, c.Message)
	}
	if c := h.condition(got, v1alpha1.ConditionDatasetLoaded); c.Reason != v1alpha1.ReasonDatasetReady || !strings.Contains(c.Message, "already holds") {
		t.Errorf("DatasetLoaded is %s %q; want DatasetReady saying the database already holds the dataset", c.Reason, c.Message)
	}
	if ds := got.Status.Dataset; ds == nil || ds.Source != v1alpha1.DatasetExisting || ds.Loaded != 300 {
		t.Errorf("status.dataset = %+v; want source Existing with 300 rows", ds)
	}
	// Loader maps stay until the run is deleted: none means no loader ran.
	if cm := h.configMap(protocol.LoaderConfigMapName(second.Name, 0)); cm != nil {
		t.Errorf("the second run created loader map %s; it should not load", cm.Name)
	}
	if cm := h.configMap(protocol.LoaderConfigMapName(first.Name, 0)); cm == nil {
		t.Error("the first run has no loader map; the check above proves nothing")
	}
}

// TestMismatchedDatasetIsRefused: a run asking for another row count on a
// loaded database fails with DatasetMismatch and creates no runners.
func TestMismatchedDatasetIsRefused(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	first := h.runSpec("loaded", 1)
	h.create(first)
	h.kubelet(first, 0)
	h.finished(first, 90*time.Second)

	other := h.runSpec("other", 1)
	other.Spec.Workload.Dataset.Rows = ptr.To[int64](500)
	h.create(other)
	got := h.finished(other, 30*time.Second)
	c := h.condition(got, v1alpha1.ConditionSucceeded)
	if c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonDatasetMismatch || !strings.Contains(c.Message, "dataset.reload") {
		t.Fatalf("run ended %s/%s %q; want False/DatasetMismatch naming spec.workload.dataset.reload", c.Status, c.Reason, c.Message)
	}
	if cm := h.configMap(protocol.ControlConfigMapName(other.Name)); cm != nil {
		t.Errorf("a refused run created its control map")
	}
}

// TestGuardrailsRefuseAnEphemeralRunBeforeAnyInstanceIsCreated asks for a
// configuration the operator does not allow, and for an instance that
// could outlive --max-ephemeral-duration.
func TestGuardrailsRefuseAnEphemeralRunBeforeAnyInstanceIsCreated(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	multi := h.ephemeralSpec("multi", 1)
	multi.Spec.Target.Instance.Config = "nam-eur-asia1"
	long := h.ephemeralSpec("long", 1)
	long.Spec.Deadlines.Load = &metav1.Duration{Duration: 4 * time.Hour}
	for run, flag := range map[*v1alpha1.BenchmarkRun]string{multi: "--allowed-instance-configs", long: "--max-ephemeral-duration"} {
		h.create(run)
		got := h.finished(run, 20*time.Second)
		if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Reason != v1alpha1.ReasonLimitExceeded || !strings.Contains(c.Message, flag) {
			t.Errorf("run %s ended %s %q; want LimitExceeded naming %s", run.Name, c.Reason, c.Message, flag)
		}
		if len(got.Finalizers) > 0 || got.Status.Target != nil {
			t.Errorf("run %s was refused but has finalizers %v and status.target %+v", run.Name, got.Finalizers, got.Status.Target)
		}
	}
	if ids := h.instances(); len(ids) > 0 {
		t.Errorf("refused runs left instances %v", ids)
	}
}

// fakeInstanceAdminForTest is the real instance admin API of the emulator
// with the failures of a real project injected per instance id: errors the
// emulator cannot produce (quota, permission, unknown configuration), an
// instance that never becomes READY, and a creation that Spanner accepts
// and fails minutes later (the emulator finishes every creation at once).
type fakeInstanceAdminForTest struct {
	target.InstanceAdmin
	faults *sync.Map // instance id -> fault
	// creations stands in for Spanner's memory of creations: it outlives
	// the admin clients, and the managers, of a scenario.
	creations *fakeCreations
}

type fault struct {
	create       error // CreateInstance fails so
	staysCreated bool  // GetInstance says CREATING forever
	// failsLate: CreateInstance is accepted and its operation left
	// running until the test calls fakeCreations.finish; it then fails
	// with this status. Meanwhile the instance reads CREATING and its id
	// is taken (a second CreateInstance is AlreadyExists); once failed it
	// is gone. That is Cloud Spanner's contract (CreateInstance's doc);
	// the emulator never shows it.
	failsLate *status.Status
	// createsUnseen: CreateInstance is accepted and its operation left
	// running until fakeCreations.finish, and meanwhile the instance does
	// not show at all (GetInstance is NotFound), as in the moment after
	// Spanner accepted a creation; it then succeeds, and the instance
	// exists.
	createsUnseen bool
}

// fakeCreations records the creations the fake was asked for, and the
// operations it left running.
type fakeCreations struct {
	mu      sync.Mutex
	started map[string]int     // instance id -> CreateInstance calls
	ops     map[string]*fakeOp // operation name -> state
	last    map[string]*fakeOp // instance id -> its last operation
}

type fakeOp struct {
	name     string
	req      *instancepb.CreateInstanceRequest
	instance *instancepb.Instance // as requested, CREATING
	err      error                // the creation's result once done
	hidden   bool                 // not shown while running
	done     bool
	made     bool // succeeded, and created in the emulator
	polls    int
}

func newFakeCreations() *fakeCreations {
	return &fakeCreations{started: map[string]int{}, ops: map[string]*fakeOp{}, last: map[string]*fakeOp{}}
}

// count is how many times CreateInstance was called for the instance.
func (c *fakeCreations) count(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started[id]
}

// polled is the instance's last operation and how often it was polled.
func (c *fakeCreations) polled(id string) (operation string, polls int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if op := c.last[id]; op != nil {
		return op.name, op.polls
	}
	return "", 0
}

// finish ends the instance's running operation with its late error.
func (c *fakeCreations) finish(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if op := c.last[id]; op != nil {
		op.done = true
	}
}

// running is the instance's operation still running; nil if none.
func (c *fakeCreations) running(id string) *fakeOp {
	c.mu.Lock()
	defer c.mu.Unlock()
	if op := c.last[id]; op != nil && !op.done {
		return op
	}
	return nil
}

func (f fakeInstanceAdminForTest) fault(name string) fault {
	v, _ := f.faults.Load(name[strings.LastIndexByte(name, '/')+1:])
	flt, _ := v.(fault)
	return flt
}

func (f fakeInstanceAdminForTest) StartCreateInstance(ctx context.Context, req *instancepb.CreateInstanceRequest) (string, error) {
	id, c := req.GetInstanceId(), f.creations
	c.mu.Lock()
	c.started[id]++
	n := c.started[id]
	c.mu.Unlock()

	flt := f.fault(id)
	if flt.create != nil {
		return "", flt.create
	}
	if flt.failsLate == nil && !flt.createsUnseen {
		return f.InstanceAdmin.StartCreateInstance(ctx, req)
	}
	if c.running(id) != nil {
		return "", status.Errorf(codes.AlreadyExists, "Instance already exists: %s/instances/%s", req.GetParent(), id)
	}
	in := proto.CloneOf(req.GetInstance())
	in.State = instancepb.Instance_CREATING
	op := &fakeOp{name: fmt.Sprintf("%s/instances/%s/operations/fake-%d", req.GetParent(), id, n), req: req, instance: in,
		err: flt.failsLate.Err(), hidden: flt.createsUnseen}
	c.mu.Lock()
	c.ops[op.name], c.last[id] = op, op
	c.mu.Unlock()
	return op.name, nil
}

func (f fakeInstanceAdminForTest) PollCreateInstance(ctx context.Context, operation string) (bool, error) {
	c := f.creations
	c.mu.Lock()
	defer c.mu.Unlock()
	op, ok := c.ops[operation]
	if !ok {
		return f.InstanceAdmin.PollCreateInstance(ctx, operation)
	}
	op.polls++
	if !op.done {
		return false, nil
	}
	if op.err == nil && !op.made {
		if err := f.InstanceAdmin.CreateInstance(ctx, op.req); err != nil {
			return false, err
		}
		op.made = true
	}
	return true, op.err
}

func (f fakeInstanceAdminForTest) GetInstance(ctx context.Context, name string) (*instancepb.Instance, error) {
	if op := f.creations.running(name[strings.LastIndexByte(name, '/')+1:]); op != nil {
		if op.hidden {
			return nil, status.Errorf(codes.NotFound, "Instance not found: %s", name)
		}
		return proto.CloneOf(op.instance), nil
	}
	in, err := f.InstanceAdmin.GetInstance(ctx, name)
	if err == nil && f.fault(name).staysCreated {
		in.State = instancepb.Instance_CREATING
	}
	return in, err
}

// fakePreparer is the real preparer over fakeInstanceAdminForTest, whose
// faults and creations the scenario sets and reads.
func fakePreparer(faults *sync.Map, creations *fakeCreations) benchmarkrun.SpannerPreparer {
	open := func(ctx context.Context, ep endpoint.Endpoint) (target.InstanceAdmin, error) {
		real, err := target.OpenInstanceAdmin(ctx, ep)
		if err != nil {
			return nil, err
		}
		return fakeInstanceAdminForTest{InstanceAdmin: real, faults: faults, creations: creations}, nil
	}
	return benchmarkrun.SpannerPreparer{OpenInstanceAdmin: open}
}

// TestActionableTargetErrorsLeaveNothingBehind: each failure of a real
// project becomes a reason a user can act on, and the run ends with no
// instance left and no finalizer.
func TestActionableTargetErrorsLeaveNothingBehind(t *testing.T) {
	h := newHarness(t)
	faults := &sync.Map{}
	h.startManager(fakePreparer(faults, newFakeCreations()))
	cases := []struct {
		name, reason, says string
		fault              fault
	}{
		{"quota", v1alpha1.ReasonQuotaExceeded, "Quota exceeded", fault{create: status.Error(codes.ResourceExhausted, "Quota exceeded for quota metric 'Nodes' in region asia-northeast1")}},
		{"denied", v1alpha1.ReasonPermissionDenied, "spanner.instances.create", fault{create: status.Error(codes.PermissionDenied, "Permission 'spanner.instances.create' denied")}},
		{"noconfig", v1alpha1.ReasonInstanceConfigNotFound, "configuration", fault{create: status.Error(codes.NotFound, "Instance config not found")}},
		{"slow", v1alpha1.ReasonInstanceNotReady, "still CREATING", fault{staysCreated: true}},
	}
	runs := map[string]*v1alpha1.BenchmarkRun{}
	for _, tc := range cases {
		run := h.ephemeralSpec(tc.name, 1)
		run.Spec.Deadlines.Prepare = &metav1.Duration{Duration: 4 * time.Second}
		faults.Store(run.Spec.Target.Instance.Name, tc.fault)
		h.create(run)
		runs[tc.name] = run
	}
	for _, tc := range cases {
		got := h.finished(runs[tc.name], 30*time.Second)
		if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Reason != tc.reason || !strings.Contains(c.Message, tc.says) {
			t.Errorf("%s: run ended %s %q; want %s saying %q", tc.name, c.Reason, c.Message, tc.reason, tc.says)
		}
	}
	h.eventually("every failed run released its finalizer and left no instance", 30*time.Second, func() bool {
		for _, run := range runs {
			if cur := h.current(run); cur == nil || len(cur.Finalizers) > 0 {
				return false
			}
		}
		return len(h.instances()) == 0
	})
	if got := h.current(runs["slow"]); got.Status.Target == nil || got.Status.Target.DeletionTime == nil {
		t.Errorf("the instance that never became READY was created; status.target %+v should record its deletion", got.Status.Target)
	}
}

// lateQuota is the error of a creation Spanner accepted and then refused.
var lateQuota = status.New(codes.ResourceExhausted, "Quota exceeded for quota metric 'Nodes' and limit 'Nodes per project per region' in region asia-northeast1")

// runWithCreationRunning starts a manager over fakeInstanceAdminForTest
// and an Ephemeral run whose instance creation has flt, and waits until
// the creation is running (creationRunning). The faults and creations
// outlive the manager, for a scenario that restarts it.
func (h *harness) runWithCreationRunning(name string, flt fault) (*v1alpha1.BenchmarkRun, *sync.Map, *fakeCreations) {
	h.t.Helper()
	faults, creations := &sync.Map{}, newFakeCreations()
	h.startManager(fakePreparer(faults, creations))
	run := h.ephemeralSpec(name, 1)
	faults.Store(run.Spec.Target.Instance.Name, flt)
	h.create(run)
	h.creationRunning(run, creations)
	return run, faults, creations
}

// creationRunning waits until the run records its instance CREATING with
// the operation the fake started, and the manager has polled it.
func (h *harness) creationRunning(run *v1alpha1.BenchmarkRun, creations *fakeCreations) {
	h.t.Helper()
	id := run.Spec.Target.Instance.Name
	h.eventually("status.target.createOperation records the running creation, and the manager polls it", 20*time.Second, func() bool {
		cur := h.current(run)
		op, polls := creations.polled(id)
		return op != "" && polls > 0 && cur != nil && cur.Status.Target != nil && cur.Status.Target.InstanceState == "CREATING" &&
			cur.Status.Target.CreateOperation == op
	})
}

// failedLate checks a run whose creation failed late: it failed with
// QuotaExceeded and Spanner's message, CreateInstance was called once,
// and nothing is left (no instance, no finalizer, the deletion recorded).
func (h *harness) failedLate(run *v1alpha1.BenchmarkRun, creations *fakeCreations) {
	h.t.Helper()
	var got *v1alpha1.BenchmarkRun
	h.eventually("the run ends; a creation that failed after CreateWait must end it, not leave it CREATING until spec.deadlines.prepare",
		30*time.Second, func() bool {
			got = h.current(run)
			return got != nil && got.IsFinished()
		})
	c := h.condition(got, v1alpha1.ConditionSucceeded)
	if c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonQuotaExceeded || !strings.Contains(c.Message, lateQuota.Message()) {
		h.t.Errorf("run ended %s/%s %q; want False/QuotaExceeded with Spanner's error %q: a creation that fails after CreateWait "+
			"must fail the run with its own error, not be retried until spec.deadlines.prepare", c.Status, c.Reason, c.Message, lateQuota.Message())
	}
	if n := creations.count(run.Spec.Target.Instance.Name); n != 1 {
		h.t.Errorf("CreateInstance was called %d times; want 1: while the creation runs the manager must poll its operation, not create again", n)
	}
	h.eventually("the failed run released its finalizer and left no instance", 30*time.Second, func() bool {
		cur := h.current(run)
		return cur != nil && len(cur.Finalizers) == 0 && len(h.instances()) == 0
	})
	if ts := h.current(run).Status.Target; ts == nil || ts.DeletionTime == nil {
		h.t.Errorf("status.target = %+v; the wrap-up should record that the instance is gone", ts)
	}
}

// TestEphemeralCreationThatFailsLateFailsTheRunWithSpannersError: Spanner
// accepts the creation, is still working on it after CreateWait, and then
// refuses it for quota. The run fails at once with QuotaExceeded and
// Spanner's message, without a second CreateInstance.
func TestEphemeralCreationThatFailsLateFailsTheRunWithSpannersError(t *testing.T) {
	h := newHarness(t)
	run, _, creations := h.runWithCreationRunning("late", fault{failsLate: lateQuota})
	creations.finish(run.Spec.Target.Instance.Name)
	h.failedLate(run, creations)
}

// TestEphemeralCreationThatFailsLateWhileTheManagerIsDown: the manager
// stops while the creation runs and the creation fails meanwhile; the new
// manager knows the creation only from status.target.createOperation, and
// fails the run with Spanner's error instead of creating the instance
// again.
func TestEphemeralCreationThatFailsLateWhileTheManagerIsDown(t *testing.T) {
	h := newHarness(t)
	run, faults, creations := h.runWithCreationRunning("restart", fault{failsLate: lateQuota})
	h.stopManager()
	creations.finish(run.Spec.Target.Instance.Name)
	h.startManager(fakePreparer(faults, creations))
	h.failedLate(run, creations)
}

// TestRunDeletedWhileItsInstanceIsCreatedDeletesItOnceItShows: a run
// deleted in the moment after Spanner accepted its instance's creation,
// before the instance shows, keeps its finalizer until the creation is
// done, and the instance that then appears is deleted. Taking "not found"
// for "gone" would leave it costing until the orphan sweep.
func TestRunDeletedWhileItsInstanceIsCreatedDeletesItOnceItShows(t *testing.T) {
	h := newHarness(t)
	run, _, creations := h.runWithCreationRunning("unseen", fault{createsUnseen: true})
	if err := h.c.Delete(context.Background(), h.current(run)); err != nil {
		t.Fatal(err)
	}
	h.wantEvents(run, benchmarkrun.EventInstanceStillCreating)
	if cur := h.current(run); cur == nil || len(cur.Finalizers) == 0 {
		t.Fatal("the run was let go while its instance was still being created: the instance would appear with nobody to delete it")
	}
	creations.finish(run.Spec.Target.Instance.Name)
	h.eventually("the run is gone and the instance that appeared is deleted", 30*time.Second, func() bool {
		return h.current(run) == nil && len(h.instances()) == 0
	})
}

// TestSplitPointsAreSkippedOnTheEmulatorAndTheRunGoesOn: the emulator has
// no AddSplitPoints; the run records it and succeeds.
func TestSplitPointsAreSkippedOnTheEmulatorAndTheRunGoesOn(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.runSpec("warm", 1)
	run.Spec.Target.SplitPoints = &v1alpha1.SplitPointsSpec{Count: ptr.To[int32](3)}
	h.create(run)
	h.kubelet(run, 0)
	got := h.finished(run, 90*time.Second)
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue {
		t.Fatalf("run ended %s/%s: %s", c.Status, c.Reason, c.Message)
	}
	c := h.condition(got, v1alpha1.ConditionSplitPointsApplied)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != v1alpha1.ReasonSplitPointsSkipped || !strings.Contains(c.Message, "AddSplitPoints") {
		t.Fatalf("SplitPointsApplied = %+v; want False/SplitPointsSkipped naming AddSplitPoints", c)
	}
	if sp := got.Status.Target.SplitPoints; sp == nil || sp.Requested != 3 || sp.Added != 0 {
		t.Errorf("status.target.splitPoints = %+v; want 3 requested, 0 added", sp)
	}
}

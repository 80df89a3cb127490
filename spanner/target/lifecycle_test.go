package target

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/spanner/admin/instance/apiv1/instancepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/spanbench/spanbench/internal/emulatortest"
	"github.com/spanbench/spanbench/spanner/emulator"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/workload"
)

func openAdmin(t *testing.T, e *emulator.Emulator) (context.Context, InstanceAdmin) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	a, err := OpenInstanceAdmin(ctx, endpoint.Emulator(e.Host()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return ctx, a
}

var owner = Owner{Cluster: "c1", Namespace: "team-a", Run: "nightly-asia1", UID: "0b9d7f4e-2c1a-4f7e-9b1e-7d2f0c8a9e11"}

// TestEnsureOwnedCreatesAdoptsAndRefuses walks an ephemeral instance's
// life on the emulator: created with the requested config, size and the
// owner's labels; found again (a restarted manager) without a second
// creation; refused to another owner; deleted only by its owner.
func TestEnsureOwnedCreatesAdoptsAndRefuses(t *testing.T) {
	ctx, a := openAdmin(t, emulatortest.Start(t))
	in := Instance{Project: "spanbench-test", Instance: "eph", Config: "nam-eur-asia1", Nodes: 3, Edition: "ENTERPRISE_PLUS"}

	info, err := EnsureOwned(ctx, a, in, owner, "")
	if err != nil {
		t.Fatal(err)
	}
	if !info.Created || info.Config != "nam-eur-asia1" || info.Nodes != 3 || info.ProcessingUnits != 3000 {
		t.Errorf("created instance reads %+v; want created, nam-eur-asia1, 3 nodes, 3000 processing units", info)
	}
	got, err := Describe(ctx, a, "spanbench-test", "eph")
	if err != nil || !got.Ready() || !maps.Equal(got.Labels, owner.Labels()) {
		t.Fatalf("Describe = %+v, %v; want READY with the owner's labels %v", got, err, owner.Labels())
	}

	again, err := EnsureOwned(ctx, a, in, owner, "")
	if err != nil || again.Created {
		t.Errorf("a second EnsureOwned by the same owner: created=%v err=%v; want adopted", again.Created, err)
	}

	other := owner
	other.UID = "ffffffff-2c1a-4f7e-9b1e-7d2f0c8a9e11"
	if _, err := EnsureOwned(ctx, a, in, other, ""); !errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), owner.UID) {
		t.Errorf("EnsureOwned by another owner: %v; want ErrNotOwned naming the owner", err)
	}
	if err := DeleteOwned(ctx, a, "spanbench-test", "eph", other, ""); !errors.Is(err, ErrNotOwned) {
		t.Errorf("DeleteOwned by another owner: %v; want ErrNotOwned", err)
	}
	if _, err := Describe(ctx, a, "spanbench-test", "eph"); err != nil {
		t.Fatalf("another owner's DeleteOwned removed the instance: %v", err)
	}

	if err := DeleteOwned(ctx, a, "spanbench-test", "eph", owner, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := Describe(ctx, a, "spanbench-test", "eph"); !errors.Is(err, ErrInstanceNotFound) {
		t.Errorf("after DeleteOwned: %v; want ErrInstanceNotFound", err)
	}
	if err := DeleteOwned(ctx, a, "spanbench-test", "eph", owner, ""); err != nil {
		t.Errorf("deleting an absent instance: %v; want nil (it is gone)", err)
	}
}

// TestEnsureOwnedNeverTakesAnUnlabelledInstance: an instance someone made
// by hand under the same name is neither adopted nor deleted.
func TestEnsureOwnedNeverTakesAnUnlabelledInstance(t *testing.T) {
	ctx, a := openAdmin(t, emulatortest.Start(t))
	if err := a.CreateInstance(ctx, &instancepb.CreateInstanceRequest{Parent: "projects/p-test", InstanceId: "theirs",
		Instance: &instancepb.Instance{Config: "projects/p-test/instanceConfigs/asia1", DisplayName: "theirs", NodeCount: 1}}); err != nil {
		t.Fatal(err)
	}
	_, err := EnsureOwned(ctx, a, Instance{Project: "p-test", Instance: "theirs", Config: "asia1", Nodes: 1}, owner, "")
	if !errors.Is(err, ErrNotOwned) || !strings.Contains(err.Error(), "no spanbench labels") {
		t.Errorf("EnsureOwned over a hand-made instance: %v; want ErrNotOwned saying it has no spanbench labels", err)
	}
	if err := DeleteOwned(ctx, a, "p-test", "theirs", owner, ""); !errors.Is(err, ErrNotOwned) {
		t.Errorf("DeleteOwned of a hand-made instance: %v; want ErrNotOwned", err)
	}
}

// TestListOwnedSeesOnlyThisClustersInstances lists instances of two
// clusters and one unlabelled.
func TestListOwnedSeesOnlyThisClustersInstances(t *testing.T) {
	ctx, a := openAdmin(t, emulatortest.Start(t))
	mine, theirs := owner, owner
	theirs.Cluster = "c2"
	for id, o := range map[string]Owner{"mine": mine, "theirs": theirs} {
		if _, err := EnsureOwned(ctx, a, Instance{Project: "p-test", Instance: id, Config: "asia1", ProcessingUnits: 100}, o, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.CreateInstance(ctx, &instancepb.CreateInstanceRequest{Parent: "projects/p-test", InstanceId: "plain",
		Instance: &instancepb.Instance{Config: "projects/p-test/instanceConfigs/asia1", DisplayName: "plain", NodeCount: 1}}); err != nil {
		t.Fatal(err)
	}
	got, err := ListOwned(ctx, a, "p-test", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "mine" || got[0].ProcessingUnits != 100 || got[0].Nodes != 0 {
		t.Fatalf("ListOwned(c1) = %+v; want only instance mine, 100 processing units", got)
	}
	if err := DeleteOrphan(ctx, a, got[0]); err != nil {
		t.Fatal(err)
	}
	if got, _ := ListOwned(ctx, a, "p-test", "c1"); len(got) != 0 {
		t.Errorf("after DeleteOrphan ListOwned(c1) = %+v", got)
	}
}

// lateCreationAdmin is the emulator's instance admin API with a creation
// that Cloud Spanner finishes only after CreateWait, as it does for a large
// instance or one refused late (quota, permission on the configuration).
// The emulator finishes every creation at once, so this is a fake at the
// seam: StartCreateInstance leaves an operation running, and
// PollCreateInstance reports it running for the first polls, then result.
type lateCreationAdmin struct {
	InstanceAdmin
	// runningPolls is how many polls report the operation running.
	runningPolls int
	// result is the creation's error once it is done; nil is success.
	result error
	// visible: the instance shows at once (CREATING until the operation
	// is done), as on Cloud Spanner; otherwise it never appears.
	visible bool
	// pollErr, when set, is the failure of reading the operation.
	pollErr error
	// appearsWhenDone: the instance is not visible while the creation
	// runs, and shows once it succeeded.
	appearsWhenDone bool

	mu      sync.Mutex
	req     *instancepb.CreateInstanceRequest
	creates int
	ops     []string // operations started
	polls   int
	done    bool
}

func (f *lateCreationAdmin) StartCreateInstance(ctx context.Context, req *instancepb.CreateInstanceRequest) (string, error) {
	f.mu.Lock()
	f.creates++
	op := fmt.Sprintf("%s/instances/%s/operations/late-%d", req.GetParent(), req.GetInstanceId(), f.creates)
	f.ops = append(f.ops, op)
	f.req = req
	f.mu.Unlock()
	if f.visible {
		if err := f.InstanceAdmin.CreateInstance(ctx, req); err != nil {
			return "", err
		}
	}
	return op, nil
}

func (f *lateCreationAdmin) PollCreateInstance(ctx context.Context, operation string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pollErr != nil {
		return false, f.pollErr
	}
	if !slices.Contains(f.ops, operation) {
		return false, status.Errorf(codes.NotFound, "operation %s not found", operation)
	}
	if f.polls < f.runningPolls {
		f.polls++
		return false, nil
	}
	if !f.done && f.appearsWhenDone && f.result == nil {
		if err := f.InstanceAdmin.CreateInstance(ctx, f.req); err != nil {
			return false, err
		}
	}
	f.done = true
	return true, f.result
}

func (f *lateCreationAdmin) GetInstance(ctx context.Context, name string) (*instancepb.Instance, error) {
	in, err := f.InstanceAdmin.GetInstance(ctx, name)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil && !f.done {
		in.State = instancepb.Instance_CREATING
	}
	return in, err
}

func (f *lateCreationAdmin) started() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.creates
}

// TestEnsureOwnedFailsWithTheErrorOfACreationThatFailsLate: a creation
// still running after CreateWait hands back its operation; the next calls
// poll it instead of creating again, and once it fails, EnsureOwned fails
// with Spanner's error and its gRPC status, whether the instance showed
// while it was being created or never did.
func TestEnsureOwnedFailsWithTheErrorOfACreationThatFailsLate(t *testing.T) {
	ctx, real := openAdmin(t, emulatortest.Start(t))
	cases := []struct {
		name    string
		result  error
		visible bool
		check   func(error) bool
		want    string
	}{
		{"quota", status.Error(codes.ResourceExhausted, "Quota exceeded for quota metric 'Nodes' in region asia-northeast1"), false,
			func(err error) bool { return status.Code(err) == codes.ResourceExhausted }, "gRPC code ResourceExhausted"},
		{"denied", status.Error(codes.PermissionDenied, "Permission 'spanner.instanceConfigs.get' denied"), true,
			func(err error) bool { return status.Code(err) == codes.PermissionDenied }, "gRPC code PermissionDenied"},
		{"noconfig", status.Error(codes.NotFound, "Instance config not found"), false,
			func(err error) bool { return errors.Is(err, ErrConfigNotFound) && status.Code(err) == codes.NotFound }, "ErrConfigNotFound"},
		{"edition", status.Error(codes.InvalidArgument, "multi-region configurations require the ENTERPRISE_PLUS edition"), false,
			func(err error) bool { return status.Code(err) == codes.InvalidArgument }, "gRPC code InvalidArgument"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &lateCreationAdmin{InstanceAdmin: real, runningPolls: 1, result: tc.result, visible: tc.visible}
			in := Instance{Project: "p-test", Instance: "late-" + tc.name, Config: "asia1", Nodes: 1}

			info, err := EnsureOwned(ctx, a, in, owner, "")
			if err != nil || !info.Created || info.Ready() || info.CreateOperation == "" {
				t.Fatalf("first EnsureOwned = %+v, %v; want created, CREATING, with the operation still running: "+
					"a creation not finished after CreateWait must hand back its operation so that a later call can poll it", info, err)
			}
			op := info.CreateOperation
			info, err = EnsureOwned(ctx, a, in, owner, op)
			if err != nil || info.Ready() || info.CreateOperation != op {
				t.Fatalf("EnsureOwned while the creation runs = %+v, %v; want CREATING with operation %s kept", info, err, op)
			}
			_, err = EnsureOwned(ctx, a, in, owner, op)
			if err == nil || !tc.check(err) || !strings.Contains(err.Error(), status.Convert(tc.result).Message()) {
				t.Errorf("EnsureOwned after the creation failed: %v; want Spanner's error %q with %s: "+
					"a creation that fails after CreateWait must fail with its own error, not look like an instance still CREATING",
					err, tc.result, tc.want)
			}
			if n := a.started(); n != 1 {
				t.Errorf("EnsureOwned started %d creations; want 1: it must poll the running one, not create again", n)
			}
			// Whatever showed is the owner's, and goes.
			if err := DeleteOwned(ctx, a, in.Project, in.Instance, owner, ""); err != nil {
				t.Fatal(err)
			}
			if _, err := Describe(ctx, real, in.Project, in.Instance); !errors.Is(err, ErrInstanceNotFound) {
				t.Errorf("after the failed creation and DeleteOwned the instance reads %v; want it gone", err)
			}
		})
	}
}

// TestEnsureOwnedGoesOnWhenALateCreationSucceeds: the operation is polled
// while the instance is CREATING, and dropped once it succeeded.
func TestEnsureOwnedGoesOnWhenALateCreationSucceeds(t *testing.T) {
	ctx, real := openAdmin(t, emulatortest.Start(t))
	a := &lateCreationAdmin{InstanceAdmin: real, runningPolls: 1, visible: true}
	in := Instance{Project: "p-test", Instance: "late-ok", Config: "asia1", ProcessingUnits: 100}
	info, err := EnsureOwned(ctx, a, in, owner, "")
	if err != nil || info.CreateOperation == "" || info.State != "CREATING" {
		t.Fatalf("first EnsureOwned = %+v, %v; want CREATING with its operation", info, err)
	}
	op := info.CreateOperation
	if info, err = EnsureOwned(ctx, a, in, owner, op); err != nil || info.CreateOperation != op {
		t.Fatalf("EnsureOwned while the creation runs = %+v, %v; want operation %s kept", info, err, op)
	}
	if info, err = EnsureOwned(ctx, a, in, owner, op); err != nil || info.CreateOperation != "" {
		t.Fatalf("EnsureOwned once the creation succeeded = %+v, %v; want no error and the operation dropped", info, err)
	}
	if info, err = EnsureOwned(ctx, a, in, owner, ""); err != nil || !info.Ready() || info.Created {
		t.Errorf("EnsureOwned after the creation = %+v, %v; want the instance READY, adopted", info, err)
	}
	if n := a.started(); n != 1 {
		t.Errorf("EnsureOwned started %d creations; want 1", n)
	}
}

// TestEnsureOwnedWhenTheOperationCannotBeRead: an operation Spanner no
// longer knows is forgotten (the instance is created, as without one); any
// other failure to read it is returned with its code, creating nothing.
func TestEnsureOwnedWhenTheOperationCannotBeRead(t *testing.T) {
	ctx, real := openAdmin(t, emulatortest.Start(t))
	in := Instance{Project: "p-test", Instance: "gone-op", Config: "asia1", Nodes: 1}
	stale := "projects/p-test/instances/gone-op/operations/expired"

	flaky := &lateCreationAdmin{InstanceAdmin: real, pollErr: status.Error(codes.Unavailable, "connection reset")}
	if _, err := EnsureOwned(ctx, flaky, in, owner, stale); status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), stale) {
		t.Errorf("EnsureOwned with an unreadable operation: %v; want Unavailable naming the operation (the caller retries)", err)
	}
	if n := flaky.started(); n != 0 {
		t.Errorf("EnsureOwned started %d creations while it could not read the running one; want 0", n)
	}

	forgotten := &lateCreationAdmin{InstanceAdmin: real, pollErr: status.Error(codes.NotFound, "operation not found")}
	info, err := EnsureOwned(ctx, forgotten, in, owner, stale)
	if err != nil || !info.Created || forgotten.started() != 1 {
		t.Errorf("EnsureOwned with an operation Spanner forgot = %+v, %v, %d creations; want the instance created once",
			info, err, forgotten.started())
	}
}

// TestPollCreateInstanceReadsTheEmulatorsOperations checks the real
// PollCreateInstance on the emulator's own operations.
func TestPollCreateInstanceReadsTheEmulatorsOperations(t *testing.T) {
	ctx, ia, _ := adminClients(t, emulatortest.Start(t))
	op, err := ia.CreateInstance(ctx, &instancepb.CreateInstanceRequest{Parent: "projects/p-test", InstanceId: "polled",
		Instance: &instancepb.Instance{Config: "projects/p-test/instanceConfigs/asia1", DisplayName: "polled", NodeCount: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	done, err := AdminOf(ia).PollCreateInstance(ctx, op.Name())
	if !done || err != nil {
		t.Errorf("PollCreateInstance(%s) of a finished creation = %v, %v; want done, no error", op.Name(), done, err)
	}
	done, err = AdminOf(ia).PollCreateInstance(ctx, "projects/p-test/instances/polled/operations/nonexistent")
	if done || status.Code(err) != codes.NotFound {
		t.Errorf("PollCreateInstance of an unknown operation = %v, %v; want not done, NotFound", done, err)
	}
}

func TestOwnerLabelsAreValidSpannerLabels(t *testing.T) {
	if err := owner.Validate(); err != nil {
		t.Error(err)
	}
	for _, bad := range []Owner{{Cluster: "C1", Namespace: "n", Run: "r", UID: "u"}, {Cluster: "c", Namespace: "n", Run: "r"},
		{Cluster: strings.Repeat("c", 64), Namespace: "n", Run: "r", UID: "u"}, {Cluster: "c.d", Namespace: "n", Run: "r", UID: "u"}} {
		if bad.Validate() == nil {
			t.Errorf("owner %+v validates; its labels are not valid Spanner labels", bad)
		}
	}
	if o, ok := OwnerOf(owner.Labels()); !ok || o != owner {
		t.Errorf("OwnerOf(Labels()) = %+v, %v", o, ok)
	}
	if _, ok := OwnerOf(map[string]string{LabelRun: "r"}); ok {
		t.Error("OwnerOf of a partial label set reports an owner")
	}
}

// TestSplitPointsAreUnsupportedOnTheEmulator records the emulator's answer
// so the controller's skip path stays honest.
func TestSplitPointsAreUnsupportedOnTheEmulator(t *testing.T) {
	ctx, ia, da := adminClients(t, emulatortest.Start(t))
	if err := EnsureInstance(ctx, AdminOf(ia), Instance{Project: "p", Instance: "inst", Config: "emulator-config", Nodes: 1}); err != nil {
		t.Fatal(err)
	}
	if err := EnsureDatabase(ctx, DatabaseAdminOf(da), Database{Project: "p", Instance: "inst", Database: "db"}, []string{"CREATE TABLE usertable (id STRING(MAX) NOT NULL) PRIMARY KEY (id)"}); err != nil {
		t.Fatal(err)
	}
	err := AddSplitPoints(ctx, da, "p", "inst", "db", "usertable", EvenSplitKeys(3))
	if !errors.Is(err, ErrSplitPointsUnsupported) {
		t.Errorf("AddSplitPoints on the emulator: %v; want ErrSplitPointsUnsupported", err)
	}
}

// TestEvenSplitKeysCutTheWorkloadKeysEvenly checks the generated split
// points against the keys the YCSB workload really preloads.
func TestEvenSplitKeysCutTheWorkloadKeysEvenly(t *testing.T) {
	keys := EvenSplitKeys(3)
	if want := []string{"40000000", "80000000", "c0000000"}; strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Fatalf("EvenSplitKeys(3) = %v, want %v", keys, want)
	}
	const rows = 400_000 // 400 blocks of workload.BlockRows keys
	counts := make([]int, len(keys)+1)
	for k := int64(0); k < rows; k++ {
		key, r := workload.YCSBKey(k), 0
		for r < len(keys) && key >= keys[r] {
			r++
		}
		counts[r]++
	}
	for i, n := range counts {
		if n < rows/4/2 || n > rows/4*3/2 {
			t.Errorf("range %d of 4 holds %d of %d keys; want about a quarter (counts %v)", i, n, rows, counts)
		}
	}
	if len(EvenSplitKeys(0)) != 0 {
		t.Error("EvenSplitKeys(0) is not empty")
	}
}

func TestEditionOfMapsTheAPINames(t *testing.T) {
	for name, want := range map[string]instancepb.Instance_Edition{"": instancepb.Instance_EDITION_UNSPECIFIED,
		"STANDARD": instancepb.Instance_STANDARD, "ENTERPRISE_PLUS": instancepb.Instance_ENTERPRISE_PLUS} {
		if got, err := editionOf(name); err != nil || got != want {
			t.Errorf("editionOf(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	for _, bad := range []string{"EDITION_UNSPECIFIED", "Premium"} {
		if _, err := editionOf(bad); err == nil {
			t.Errorf("editionOf(%q) accepted an unknown edition", bad)
		}
	}
}

// TestDeleteOwnedWaitsForACreationStillRunning: an instance Spanner
// accepted to create but does not show yet is not gone. Deleting it while
// the creation runs says so (ErrStillCreating), and once the creation is
// done, the instance that appeared is deleted rather than left to cost.
func TestDeleteOwnedWaitsForACreationStillRunning(t *testing.T) {
	ctx, real := openAdmin(t, emulatortest.Start(t))
	a := &lateCreationAdmin{InstanceAdmin: real, runningPolls: 1, appearsWhenDone: true}
	in := Instance{Project: "p-test", Instance: "unseen", Config: "asia1", Nodes: 1}
	info, err := EnsureOwned(ctx, a, in, owner, "")
	if err != nil || info.CreateOperation == "" {
		t.Fatalf("EnsureOwned = %+v, %v; want a creation still running", info, err)
	}
	op := info.CreateOperation
	if err := DeleteOwned(ctx, a, in.Project, in.Instance, owner, op); !errors.Is(err, ErrStillCreating) {
		t.Fatalf("DeleteOwned while the creation runs and the instance does not show: %v; want ErrStillCreating, "+
			"not nil: the instance appears once the creation is done", err)
	}
	if err := DeleteOwned(ctx, a, in.Project, in.Instance, owner, op); err != nil {
		t.Fatalf("DeleteOwned once the creation is done: %v", err)
	}
	if _, err := Describe(ctx, real, in.Project, in.Instance); !errors.Is(err, ErrInstanceNotFound) {
		t.Errorf("after DeleteOwned, the instance whose creation finished reads %v; want it deleted", err)
	}
	// An operation that cannot be read keeps an unseen instance from
	// counting as gone, and does not stop a visible one being deleted.
	a.pollErr = status.Error(codes.PermissionDenied, "Permission 'spanner.instanceOperations.get' denied")
	if err := DeleteOwned(ctx, a, in.Project, in.Instance, owner, op); status.Code(err) != codes.PermissionDenied {
		t.Errorf("DeleteOwned of an unseen instance whose creation cannot be read: %v; want the PermissionDenied of the read", err)
	}
	if err := real.CreateInstance(ctx, a.req); err != nil {
		t.Fatal(err)
	}
	if err := DeleteOwned(ctx, a, in.Project, in.Instance, owner, op); err != nil {
		t.Errorf("DeleteOwned of a visible instance whose creation cannot be read: %v; want it deleted", err)
	}
	a.pollErr = nil
	// A creation Spanner no longer knows is not waited for.
	if err := DeleteOwned(ctx, a, in.Project, in.Instance, owner, "projects/p-test/instances/unseen/operations/forgotten"); err != nil {
		t.Errorf("DeleteOwned of an absent instance with an unknown operation: %v; want nil", err)
	}
}

// TestAFullConfigNameIsRefusedBeforeAnyCall: a config is an ID in the run's
// project; a full name (possibly another project's) is never passed on.
// The admin is nil: any call would panic.
func TestAFullConfigNameIsRefusedBeforeAnyCall(t *testing.T) {
	ctx, none := context.Background(), noAdmin{}
	for _, config := range []string{"projects/other/instanceConfigs/asia1", "projects/p-test/instanceConfigs/asia1", "asia1/x", ""} {
		if err := CheckConfig(ctx, none, "p-test", config); err == nil || !strings.Contains(err.Error(), "must be an ID") {
			t.Errorf("CheckConfig(%q) = %v; want a refusal", config, err)
		}
		in := Instance{Project: "p-test", Instance: "full", Config: config, Nodes: 1}
		if _, err := EnsureOwned(ctx, none, in, owner, ""); err == nil {
			t.Errorf("EnsureOwned with config %q succeeded; want a refusal", config)
		}
		if config != "" {
			if err := EnsureInstance(ctx, none, in); err == nil || !strings.Contains(err.Error(), "must be an ID") {
				t.Errorf("EnsureInstance with config %q = %v; want a refusal", config, err)
			}
		}
	}
}

// noAdmin is an InstanceAdmin whose every call panics (nil embedded).
type noAdmin struct{ InstanceAdmin }

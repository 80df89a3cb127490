package benchmarkrun_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/longrunning/autogen/longrunningpb"
	"cloud.google.com/go/spanner/admin/instance/apiv1/instancepb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/emptypb"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/spanner/endpoint"
)

// TestOneManagerServesAnEmulatorRunAndACloudRunAtTheirOwnEndpoints guards
// the paid-instance leak of issue 9. One manager serves an emulator run
// and an Ephemeral run on "Cloud Spanner" (a fake instance admin server on
// loopback, the manager's Cloud endpoint) at once. Once the manager had
// opened an emulator session, the Cloud run's instance used to be created
// on the emulator and its deletion sent there too, where NotFound counted
// as gone: the finalizer was released and the paid instance stayed. Here
// the emulator run succeeds on the emulator, the Cloud run's instance is
// created and deleted on the fake alone, and its finalizer holds the run
// until the fake has accepted the DeleteInstance.
func TestOneManagerServesAnEmulatorRunAndACloudRunAtTheirOwnEndpoints(t *testing.T) {
	h := newHarness(t)
	cloud := startFakeCloudInstanceAdmin(t)
	cloud.holdDeletes(true)
	h.startManager(benchmarkrun.SpannerPreparer{Cloud: cloud.endpoint()})

	emu := h.runSpec("emu", 1)
	h.create(emu)
	runners := h.kubelet(emu, 0) // the manager has prepared the emulator's database: it opened an emulator session

	paid := h.ephemeralSpec("cloud", 1)
	paid.Spec.Target.EmulatorHost = ""
	h.create(paid)
	name := "projects/" + testProject + "/instances/eph-cloud"
	h.eventually("the Cloud run's instance is created on the Cloud endpoint", 30*time.Second, func() bool { return cloud.created(name) })

	got := h.finished(emu, 90*time.Second)
	runners.Wait()
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue {
		t.Fatalf("the emulator run ended %s/%s: %s", c.Status, c.Reason, c.Message)
	}
	if h.instance("eph-cloud") != nil {
		t.Fatal("the Cloud run's instance exists on the emulator")
	}

	if err := h.c.Delete(context.Background(), paid); err != nil {
		t.Fatal(err)
	}
	h.eventually("the manager tries to delete the Cloud run's instance on the Cloud endpoint", 30*time.Second, func() bool {
		return cloud.deleteAttempts(name) > 0
	})
	// While the Cloud endpoint refuses the deletion, the finalizer holds
	// the run: the instance may still cost money.
	h.consistently("the finalizer holds the Cloud run while its instance's deletion is refused", 2*time.Second,
		await.Cond(func() bool { return h.current(paid) != nil }))
	cloud.holdDeletes(false)
	h.eventually("the Cloud run is released once its instance is deleted", 60*time.Second, func() bool { return h.current(paid) == nil })
	if !cloud.deleted(name) {
		t.Errorf("the Cloud run was released, but the Cloud endpoint never deleted %s", name)
	}
	if h.instance("eph-cloud") != nil {
		t.Error("the Cloud run's instance exists on the emulator")
	}
}

// fakeCloudInstanceAdmin stands in for Cloud Spanner's instance admin API,
// which cannot be reached from here: a gRPC server on loopback speaking the
// real protocol. Every instance configuration exists; a creation finishes
// at once and the instance is READY; deletions can be held (refused with
// FailedPrecondition, which the client does not retry).
type fakeCloudInstanceAdmin struct {
	instancepb.UnimplementedInstanceAdminServer
	addr      string
	mu        sync.Mutex
	instances map[string]*instancepb.Instance
	creates   map[string]bool
	attempts  map[string]int
	deletes   map[string]bool
	hold      bool
}

// startFakeCloudInstanceAdmin serves the fake until the test ends.
func startFakeCloudInstanceAdmin(t *testing.T) *fakeCloudInstanceAdmin {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeCloudInstanceAdmin{addr: l.Addr().String(), instances: map[string]*instancepb.Instance{},
		creates: map[string]bool{}, attempts: map[string]int{}, deletes: map[string]bool{}}
	srv := grpc.NewServer()
	instancepb.RegisterInstanceAdminServer(srv, f)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Stop(); <-done })
	return f
}

// endpoint is the manager's Cloud endpoint: the fake, in plaintext and
// without credentials (it checks none).
func (f *fakeCloudInstanceAdmin) endpoint() endpoint.Endpoint {
	return endpoint.Cloud(f.addr, option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		option.WithoutAuthentication())
}

func (f *fakeCloudInstanceAdmin) holdDeletes(hold bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hold = hold
}

func (f *fakeCloudInstanceAdmin) created(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.creates[name]
}

func (f *fakeCloudInstanceAdmin) deleteAttempts(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attempts[name]
}

func (f *fakeCloudInstanceAdmin) deleted(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.deletes[name]
}

func (f *fakeCloudInstanceAdmin) GetInstanceConfig(_ context.Context, req *instancepb.GetInstanceConfigRequest) (*instancepb.InstanceConfig, error) {
	return &instancepb.InstanceConfig{Name: req.GetName(), DisplayName: "fake"}, nil
}

func (f *fakeCloudInstanceAdmin) GetInstance(_ context.Context, req *instancepb.GetInstanceRequest) (*instancepb.Instance, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.instances[req.GetName()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "instance %s not found on the fake", req.GetName())
	}
	return proto.Clone(in).(*instancepb.Instance), nil
}

func (f *fakeCloudInstanceAdmin) CreateInstance(_ context.Context, req *instancepb.CreateInstanceRequest) (*longrunningpb.Operation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name := req.GetParent() + "/instances/" + req.GetInstanceId()
	if _, ok := f.instances[name]; ok {
		return nil, status.Errorf(codes.AlreadyExists, "instance %s exists on the fake", name)
	}
	in := proto.Clone(req.GetInstance()).(*instancepb.Instance)
	in.Name, in.State = name, instancepb.Instance_READY
	if in.GetNodeCount() > 0 {
		in.ProcessingUnits = 1000 * in.GetNodeCount()
	}
	f.instances[name], f.creates[name] = in, true
	resp, err := anypb.New(in)
	if err != nil {
		return nil, err
	}
	return &longrunningpb.Operation{Name: name + "/operations/create", Done: true,
		Result: &longrunningpb.Operation_Response{Response: resp}}, nil
}

func (f *fakeCloudInstanceAdmin) DeleteInstance(_ context.Context, req *instancepb.DeleteInstanceRequest) (*emptypb.Empty, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts[req.GetName()]++
	if f.hold {
		return nil, status.Error(codes.FailedPrecondition, "the test holds deletions on the fake")
	}
	delete(f.instances, req.GetName())
	f.deletes[req.GetName()] = true
	return &emptypb.Empty{}, nil
}

// Package gcpadminfake is a stand-in for what a preflight asks of Google
// Cloud and cannot ask here: Cloud Spanner's instance and database admin
// APIs and Cloud Resource Manager's Projects service, each speaking its
// real gRPC protocol on one loopback listener, so the real Go clients
// talk to it with client options. It holds instance configurations,
// instances and databases, and the permissions granted to the one caller
// on each resource; a permission granted on a resource holds on the
// resources below it, as in IAM. It creates nothing for a caller: only the
// read methods a preflight calls are served (the rest are Unimplemented).
// A test helper: never linked into the binary.
package gcpadminfake

import (
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	"cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"cloud.google.com/go/spanner/admin/database/apiv1/databasepb"
	"cloud.google.com/go/spanner/admin/instance/apiv1/instancepb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// StandIn is the stand-in server.
type StandIn struct {
	instance instanceAdmin
	database databaseAdmin
	projects projects

	addr    string
	mu      sync.Mutex
	granted map[string][]string // resource name -> permissions granted there
	configs map[string]*instancepb.InstanceConfig
	insts   map[string]*instancepb.Instance
	dbs     map[string]bool
	faults  map[string]*fault // full gRPC method name -> its injected failure
}

// fault is a failure a method answers with, the next times calls.
type fault struct {
	code  codes.Code
	times int // < 0: every call
}

// The full gRPC names of the methods a preflight calls, for Fail.
const (
	MethodGetInstanceConfig = "/google.spanner.admin.instance.v1.InstanceAdmin/GetInstanceConfig"
	MethodGetInstance       = "/google.spanner.admin.instance.v1.InstanceAdmin/GetInstance"
	MethodListInstances     = "/google.spanner.admin.instance.v1.InstanceAdmin/ListInstances"
	MethodInstanceTestIam   = "/google.spanner.admin.instance.v1.InstanceAdmin/TestIamPermissions"
	MethodGetDatabase       = "/google.spanner.admin.database.v1.DatabaseAdmin/GetDatabase"
	MethodDatabaseTestIam   = "/google.spanner.admin.database.v1.DatabaseAdmin/TestIamPermissions"
	MethodProjectTestIam    = "/google.cloud.resourcemanager.v3.Projects/TestIamPermissions"
)

// Start serves a new stand-in on a loopback port until tb ends.
func Start(tb testing.TB) *StandIn {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &StandIn{addr: l.Addr().String(), granted: map[string][]string{}, configs: map[string]*instancepb.InstanceConfig{},
		insts: map[string]*instancepb.Instance{}, dbs: map[string]bool{}, faults: map[string]*fault{}}
	s.instance.s, s.database.s, s.projects.s = s, s, s
	g := grpc.NewServer(grpc.UnaryInterceptor(s.injectFaults))
	instancepb.RegisterInstanceAdminServer(g, &s.instance)
	databasepb.RegisterDatabaseAdminServer(g, &s.database)
	resourcemanagerpb.RegisterProjectsServer(g, &s.projects)
	go func() { _ = g.Serve(l) }()
	tb.Cleanup(g.Stop)
	return s
}

// Addr is the stand-in's host:port.
func (s *StandIn) Addr() string { return s.addr }

// ClientOptions reach the stand-in: plaintext, no credentials. The
// address is given apart (option.WithEndpoint), by the caller.
func (s *StandIn) ClientOptions() []option.ClientOption {
	return []option.ClientOption{
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		option.WithoutAuthentication(),
	}
}

// Fail makes method (one of the Method names) answer code, with no
// response, for its next times calls (times < 0: every call), as Google
// does when it is unavailable, out of quota or refusing. The Go client's
// own retries of a method count as calls.
func (s *StandIn) Fail(method string, code codes.Code, times int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = &fault{code: code, times: times}
}

// injectFaults answers a call with its method's injected failure, if any
// is left.
func (s *StandIn) injectFaults(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	s.mu.Lock()
	f := s.faults[info.FullMethod]
	fail := f != nil && f.times != 0
	if fail && f.times > 0 {
		f.times--
	}
	s.mu.Unlock()
	if fail {
		return nil, status.Errorf(f.code, "injected by the stand-in: %s answers %s", info.FullMethod, f.code)
	}
	return handler(ctx, req)
}

// Grant grants perms to the caller on resource (projects/P,
// projects/P/instances/I, …/databases/D).
func (s *StandIn) Grant(resource string, perms ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.granted[resource] = append(s.granted[resource], perms...)
}

// AddConfig makes instance configuration name (projects/P/instanceConfigs/C) exist.
func (s *StandIn) AddConfig(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.configs[name] = &instancepb.InstanceConfig{Name: name, DisplayName: name[strings.LastIndex(name, "/")+1:]}
}

// AddInstance makes an instance exist, in config, of pu processing units.
func (s *StandIn) AddInstance(name, config string, pu int32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.insts[name] = &instancepb.Instance{Name: name, Config: config, ProcessingUnits: pu, NodeCount: pu / 1000, State: instancepb.Instance_READY}
}

// AddDatabase makes a database exist.
func (s *StandIn) AddDatabase(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dbs[name] = true
}

// holds reports whether perm is granted on resource or above it.
func (s *StandIn) holds(resource, perm string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for r := resource; r != ""; r = parent(r) {
		if slices.Contains(s.granted[r], perm) {
			return true
		}
	}
	return false
}

// parent is the resource above r: …/databases/D -> …/instances/I -> projects/P.
func parent(r string) string {
	parts := strings.Split(r, "/")
	if len(parts) <= 2 {
		return ""
	}
	return strings.Join(parts[:len(parts)-2], "/")
}

// projectOf is r's projects/P.
func projectOf(r string) string {
	parts := strings.SplitN(r, "/", 3)
	if len(parts) < 2 {
		return r
	}
	return parts[0] + "/" + parts[1]
}

func (s *StandIn) deny(resource, perm string) error {
	if s.holds(resource, perm) {
		return nil
	}
	// Cloud's message names the permission and the resource.
	return status.Errorf(codes.PermissionDenied, "Caller is missing IAM permission %s on resource %s.", perm, resource)
}

// testIAM answers TestIamPermissions: the subset of the asked
// permissions granted on the resource or above it.
func (s *StandIn) testIAM(req *iampb.TestIamPermissionsRequest) *iampb.TestIamPermissionsResponse {
	out := &iampb.TestIamPermissionsResponse{}
	for _, p := range req.GetPermissions() {
		if s.holds(req.GetResource(), p) {
			out.Permissions = append(out.Permissions, p)
		}
	}
	return out
}

type instanceAdmin struct {
	instancepb.UnimplementedInstanceAdminServer
	s *StandIn
}

func (a *instanceAdmin) GetInstanceConfig(_ context.Context, req *instancepb.GetInstanceConfigRequest) (*instancepb.InstanceConfig, error) {
	if err := a.s.deny(req.GetName(), "spanner.instanceConfigs.get"); err != nil {
		return nil, err
	}
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	c, ok := a.s.configs[req.GetName()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "Instance config %s not found.", req.GetName())
	}
	return proto.Clone(c).(*instancepb.InstanceConfig), nil
}

func (a *instanceAdmin) GetInstance(_ context.Context, req *instancepb.GetInstanceRequest) (*instancepb.Instance, error) {
	if err := a.s.deny(req.GetName(), "spanner.instances.get"); err != nil {
		return nil, err
	}
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	in, ok := a.s.insts[req.GetName()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "Instance not found: %s", req.GetName())
	}
	return proto.Clone(in).(*instancepb.Instance), nil
}

func (a *instanceAdmin) ListInstances(_ context.Context, req *instancepb.ListInstancesRequest) (*instancepb.ListInstancesResponse, error) {
	if err := a.s.deny(req.GetParent(), "spanner.instances.list"); err != nil {
		return nil, err
	}
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	out := &instancepb.ListInstancesResponse{}
	for name, in := range a.s.insts {
		if projectOf(name) == req.GetParent() {
			out.Instances = append(out.Instances, proto.Clone(in).(*instancepb.Instance))
		}
	}
	return out, nil
}

// TestIamPermissions on a missing instance is NOT_FOUND for a caller who
// may list the project's instances, else an empty set, as the API's
// reference says.
func (a *instanceAdmin) TestIamPermissions(_ context.Context, req *iampb.TestIamPermissionsRequest) (*iampb.TestIamPermissionsResponse, error) {
	a.s.mu.Lock()
	_, ok := a.s.insts[req.GetResource()]
	a.s.mu.Unlock()
	if !ok {
		if a.s.holds(parent(req.GetResource()), "spanner.instances.list") {
			return nil, status.Errorf(codes.NotFound, "Instance not found: %s", req.GetResource())
		}
		return &iampb.TestIamPermissionsResponse{}, nil
	}
	return a.s.testIAM(req), nil
}

type databaseAdmin struct {
	databasepb.UnimplementedDatabaseAdminServer
	s *StandIn
}

func (d *databaseAdmin) GetDatabase(_ context.Context, req *databasepb.GetDatabaseRequest) (*databasepb.Database, error) {
	if err := d.s.deny(req.GetName(), "spanner.databases.get"); err != nil {
		return nil, err
	}
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	if !d.s.dbs[req.GetName()] {
		return nil, status.Errorf(codes.NotFound, "Database not found: %s", req.GetName())
	}
	return &databasepb.Database{Name: req.GetName(), State: databasepb.Database_READY}, nil
}

// TestIamPermissions on a missing database is NOT_FOUND for a caller who
// may list the instance's databases, else an empty set.
func (d *databaseAdmin) TestIamPermissions(_ context.Context, req *iampb.TestIamPermissionsRequest) (*iampb.TestIamPermissionsResponse, error) {
	d.s.mu.Lock()
	ok := d.s.dbs[req.GetResource()]
	d.s.mu.Unlock()
	if !ok {
		if d.s.holds(parent(req.GetResource()), "spanner.databases.list") {
			return nil, status.Errorf(codes.NotFound, "Database not found: %s", req.GetResource())
		}
		return &iampb.TestIamPermissionsResponse{}, nil
	}
	return d.s.testIAM(req), nil
}

type projects struct {
	resourcemanagerpb.UnimplementedProjectsServer
	s *StandIn
}

// TestIamPermissions needs no permission on a project (Resource Manager's
// reference says so).
func (p *projects) TestIamPermissions(_ context.Context, req *iampb.TestIamPermissionsRequest) (*iampb.TestIamPermissionsResponse, error) {
	if !strings.HasPrefix(req.GetResource(), "projects/") || strings.Count(req.GetResource(), "/") != 1 {
		return nil, status.Errorf(codes.InvalidArgument, "resource %q is not a project", req.GetResource())
	}
	return p.s.testIAM(req), nil
}

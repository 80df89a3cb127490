// Package preflight checks, before a run creates or spends anything, that
// the identity it runs as can do what the run will do on Cloud Spanner:
// whose credentials are used, the IAM permissions the run needs on the
// project, the instance and the database (each missing one named with the
// predefined role that grants it), that the instance configuration exists
// and that an Ephemeral instance fits the node quota. It only reads: no
// instance, database or session is created. Against the emulator, which
// has no IAM, it says so and checks only that the emulator answers.
//
// Check is one call with the run's target and the endpoints as values;
// nothing is read from the process environment (DetectCredentials, at the
// edge of a process, is the one exception and is the caller's choice).
package preflight

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	database "cloud.google.com/go/spanner/admin/database/apiv1"
	"cloud.google.com/go/spanner/admin/database/apiv1/databasepb"
	instance "cloud.google.com/go/spanner/admin/instance/apiv1"
	"cloud.google.com/go/spanner/admin/instance/apiv1/instancepb"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/target"
)

// ResourceManagerDefault is Cloud Resource Manager's endpoint.
const ResourceManagerDefault = "cloudresourcemanager.googleapis.com:443"

// callTimeout bounds each call a check makes.
const callTimeout = 20 * time.Second

// Target is what a run declares that decides what it needs.
type Target struct {
	// Project, Instance and Database are IDs.
	Project, Instance, Database string
	// Config is the instance configuration's ID; "" for an Existing
	// instance that names none.
	Config string
	// Ephemeral: the run creates the instance and deletes it.
	Ephemeral bool
	// ProcessingUnits is the Ephemeral instance's size.
	ProcessingUnits int32
	// SplitPoints: the run pre-splits its main table.
	SplitPoints bool
	// ServerStats: SPANNER_SYS statistics are read after the run.
	ServerStats bool
	// ServerMetrics: Cloud Monitoring's figures are read after the run.
	ServerMetrics bool
}

// TargetOf is the Target of a run's spec.target; serverStats and
// serverMetrics say whether the manager reads the server figures (both on
// by default for Cloud Spanner runs: docs/server-stats.md).
func TargetOf(t v1alpha1.TargetSpec, serverStats, serverMetrics bool) Target {
	return Target{
		Project: t.Project, Instance: t.Instance.Name, Database: t.Database, Config: t.Instance.Config,
		Ephemeral: t.Instance.Mode == v1alpha1.InstanceEphemeral, ProcessingUnits: t.Instance.Capacity(),
		SplitPoints: t.SplitPoints != nil, ServerStats: serverStats, ServerMetrics: serverMetrics,
	}
}

// Option sets where and as whom Check asks.
type Option func(*config)

type config struct {
	spanner   endpoint.Endpoint
	rmAddr    string
	rmOptions []option.ClientOption
	creds     Credentials
	nodeQuota int32
}

// Spanner is where the instance and database admin calls go: the
// emulator or Cloud Spanner (endpoint.For of the run's target). Default:
// Cloud Spanner at its global endpoint.
func Spanner(ep endpoint.Endpoint) Option { return func(c *config) { c.spanner = ep } }

// ResourceManager is where the project's permissions are asked: addr
// ("" is ResourceManagerDefault) with opts (credentials).
func ResourceManager(addr string, opts ...option.ClientOption) Option {
	return func(c *config) { c.rmAddr, c.rmOptions = addr, opts }
}

// WithCredentials names the credentials the clients use, so the report
// says whose they are. Without it the report says none were found.
func WithCredentials(cr Credentials) Option { return func(c *config) { c.creds = cr } }

// NodeQuota is the project's node limit for the target's instance
// configuration (Spanner's "Nodes per instance configuration" quota), in
// nodes; 0 leaves the quota unchecked (see docs/install.md: no quota API
// client is available to read it).
func NodeQuota(nodes int32) Option { return func(c *config) { c.nodeQuota = nodes } }

// Status is a check's outcome.
type Status string

// The outcomes.
const (
	Pass    Status = "pass"
	Fail    Status = "FAIL"
	Skipped Status = "skipped"
)

// Missing is a permission the identity lacks.
type Missing struct {
	Permission
	// Resource is where it was asked (projects/P, …/instances/I, …).
	Resource string
	// Role is the least privileged predefined role that grants it.
	Role string
}

// Result is one check.
type Result struct {
	// Name names the check.
	Name string
	// Status is its outcome.
	Status Status
	// Detail says what was found.
	Detail string
	// Missing are the permissions it found missing.
	Missing []Missing
	// Transient: the check failed because Google did not answer it
	// (Unavailable, DeadlineExceeded, ResourceExhausted): asking again
	// later may pass. Any other failure is Google's (or the target's)
	// answer, which asking again does not change.
	Transient bool
}

// Report is what Check found.
type Report struct {
	// Endpoint names where the Spanner calls went, emulator or Cloud
	// Spanner, plainly.
	Endpoint string
	// Emulator: the target is the emulator (no IAM, no quota).
	Emulator bool
	// Results are the checks, in order.
	Results []Result
}

// OK reports whether nothing failed.
func (r Report) OK() bool {
	return !slices.ContainsFunc(r.Results, func(c Result) bool { return c.Status == Fail })
}

// Transient reports whether the report failed only on checks Google did
// not answer: every failed check is Transient. One refusal among them (a
// missing permission, a missing configuration) makes it not transient:
// a retry would end refused anyway.
func (r Report) Transient() bool {
	failed := false
	for _, c := range r.Results {
		if c.Status == Fail {
			if !c.Transient {
				return false
			}
			failed = true
		}
	}
	return failed
}

// IsTransient reports whether err says Google did not answer, rather
// than refused: Unavailable, DeadlineExceeded (also a call's own
// timeout) or ResourceExhausted (a rate quota that refills).
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted:
		return true
	}
	return false
}

// failed is the failed check name, found by err: Transient when Google
// did not answer.
func failed(name, detail string, err error) Result {
	return Result{Name: name, Status: Fail, Detail: detail, Transient: IsTransient(err)}
}

// Missing are the missing permissions of every check.
func (r Report) Missing() []Missing {
	var out []Missing
	for _, c := range r.Results {
		out = append(out, c.Missing...)
	}
	return out
}

// Names of the checks.
const (
	CheckEndpoint       = "endpoint"
	CheckCredentials    = "credentials"
	CheckInstanceConfig = "instance configuration"
	CheckInstance       = "instance"
	CheckDatabase       = "database"
	CheckProjectIAM     = "project permissions"
	CheckInstanceIAM    = "instance permissions"
	CheckDatabaseIAM    = "database permissions"
	CheckNodeQuota      = "node quota"
)

// Check runs the checks of t and reports each; it never creates anything.
func Check(ctx context.Context, t Target, opts ...Option) Report {
	var c config
	for _, o := range opts {
		o(&c)
	}
	r := &Report{Endpoint: c.spanner.String(), Emulator: c.spanner.IsEmulator()}
	if r.Emulator {
		checkEmulator(ctx, t, c, r)
		return *r
	}
	r.add(Result{Name: CheckEndpoint, Status: Pass, Detail: "Cloud Spanner (" + c.spanner.Address() + "); IAM and quota apply"})
	id, err := identify(ctx, c.creds)
	if err != nil {
		r.add(Result{Name: CheckCredentials, Status: Fail, Detail: err.Error()})
		for _, n := range []string{CheckInstanceConfig, CheckProjectIAM, CheckInstanceIAM, CheckDatabaseIAM, CheckNodeQuota} {
			r.add(Result{Name: n, Status: Skipped, Detail: "no identity to ask as"})
		}
		return *r
	}
	r.add(Result{Name: CheckCredentials, Status: Pass, Detail: id.String()})
	cl, err := openClients(ctx, c)
	if err != nil {
		r.add(Result{Name: CheckEndpoint, Status: Fail, Detail: err.Error()})
		return *r
	}
	defer cl.close()
	(&run{t: t, c: c, cl: cl, r: r}).checks(ctx)
	return *r
}

func (r *Report) add(c Result) { r.Results = append(r.Results, c) }

type clients struct {
	ia *instance.InstanceAdminClient
	da *database.DatabaseAdminClient
	pc *resourcemanager.ProjectsClient
}

func openClients(ctx context.Context, c config) (*clients, error) {
	ia, da, err := target.AdminClients(ctx, c.spanner)
	if err != nil {
		return nil, err
	}
	addr := c.rmAddr
	if addr == "" {
		addr = ResourceManagerDefault
	}
	pc, err := resourcemanager.NewProjectsClient(ctx, append(append([]option.ClientOption{}, c.rmOptions...), option.WithEndpoint(addr))...)
	if err != nil {
		_, _ = ia.Close(), da.Close()
		return nil, fmt.Errorf("resource manager client: %w", err)
	}
	return &clients{ia: ia, da: da, pc: pc}, nil
}

func (c *clients) close() { _, _, _ = c.ia.Close(), c.da.Close(), c.pc.Close() }

// run is one Check against Cloud Spanner.
type run struct {
	t  Target
	c  config
	cl *clients
	r  *Report
}

func (x *run) project() string  { return "projects/" + x.t.Project }
func (x *run) instance() string { return x.project() + "/instances/" + x.t.Instance }
func (x *run) database() string { return x.instance() + "/databases/" + x.t.Database }

func (x *run) checks(ctx context.Context) {
	inst, instErr := call(ctx, func(ctx context.Context) (*instancepb.Instance, error) {
		return x.cl.ia.GetInstance(ctx, &instancepb.GetInstanceRequest{Name: x.instance()})
	})
	// A denied read is not a missing resource: its permissions are still
	// asked of it, and name what is denied.
	instThere := status.Code(instErr) != codes.NotFound
	x.checkConfig(ctx, inst)
	x.checkInstance(instErr)
	dbExists, dbDenied := false, false
	if instThere && !x.t.Ephemeral {
		_, dbErr := call(ctx, func(ctx context.Context) (*databasepb.Database, error) {
			return x.cl.da.GetDatabase(ctx, &databasepb.GetDatabaseRequest{Name: x.database()})
		})
		dbExists, dbDenied = status.Code(dbErr) != codes.NotFound, status.Code(dbErr) == codes.PermissionDenied
		x.checkDatabase(dbErr)
	}

	var onProject, onInstance, onDatabase need
	onProject.add("check the instance configuration", PermInstanceConfigsGet)
	if x.t.ServerMetrics {
		onProject.add("read Cloud Monitoring's figures of the run", PermTimeSeriesList)
	}
	switch {
	case x.t.Ephemeral:
		// Nothing below the project exists before the run: every grant
		// the run relies on must come from the project (or above).
		instancePermissions(&onProject)
		databasePermissions(&onProject, x.t, true)
	case !dbExists:
		onInstance.add("read the instance", PermInstancesGet)
		databasePermissions(&onInstance, x.t, true)
	default:
		onInstance.add("read the instance", PermInstancesGet)
		databasePermissions(&onDatabase, x.t, false)
	}
	x.testIAM(ctx, CheckProjectIAM, x.project(), onProject, x.cl.pc.TestIamPermissions, false)
	switch {
	case x.t.Ephemeral:
		x.r.add(Result{Name: CheckInstanceIAM, Status: Skipped, Detail: "the run creates the instance: its permissions were asked on the project"})
	case !instThere:
		x.r.add(Result{Name: CheckInstanceIAM, Status: Skipped, Detail: "the instance does not exist"})
	default:
		x.testIAM(ctx, CheckInstanceIAM, x.instance(), onInstance, x.cl.ia.TestIamPermissions, false)
	}
	switch {
	case dbExists && dbDenied:
		// Denied GetDatabase: an existing database answers with what is
		// granted; a missing one with nothing (to a caller who may not
		// list databases), and then the run would create it under the
		// instance's grants, so those are asked.
		if x.testIAM(ctx, CheckDatabaseIAM, x.database(), onDatabase, x.cl.da.TestIamPermissions, true) {
			break
		}
		var create need
		databasePermissions(&create, x.t, true)
		x.testIAM(ctx, CheckDatabaseIAM, x.instance(), create, x.cl.ia.TestIamPermissions, false)
	case dbExists:
		x.testIAM(ctx, CheckDatabaseIAM, x.database(), onDatabase, x.cl.da.TestIamPermissions, false)
	default:
		x.r.add(Result{Name: CheckDatabaseIAM, Status: Skipped, Detail: "the database does not exist yet: its permissions were asked on the " + map[bool]string{true: "project", false: "instance"}[x.t.Ephemeral]})
	}
	x.checkQuota(ctx, inst)
}

// call bounds one call in time.
func call[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return f(ctx)
}

func (x *run) configName(inst *instancepb.Instance) string {
	if x.t.Config != "" {
		return x.project() + "/instanceConfigs/" + x.t.Config
	}
	return inst.GetConfig()
}

func (x *run) checkConfig(ctx context.Context, inst *instancepb.Instance) {
	name := x.configName(inst)
	if name == "" {
		x.r.add(Result{Name: CheckInstanceConfig, Status: Skipped, Detail: "the target names no configuration and the instance could not be read"})
		return
	}
	cfg, err := call(ctx, func(ctx context.Context) (*instancepb.InstanceConfig, error) {
		return x.cl.ia.GetInstanceConfig(ctx, &instancepb.GetInstanceConfigRequest{Name: name})
	})
	switch status.Code(err) {
	case codes.OK:
		x.r.add(Result{Name: CheckInstanceConfig, Status: Pass, Detail: fmt.Sprintf("%s exists (%s)", name, cfg.GetDisplayName())})
	case codes.NotFound:
		x.r.add(Result{Name: CheckInstanceConfig, Status: Fail, Detail: name + " does not exist in the project: no instance can be created in it"})
	case codes.PermissionDenied:
		// The project's permissions name what is missing.
		x.r.add(Result{Name: CheckInstanceConfig, Status: Fail, Detail: "may not read " + name + " (see the project's permissions)"})
	default:
		x.r.add(failed(CheckInstanceConfig, "reading "+name+": "+err.Error(), err))
	}
}

func (x *run) checkInstance(err error) {
	code := status.Code(err)
	switch {
	case x.t.Ephemeral && code == codes.NotFound:
		x.r.add(Result{Name: CheckInstance, Status: Pass, Detail: x.instance() + " does not exist: the run creates it"})
	case x.t.Ephemeral && code == codes.OK:
		x.r.add(Result{Name: CheckInstance, Status: Pass, Detail: x.instance() + " exists: the run uses it only if its labels name this run"})
	case code == codes.OK:
		x.r.add(Result{Name: CheckInstance, Status: Pass, Detail: x.instance() + " exists"})
	case code == codes.NotFound:
		x.r.add(Result{Name: CheckInstance, Status: Fail, Detail: x.instance() + " does not exist, and an Existing instance is not created"})
	case x.t.Ephemeral && code == codes.PermissionDenied:
		x.r.add(Result{Name: CheckInstance, Status: Skipped, Detail: "may not read " + x.instance() + " (see the project's permissions)"})
	default:
		x.r.add(failed(CheckInstance, "reading "+x.instance()+": "+err.Error(), err))
	}
}

func (x *run) checkDatabase(err error) {
	if IsTransient(err) {
		// Unanswered, not denied: whether the database exists, and so
		// where its permissions are asked, is not known yet.
		x.r.add(failed(CheckDatabase, "reading "+x.database()+": "+err.Error(), err))
		return
	}
	switch status.Code(err) {
	case codes.OK:
		x.r.add(Result{Name: CheckDatabase, Status: Pass, Detail: x.database() + " exists"})
	case codes.NotFound:
		x.r.add(Result{Name: CheckDatabase, Status: Pass, Detail: x.database() + " does not exist: the run creates it"})
	default:
		// Denied: the instance's permissions say which one.
		x.r.add(Result{Name: CheckDatabase, Status: Skipped, Detail: "could not read " + x.database() + ": " + status.Convert(err).Message()})
	}
}

// testIAM asks resource which of n the identity holds and reports it;
// with unlessNone, an answer of none is left unreported. It returns
// whether it reported.
func (x *run) testIAM(ctx context.Context, name, resource string, n need,
	test func(context.Context, *iampb.TestIamPermissionsRequest, ...gax.CallOption) (*iampb.TestIamPermissionsResponse, error),
	unlessNone bool,
) bool {
	resp, err := call(ctx, func(ctx context.Context) (*iampb.TestIamPermissionsResponse, error) {
		return test(ctx, &iampb.TestIamPermissionsRequest{Resource: resource, Permissions: n.names()})
	})
	if err != nil {
		x.r.add(failed(name, "testIamPermissions on "+resource+": "+err.Error(), err))
		return true
	}
	if unlessNone && len(resp.GetPermissions()) == 0 {
		return false
	}
	res := Result{Name: name, Status: Pass, Detail: fmt.Sprintf("%d of %d granted on %s", len(n), len(n), resource)}
	for _, p := range n {
		if !slices.Contains(resp.GetPermissions(), p.Name) {
			res.Missing = append(res.Missing, missing(resource, p))
		}
	}
	if len(res.Missing) > 0 {
		res.Status = Fail
		res.Detail = fmt.Sprintf("%d of %d granted on %s", len(n)-len(res.Missing), len(n), resource)
	}
	x.r.add(res)
	return true
}

func missing(resource string, p Permission) Missing {
	return Missing{Permission: p, Resource: resource, Role: RoleFor(p.Name)}
}

// checkQuota checks that an Ephemeral instance fits the configuration's
// node limit beside the project's other instances in it.
func (x *run) checkQuota(ctx context.Context, inst *instancepb.Instance) {
	switch {
	case !x.t.Ephemeral:
		x.r.add(Result{Name: CheckNodeQuota, Status: Skipped, Detail: "the run creates no instance"})
		return
	case x.c.nodeQuota <= 0:
		x.r.add(Result{Name: CheckNodeQuota, Status: Skipped, Detail: "no node limit given (--node-quota): not checked"})
		return
	}
	cfg := x.configName(inst)
	used, err := call(ctx, func(ctx context.Context) (int64, error) {
		var pu int64
		it := x.cl.ia.ListInstances(ctx, &instancepb.ListInstancesRequest{Parent: x.project()})
		for {
			in, err := it.Next()
			if err == iterator.Done { //nolint:errorlint // the iterator's sentinel, returned as is
				return pu, nil
			}
			if err != nil {
				return 0, err
			}
			if in.GetConfig() == cfg && in.GetName() != x.instance() {
				pu += int64(in.GetProcessingUnits())
			}
		}
	})
	if err != nil {
		// A denial is named by the project's permissions (instances.list).
		x.r.add(failed(CheckNodeQuota, "listing the project's instances: "+status.Convert(err).Message(), err))
		return
	}
	limit := int64(x.c.nodeQuota) * v1alpha1.NodeProcessingUnits
	detail := fmt.Sprintf("%d processing units in use in %s + %d asked, limit %d (%d nodes)", used, cfg, x.t.ProcessingUnits, limit, x.c.nodeQuota)
	if used+int64(x.t.ProcessingUnits) > limit {
		x.r.add(Result{Name: CheckNodeQuota, Status: Fail, Detail: detail + ": the instance would exceed the quota"})
		return
	}
	x.r.add(Result{Name: CheckNodeQuota, Status: Pass, Detail: detail})
}

// checkEmulator checks what the emulator has: that it answers. It has no
// IAM, no quota, and accepts any configuration name.
func checkEmulator(ctx context.Context, t Target, c config, r *Report) {
	ia, da, err := target.AdminClients(ctx, c.spanner)
	if err != nil {
		r.add(Result{Name: CheckEndpoint, Status: Fail, Detail: err.Error()})
		return
	}
	defer func() { _, _ = ia.Close(), da.Close() }()
	name := "projects/" + t.Project + "/instanceConfigs/" + target.EmulatorConfig
	_, err = call(ctx, func(ctx context.Context) (*instancepb.InstanceConfig, error) {
		return ia.GetInstanceConfig(ctx, &instancepb.GetInstanceConfigRequest{Name: name})
	})
	if err != nil {
		r.add(Result{Name: CheckEndpoint, Status: Fail, Detail: c.spanner.String() + " does not answer: " + err.Error()})
		return
	}
	r.add(Result{Name: CheckEndpoint, Status: Pass, Detail: c.spanner.String() + " answers; it is the emulator, not Cloud Spanner"})
	switch t.Config {
	case "", target.EmulatorConfig:
		r.add(Result{Name: CheckInstanceConfig, Status: Pass, Detail: target.EmulatorConfig + " exists"})
	default:
		r.add(Result{Name: CheckInstanceConfig, Status: Skipped, Detail: "the emulator accepts any configuration name; " + t.Config + " is not checked against Cloud Spanner's"})
	}
	for _, n := range []string{CheckCredentials, CheckProjectIAM, CheckInstanceIAM, CheckDatabaseIAM} {
		r.add(Result{Name: n, Status: Skipped, Detail: "the emulator has no IAM and takes no credentials"})
	}
	r.add(Result{Name: CheckNodeQuota, Status: Skipped, Detail: "the emulator has no quota"})
}

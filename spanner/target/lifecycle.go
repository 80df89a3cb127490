package target

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	instance "cloud.google.com/go/spanner/admin/instance/apiv1"
	"cloud.google.com/go/spanner/admin/instance/apiv1/instancepb"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/spanbench/spanbench/spanner/endpoint"
)

// InstanceAdmin is the part of the Spanner instance admin API that the
// instance lifecycle uses. OpenInstanceAdmin returns the real one; tests of
// error paths the emulator cannot produce (quota, permission) wrap it in a
// fake. Names are resource names ("projects/P/instances/I").
type InstanceAdmin interface {
	// GetInstance reads an instance, labels and state included.
	GetInstance(ctx context.Context, name string) (*instancepb.Instance, error)
	// ListInstances lists a project's instances that match a filter in the
	// API's syntax ("labels.key:value"); "" lists all.
	ListInstances(ctx context.Context, project, filter string) ([]*instancepb.Instance, error)
	// GetInstanceConfig reads an instance configuration.
	GetInstanceConfig(ctx context.Context, name string) (*instancepb.InstanceConfig, error)
	// CreateInstance starts creating an instance. It returns once Spanner
	// accepted the request and either finished it or is still working on it
	// (the instance is then CREATING); an error of the creation itself is
	// returned when it arrives within CreateWait.
	CreateInstance(ctx context.Context, req *instancepb.CreateInstanceRequest) error
	// StartCreateInstance is CreateInstance that keeps the long-running
	// operation: operation is its name ("projects/P/instances/I/operations/O")
	// while Spanner is still working on it after CreateWait, "" when it
	// finished within CreateWait. A creation can still fail after that
	// (quota, permission on the configuration): PollCreateInstance tells.
	StartCreateInstance(ctx context.Context, req *instancepb.CreateInstanceRequest) (operation string, err error)
	// PollCreateInstance reads a creation StartCreateInstance left running.
	// done is false while it runs. Once it has finished, done is true and
	// err is the creation's own error (nil when it succeeded), with its
	// gRPC status. An err with done false is the failure to read the
	// operation (NotFound: Spanner no longer knows it).
	PollCreateInstance(ctx context.Context, operation string) (done bool, err error)
	// DeleteInstance deletes an instance and its databases.
	DeleteInstance(ctx context.Context, name string) error
	// Close releases the connection.
	Close() error
}

// CreateWait is how long CreateInstance waits for the creation to finish
// before it leaves the instance CREATING and returns: a caller polls the
// state rather than holding a reconcile for the minutes a large instance
// can take.
const CreateWait = 5 * time.Second

// OpenInstanceAdmin opens the instance admin API of ep. The caller closes
// it.
func OpenInstanceAdmin(ctx context.Context, ep endpoint.Endpoint) (InstanceAdmin, error) {
	c, err := instance.NewInstanceAdminClient(ctx, ep.ClientOptions()...)
	if err != nil {
		return nil, fmt.Errorf("instance admin client: %w", err)
	}
	return instanceAdmin{c}, nil
}

// instanceAdmin is InstanceAdmin over the generated client.
type instanceAdmin struct{ c *instance.InstanceAdminClient }

func (a instanceAdmin) GetInstance(ctx context.Context, name string) (*instancepb.Instance, error) {
	return a.c.GetInstance(ctx, &instancepb.GetInstanceRequest{Name: name})
}

func (a instanceAdmin) ListInstances(ctx context.Context, project, filter string) ([]*instancepb.Instance, error) {
	it := a.c.ListInstances(ctx, &instancepb.ListInstancesRequest{Parent: "projects/" + project, Filter: filter})
	var out []*instancepb.Instance
	for {
		in, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
}

func (a instanceAdmin) GetInstanceConfig(ctx context.Context, name string) (*instancepb.InstanceConfig, error) {
	return a.c.GetInstanceConfig(ctx, &instancepb.GetInstanceConfigRequest{Name: name})
}

func (a instanceAdmin) CreateInstance(ctx context.Context, req *instancepb.CreateInstanceRequest) error {
	_, err := a.StartCreateInstance(ctx, req)
	return err
}

func (a instanceAdmin) StartCreateInstance(ctx context.Context, req *instancepb.CreateInstanceRequest) (string, error) {
	op, err := a.c.CreateInstance(ctx, req)
	if err != nil {
		return "", err
	}
	wctx, cancel := context.WithTimeout(ctx, CreateWait)
	defer cancel()
	_, err = op.Wait(wctx)
	if err != nil && wctx.Err() != nil && ctx.Err() == nil {
		return op.Name(), nil // still creating: the caller polls the operation
	}
	return "", err
}

func (a instanceAdmin) PollCreateInstance(ctx context.Context, operation string) (bool, error) {
	op := a.c.CreateInstanceOperation(operation)
	_, err := op.Poll(ctx)
	// Poll returns the operation's error once it is done, and the error of
	// reading it (op unchanged, not done) otherwise.
	return op.Done(), err
}

func (a instanceAdmin) DeleteInstance(ctx context.Context, name string) error {
	return a.c.DeleteInstance(ctx, &instancepb.DeleteInstanceRequest{Name: name})
}

func (a instanceAdmin) Close() error { return a.c.Close() }

// Errors of the lifecycle a caller tells apart with errors.Is.
var (
	// ErrInstanceNotFound: the instance does not exist.
	ErrInstanceNotFound = errors.New("instance not found")
	// ErrNotOwned: an instance of that name exists but its labels do not
	// name the run, so spanbench neither adopts nor deletes it.
	ErrNotOwned = errors.New("instance belongs to someone else")
	// ErrConfigNotFound: the instance configuration does not exist in the
	// project.
	ErrConfigNotFound = errors.New("instance configuration not found")
	// ErrStillCreating: the instance does not show yet, but its creation
	// is still running, so it will: deleting it has to wait.
	ErrStillCreating = errors.New("the instance's creation is still running")
)

// Labels of an instance spanbench created for a run. Spanner label keys
// and values are lower case, at most 63 characters of letters, digits, '_'
// and '-'; a run's name (DNS-1035), namespace (DNS-1123) and UID fit as
// they are.
const (
	// LabelRun is the BenchmarkRun's name.
	LabelRun = "spanbench-run"
	// LabelNamespace is the BenchmarkRun's namespace.
	LabelNamespace = "spanbench-namespace"
	// LabelUID is the BenchmarkRun's UID: a new run of the same name is
	// another owner.
	LabelUID = "spanbench-uid"
	// LabelCluster names the Kubernetes cluster whose manager created the
	// instance, so that a sweep by one cluster's manager never deletes the
	// instances of another sharing the project.
	LabelCluster = "spanbench-cluster"
)

// Owner is the BenchmarkRun an ephemeral instance belongs to: the manager's
// cluster, the run's namespace, name and UID, each a label (Labels).
type Owner struct {
	Cluster, Namespace, Run, UID string
}

// Labels are the instance labels that record the owner.
func (o Owner) Labels() map[string]string {
	return map[string]string{LabelCluster: o.Cluster, LabelNamespace: o.Namespace, LabelRun: o.Run, LabelUID: o.UID}
}

// String names the owner for messages.
func (o Owner) String() string { return fmt.Sprintf("run %s/%s (uid %s)", o.Namespace, o.Run, o.UID) }

// Validate checks that every part is a valid Spanner label value.
func (o Owner) Validate() error {
	for k, v := range o.Labels() {
		if !ValidLabelValue(v) || v == "" {
			return fmt.Errorf("instance label %s=%q: a value must be 1 to 63 characters of lower-case letters, digits, '_' and '-'", k, v)
		}
	}
	return nil
}

// ValidLabelValue reports whether Spanner accepts v as a label value.
func ValidLabelValue(v string) bool {
	if len(v) > 63 {
		return false
	}
	for _, c := range v {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// OwnerOf reads the owner from an instance's labels; ok is false when the
// labels do not name a complete owner (not an instance spanbench created).
func OwnerOf(labels map[string]string) (o Owner, ok bool) {
	o = Owner{Cluster: labels[LabelCluster], Namespace: labels[LabelNamespace], Run: labels[LabelRun], UID: labels[LabelUID]}
	return o, o.Cluster != "" && o.Namespace != "" && o.Run != "" && o.UID != ""
}

// InstanceInfo is what Spanner reports about an instance.
type InstanceInfo struct {
	// Project and ID name the instance.
	Project, ID string
	// Config is the instance configuration's ID, such as asia1.
	Config string
	// Nodes is the node count when the instance is sized in whole nodes
	// (0 otherwise); ProcessingUnits its compute capacity.
	Nodes, ProcessingUnits int32
	// Edition is STANDARD, ENTERPRISE or ENTERPRISE_PLUS; "" when Spanner
	// does not say (the emulator).
	Edition string
	// State is CREATING or READY.
	State string
	// Labels are the instance's labels.
	Labels map[string]string
	// Created is true when this call created the instance.
	Created bool
	// CreateOperation is the name of the creation's long-running operation
	// while Spanner still works on it; "" once it finished (or when it
	// finished within CreateWait, or the instance was not created here).
	// A caller keeps it and passes it to the next EnsureOwned, which polls
	// it, so that a creation that fails late fails with Spanner's error.
	CreateOperation string
}

// Ready reports whether the instance serves requests.
func (i InstanceInfo) Ready() bool { return i.State == instancepb.Instance_READY.String() }

// infoOf converts the API's instance.
func infoOf(project string, in *instancepb.Instance) InstanceInfo {
	info := InstanceInfo{
		Project: project, ID: lastSegment(in.GetName()), Config: lastSegment(in.GetConfig()),
		ProcessingUnits: in.GetProcessingUnits(), State: in.GetState().String(), Labels: in.GetLabels(),
	}
	// Spanner reports both for an instance of whole nodes; an instance of
	// processing units below 1000 has no node count.
	if n := in.GetNodeCount(); n > 0 && (info.ProcessingUnits == 0 || info.ProcessingUnits == n*1000) {
		info.Nodes, info.ProcessingUnits = n, n*1000
	}
	if e := in.GetEdition(); e != instancepb.Instance_EDITION_UNSPECIFIED {
		info.Edition = e.String()
	}
	return info
}

func lastSegment(name string) string { return name[strings.LastIndexByte(name, '/')+1:] }

func instanceName(project, id string) string { return "projects/" + project + "/instances/" + id }

// Describe reads an instance as it is; it never changes it.
func Describe(ctx context.Context, admin InstanceAdmin, project, id string) (InstanceInfo, error) {
	in, err := admin.GetInstance(ctx, instanceName(project, id))
	if status.Code(err) == codes.NotFound {
		return InstanceInfo{}, fmt.Errorf("%w: %s in project %s: %w", ErrInstanceNotFound, id, project, err)
	}
	if err != nil {
		return InstanceInfo{}, fmt.Errorf("reading instance %s: %w", instanceName(project, id), err)
	}
	return infoOf(project, in), nil
}

// CheckConfig fails with ErrConfigNotFound when the instance configuration
// does not exist in the project. Only for Cloud Spanner: the emulator lists
// only its own configuration but creates instances of any.
func CheckConfig(ctx context.Context, admin InstanceAdmin, project, config string) error {
	name, err := configName(project, config)
	if err != nil {
		return err
	}
	_, err = admin.GetInstanceConfig(ctx, name)
	if status.Code(err) == codes.NotFound {
		return fmt.Errorf("%w: %s in project %s: %w", ErrConfigNotFound, config, project, err)
	}
	if err != nil {
		return fmt.Errorf("reading instance configuration %s: %w", name, err)
	}
	return nil
}

// configIDPattern is an instance configuration's ID, as the API's
// spec.target.instance.config takes it.
var configIDPattern = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// configName is the full name of instance configuration config, an ID, in
// project. A full name (projects/P/instanceConfigs/ID) is refused, not
// passed through: it could name another project's configuration, and the
// manager's allowlist compares IDs exactly.
func configName(project, config string) (string, error) {
	if !configIDPattern.MatchString(config) {
		return "", fmt.Errorf("instance configuration %q: must be an ID such as asia1 or regional-asia-northeast1, in the run's project", config)
	}
	return "projects/" + project + "/instanceConfigs/" + config, nil
}

// EnsureOwned makes the instance in exist for owner: it creates it, with
// owner's labels, unless it exists. An instance that exists is adopted
// only when its labels name the same owner (a restarted manager finds what
// it created); any other is refused with ErrNotOwned and left alone. The
// instance may still be CREATING when EnsureOwned returns: call it again
// (or poll Describe) until it is Ready.
//
// operation is InstanceInfo.CreateOperation of the previous call ("" if
// none): while the instance is not READY, that creation is polled rather
// than a second one started. When it has failed (quota, permission, an
// edition the configuration refuses), its error is returned, wrapped with
// its gRPC status, and nothing is created again: on Cloud Spanner a
// creation can fail minutes after it was accepted, and the instance then
// never appears.
func EnsureOwned(ctx context.Context, admin InstanceAdmin, in Instance, owner Owner, operation string) (InstanceInfo, error) {
	if err := owner.Validate(); err != nil {
		return InstanceInfo{}, err
	}
	if in.Nodes != 0 && in.ProcessingUnits != 0 {
		return InstanceInfo{}, fmt.Errorf("instance %s: set nodes (%d) or processing units (%d), not both", in.Instance, in.Nodes, in.ProcessingUnits)
	}
	if _, err := configName(in.Project, in.Config); err != nil {
		return InstanceInfo{}, fmt.Errorf("instance %s: %w", in.Instance, err)
	}
	info, err := Describe(ctx, admin, in.Project, in.Instance)
	switch {
	case err == nil:
		if err := checkOwned(info, owner); err != nil {
			return info, err
		}
		if info.Ready() || operation == "" {
			return info, nil
		}
		// CREATING: the creation may yet fail.
		running, err := pollCreation(ctx, admin, in, operation)
		if running {
			info.CreateOperation = operation
		}
		return info, err
	case !errors.Is(err, ErrInstanceNotFound):
		return InstanceInfo{}, err
	}
	if operation != "" {
		running, err := pollCreation(ctx, admin, in, operation)
		if err != nil {
			return InstanceInfo{}, err
		}
		if running {
			// Accepted, not visible yet; do not create it twice.
			return creating(in, owner, operation), nil
		}
		// Done without error, or forgotten by Spanner, and still no
		// instance: create it (again).
	}
	return createOwned(ctx, admin, in, owner)
}

// createOwned creates the instance in with owner's labels; an instance of
// that id created concurrently is adopted only if it is owner's.
func createOwned(ctx context.Context, admin InstanceAdmin, in Instance, owner Owner) (InstanceInfo, error) {
	edition, err := editionOf(in.Edition)
	if err != nil {
		return InstanceInfo{}, err
	}
	config, err := configName(in.Project, in.Config)
	if err != nil {
		return InstanceInfo{}, err
	}
	operation, err := admin.StartCreateInstance(ctx, &instancepb.CreateInstanceRequest{
		Parent:     "projects/" + in.Project,
		InstanceId: in.Instance,
		Instance: &instancepb.Instance{
			Name: instanceName(in.Project, in.Instance), Config: config, DisplayName: displayName(in.Instance),
			NodeCount: in.Nodes, ProcessingUnits: in.ProcessingUnits, Labels: owner.Labels(), Edition: edition,
		},
	})
	if status.Code(err) == codes.AlreadyExists {
		// Created concurrently: adopt it only if it is ours.
		info, err := Describe(ctx, admin, in.Project, in.Instance)
		if err != nil {
			return InstanceInfo{}, err
		}
		return info, checkOwned(info, owner)
	}
	if err != nil {
		return InstanceInfo{}, creationError(in, err)
	}
	info, err := Describe(ctx, admin, in.Project, in.Instance)
	if errors.Is(err, ErrInstanceNotFound) {
		// Accepted, but not visible yet.
		info, err = creating(in, owner, ""), nil
	}
	info.Created = true
	if !info.Ready() {
		info.CreateOperation = operation
	}
	return info, err
}

// pollCreation reads the creation operation of in: running is true while
// Spanner works on it; err is the creation's error once it failed, or the
// failure to read it. An operation Spanner no longer knows (NotFound) is
// neither: the caller goes on as if there were none.
func pollCreation(ctx context.Context, admin InstanceAdmin, in Instance, operation string) (running bool, err error) {
	running, failed, err := readCreation(ctx, admin, instanceName(in.Project, in.Instance), operation)
	if failed != nil {
		return false, fmt.Errorf("%w (operation %s)", creationError(in, failed), operation)
	}
	return running, err
}

// readCreation reads operation, the creation of instance name: running
// while Spanner works on it; failed is the creation's own error once it
// finished with one; err is the failure to read the operation. One Spanner
// no longer knows (NotFound) is none of these.
func readCreation(ctx context.Context, admin InstanceAdmin, name, operation string) (running bool, failed, err error) {
	done, err := admin.PollCreateInstance(ctx, operation)
	switch {
	case done:
		return false, err, nil
	case status.Code(err) == codes.NotFound:
		return false, nil, nil
	case err != nil:
		return false, nil, fmt.Errorf("reading the creation of instance %s (operation %s): %w", name, operation, err)
	}
	return true, nil, nil
}

// creationError wraps the error of a creation Spanner accepted or refused,
// keeping its gRPC status for the caller's classification.
func creationError(in Instance, err error) error {
	name := instanceName(in.Project, in.Instance)
	if status.Code(err) == codes.NotFound {
		// The project exists (the lookup of the instance answered NotFound
		// for the instance alone), so the missing resource is the
		// configuration.
		return fmt.Errorf("%w: creating instance %s with configuration %s: %w", ErrConfigNotFound, name, in.Config, err)
	}
	return fmt.Errorf("creating instance %s: %w", name, err)
}

// creating is an instance Spanner accepted to create but does not show yet.
func creating(in Instance, owner Owner, operation string) InstanceInfo {
	return InstanceInfo{Project: in.Project, ID: in.Instance, Config: lastSegment(in.Config), Nodes: in.Nodes,
		ProcessingUnits: in.ProcessingUnits, State: instancepb.Instance_CREATING.String(), Labels: owner.Labels(), CreateOperation: operation}
}

// editionOf maps an edition name (STANDARD, ENTERPRISE, ENTERPRISE_PLUS,
// or "" for the configuration's default) to the API's value.
func editionOf(name string) (instancepb.Instance_Edition, error) {
	if name == "" {
		return instancepb.Instance_EDITION_UNSPECIFIED, nil
	}
	v, ok := instancepb.Instance_Edition_value[name]
	if !ok || v == int32(instancepb.Instance_EDITION_UNSPECIFIED) {
		return 0, fmt.Errorf("unknown Spanner edition %q", name)
	}
	return instancepb.Instance_Edition(v), nil
}

// checkOwned refuses an instance whose labels do not name owner.
func checkOwned(info InstanceInfo, owner Owner) error {
	if have, ok := OwnerOf(info.Labels); ok && have == owner {
		return nil
	}
	who := "it has no spanbench labels"
	if have, ok := OwnerOf(info.Labels); ok {
		who = "its labels name " + have.String()
		if have.Cluster != owner.Cluster {
			who += " of cluster " + have.Cluster
		}
	}
	return fmt.Errorf("%w: instance %s exists and %s, not %s", ErrNotOwned, instanceName(info.Project, info.ID), who, owner)
}

// DeleteOwned deletes the instance if its labels name owner. It returns
// nil when the instance is gone (deleted now, or absent), and ErrNotOwned,
// without deleting anything, when the instance belongs to someone else.
//
// operation is the instance's creation as EnsureOwned last handed it back
// ("" if none). While that creation runs, an instance that does not show
// yet is not gone: it will appear, and cost, once Spanner has made it, so
// DeleteOwned returns ErrStillCreating and the caller tries again. The
// operation is read before the instance, so that a creation finishing in
// between leaves an instance that is seen and deleted; failing to read it
// matters only when the instance does not show.
func DeleteOwned(ctx context.Context, admin InstanceAdmin, project, id string, owner Owner, operation string) error {
	running, pollErr := creationRunning(ctx, admin, project, id, operation)
	info, err := Describe(ctx, admin, project, id)
	switch {
	case errors.Is(err, ErrInstanceNotFound) && pollErr != nil:
		return pollErr
	case errors.Is(err, ErrInstanceNotFound) && running:
		return fmt.Errorf("%w: instance %s does not show yet (operation %s); it is deleted once it does", ErrStillCreating, instanceName(project, id), operation)
	case errors.Is(err, ErrInstanceNotFound):
		return nil
	case err != nil:
		return err
	}
	if err := checkOwned(info, owner); err != nil {
		return err
	}
	return deleteInstance(ctx, admin, project, id)
}

// creationRunning reads whether operation, an instance creation, is still
// running. One that finished, failed or not, is not.
func creationRunning(ctx context.Context, admin InstanceAdmin, project, id, operation string) (bool, error) {
	if operation == "" {
		return false, nil
	}
	running, _, err := readCreation(ctx, admin, instanceName(project, id), operation)
	return running, err
}

func deleteInstance(ctx context.Context, admin InstanceAdmin, project, id string) error {
	err := admin.DeleteInstance(ctx, instanceName(project, id))
	if err != nil && status.Code(err) != codes.NotFound {
		return fmt.Errorf("deleting instance %s: %w", instanceName(project, id), err)
	}
	return nil
}

// ListOwned lists the project's instances that spanbench of cluster
// created, with their owners. Labels are checked here as well as in the
// filter, so an endpoint that ignores filters (an old emulator) cannot
// widen the result.
func ListOwned(ctx context.Context, admin InstanceAdmin, project, cluster string) ([]InstanceInfo, error) {
	all, err := admin.ListInstances(ctx, project, "labels."+LabelCluster+":"+cluster)
	if err != nil {
		return nil, fmt.Errorf("listing the instances of project %s: %w", project, err)
	}
	var out []InstanceInfo
	for _, in := range all {
		if o, ok := OwnerOf(in.GetLabels()); ok && o.Cluster == cluster {
			out = append(out, infoOf(project, in))
		}
	}
	return out, nil
}

// DeleteOrphan deletes an instance ListOwned returned, after checking once
// more that it still carries the same owner's labels.
func DeleteOrphan(ctx context.Context, admin InstanceAdmin, info InstanceInfo) error {
	owner, ok := OwnerOf(info.Labels)
	if !ok {
		return fmt.Errorf("%w: instance %s has no spanbench labels", ErrNotOwned, info.ID)
	}
	return DeleteOwned(ctx, admin, info.Project, info.ID, owner, "")
}

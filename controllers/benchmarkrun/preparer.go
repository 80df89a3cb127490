package benchmarkrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/target"
	"github.com/spanbench/spanbench/spanner/workload"
)

// TargetPreparer performs the Spanner admin and dataset-marker calls of a
// run. They run in the manager, with its own Application Default
// Credentials; the data calls of the load run in the runner pods. The real
// implementation talks to Spanner or the emulator; tests of error paths the
// emulator cannot produce inject a fake admin client into it.
type TargetPreparer interface {
	// Endpoint is where the run's target is: the emulator it names, or the
	// Cloud Spanner endpoint the manager uses (its --spanner-endpoint). The
	// pods are told it, so they reach the same endpoint as the manager.
	Endpoint(run *v1alpha1.BenchmarkRun) endpoint.Endpoint
	// Instance makes the run's instance usable as its mode says and reports
	// what Spanner says about it; it may still be CREATING. Existing: read,
	// never changed (on the emulator a missing instance is created, which
	// costs nothing). Ephemeral: created with owner's labels unless it
	// exists; an existing one is used only if its labels name owner
	// (target.ErrNotOwned otherwise). While an Ephemeral instance is being
	// created, the creation's operation is InstanceInfo.CreateOperation;
	// the caller records it in status.target.createOperation, and the next
	// call polls it instead of creating again, returning the creation's
	// error (with its gRPC status) if it failed.
	Instance(ctx context.Context, run *v1alpha1.BenchmarkRun, owner target.Owner) (target.InstanceInfo, error)
	// ReleaseInstance deletes the run's instance if its labels name owner.
	// It returns nil once the instance is gone, and target.ErrNotOwned,
	// deleting nothing, for an instance that is not the run's.
	ReleaseInstance(ctx context.Context, run *v1alpha1.BenchmarkRun, owner target.Owner) error
	// Database takes one step towards the run's database with the
	// workload's schema (target.StepDatabase): it starts the creation or
	// schema change the database needs, or polls the one
	// status.target.databaseOperation names, waiting at most
	// databaseStepWait. The caller records Progress.Operation there and
	// calls again until Progress.Done; an operation's failure is returned
	// with its gRPC status. w, here and below, is the run's resolved
	// workload (WorkloadSpec.Resolved).
	Database(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec) (target.DatabaseProgress, error)
	// Prepare, once Database is done, plans the dataset: the database
	// holds it already, or the runners load it. A different dataset is
	// dataset.ErrMismatch unless the spec allows a reload, in which case
	// it is cleared.
	Prepare(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec) (DatasetPlan, error)
	// AddSplitPoints pre-splits the workload's main table at keys;
	// target.ErrSplitPointsUnsupported where the API is missing.
	AddSplitPoints(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec, keys []string) error
	// CompleteDataset records that the loaders loaded the dataset: the
	// markers of the tables they loaded (status.dataset.tables), or of
	// every table.
	CompleteDataset(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec) error
}

// DatasetPlan is what Prepare found and decided about the dataset.
type DatasetPlan struct {
	// Marker is the dataset the database holds once the run is ready.
	Marker dataset.Marker
	// Source is Existing (nothing to load), Loaded or Reloaded.
	Source v1alpha1.DatasetSource
	// DDL is the workload's schema in the database's dialect.
	DDL []string
	// Tables are the tables of a dataset with a marker per table (a
	// Custom workload's), with what the run does with each: the loader
	// pods load only those not Existing. Nil for the built-in workloads.
	Tables []v1alpha1.DatasetTableStatus
}

// SpannerPreparer is the TargetPreparer that talks to Spanner.
type SpannerPreparer struct {
	// Cloud is the Cloud Spanner endpoint of runs that name no emulator
	// (--spanner-endpoint); the zero value is Cloud Spanner's default
	// endpoint. A run that names an emulator is prepared there.
	Cloud endpoint.Endpoint
	// OpenInstanceAdmin opens the instance admin API of an endpoint. nil is
	// target.OpenInstanceAdmin; tests wrap it to inject the errors of a
	// real project (quota, permission).
	OpenInstanceAdmin func(ctx context.Context, ep endpoint.Endpoint) (target.InstanceAdmin, error)
	// OpenDatabaseAdmin opens the database admin API of an endpoint. nil
	// is target.OpenDatabaseAdmin; tests wrap it to hold a schema change
	// as long as Cloud Spanner's take.
	OpenDatabaseAdmin func(ctx context.Context, ep endpoint.Endpoint) (target.DatabaseAdmin, error)
	// Emulators are the emulator addresses the preparer may dial
	// (--allowed-emulator-hosts); every call refuses any other before
	// dialing, with an error wrapping endpoint.ErrNotAllowed. The zero
	// value restricts nothing (tests).
	Emulators endpoint.EmulatorAllowlist
}

// Endpoint implements TargetPreparer.
func (p SpannerPreparer) Endpoint(run *v1alpha1.BenchmarkRun) endpoint.Endpoint {
	return endpoint.For(run.Spec.Target, p.Cloud)
}

// dialable is run's endpoint if the allowlist lets the preparer dial it.
// Every method that connects asks it first: a refused address is never
// dialed, so no dial error about it reaches the run's conditions.
func (p SpannerPreparer) dialable(run *v1alpha1.BenchmarkRun) (endpoint.Endpoint, error) {
	ep := p.Endpoint(run)
	return ep, p.Emulators.Check(ep)
}

// OpenDatabase implements serverfigures.DatabaseOpener: a data session of the run's
// database, on an endpoint the allowlist lets the preparer dial.
func (p SpannerPreparer) OpenDatabase(ctx context.Context, run *v1alpha1.BenchmarkRun) (*session.Session, error) {
	ep, err := p.dialable(run)
	if err != nil {
		return nil, err
	}
	return session.Open(ctx, ep, run.Spec.Target)
}

func (p SpannerPreparer) openInstanceAdmin(ctx context.Context, ep endpoint.Endpoint) (target.InstanceAdmin, error) {
	if p.OpenInstanceAdmin != nil {
		return p.OpenInstanceAdmin(ctx, ep)
	}
	return target.OpenInstanceAdmin(ctx, ep)
}

func (p SpannerPreparer) openDatabaseAdmin(ctx context.Context, ep endpoint.Endpoint) (target.DatabaseAdmin, error) {
	if p.OpenDatabaseAdmin != nil {
		return p.OpenDatabaseAdmin(ctx, ep)
	}
	return target.OpenDatabaseAdmin(ctx, ep)
}

// Instance implements TargetPreparer.
func (p SpannerPreparer) Instance(ctx context.Context, run *v1alpha1.BenchmarkRun, owner target.Owner) (target.InstanceInfo, error) {
	t := run.Spec.Target
	ep, err := p.dialable(run)
	if err != nil {
		return target.InstanceInfo{}, err
	}
	if err := session.Probe(ctx, ep, t); err != nil {
		return target.InstanceInfo{}, err
	}
	admin, err := p.openInstanceAdmin(ctx, ep)
	if err != nil {
		return target.InstanceInfo{}, err
	}
	defer func() { _ = admin.Close() }()
	if t.Instance.Mode != v1alpha1.InstanceEphemeral {
		if ep.IsEmulator() {
			// The emulator creates a missing Existing instance at no cost.
			t.Instance = target.EmulatorInstanceDefaults(t.Instance)
			if err := target.EnsureInstance(ctx, admin, target.InstanceOf(t)); err != nil {
				return target.InstanceInfo{}, err
			}
		}
		info, err := target.Describe(ctx, admin, t.Project, t.Instance.Name)
		if errors.Is(err, target.ErrInstanceNotFound) {
			err = fmt.Errorf("%w; create it, or set spec.target.instance.mode: Ephemeral to have spanbench create one for the run", err)
		}
		return info, err
	}
	if !ep.IsEmulator() {
		// The emulator lists only its own configuration but accepts any.
		if err := target.CheckConfig(ctx, admin, t.Project, t.Instance.Config); err != nil {
			return target.InstanceInfo{}, err
		}
	}
	return target.EnsureOwned(ctx, admin, target.InstanceOf(t), owner, createOperation(run))
}

// createOperation is the run's instance creation still running, as
// status.target records it ("" if none).
func createOperation(run *v1alpha1.BenchmarkRun) string {
	if observed := run.Status.Target; observed != nil {
		return observed.CreateOperation
	}
	return ""
}

// emulatorGoneAfter bounds a deletion on an emulator: one that does not
// answer took its instances with it.
const emulatorGoneAfter = 10 * time.Second

// ReleaseInstance implements TargetPreparer. On the emulator, an emulator
// that does not answer counts as gone: its instances live in its memory
// and cost nothing.
func (p SpannerPreparer) ReleaseInstance(ctx context.Context, run *v1alpha1.BenchmarkRun, owner target.Owner) error {
	t := run.Spec.Target
	ep, err := p.dialable(run)
	if err != nil {
		return err
	}
	if ep.IsEmulator() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, emulatorGoneAfter)
		defer cancel()
	}
	admin, err := p.openInstanceAdmin(ctx, ep)
	if err != nil {
		return err
	}
	defer func() { _ = admin.Close() }()
	err = target.DeleteOwned(ctx, admin, t.Project, t.Instance.Name, owner, createOperation(run))
	if ep.IsEmulator() && unreachable(ctx, err) {
		return nil
	}
	return err
}

// unreachable reports whether err says the endpoint did not answer.
func unreachable(ctx context.Context, err error) bool {
	if err == nil {
		return false
	}
	code := status.Code(err) // unwraps
	return ctx.Err() != nil || code == codes.Unavailable || code == codes.DeadlineExceeded
}

// databaseStepWait is the longest a reconcile waits for the database's
// long-running operation: the emulator's finish within it, Cloud
// Spanner's are polled on later reconciles (databasePollEvery).
const databaseStepWait = time.Second

// Database implements TargetPreparer. The instance is there: Instance
// made it so.
func (p SpannerPreparer) Database(ctx context.Context, run *v1alpha1.BenchmarkRun, spec *v1alpha1.WorkloadSpec) (target.DatabaseProgress, error) {
	t := run.Spec.Target
	ep, err := p.dialable(run)
	if err != nil {
		return target.DatabaseProgress{}, err
	}
	schema, err := workload.SchemaFor(spec, t.Dialect)
	if err != nil {
		return target.DatabaseProgress{}, err
	}
	db, ddl, err := session.DatabaseOf(ep, t, schema)
	if err != nil {
		return target.DatabaseProgress{}, err
	}
	admin, err := p.openDatabaseAdmin(ctx, ep)
	if err != nil {
		return target.DatabaseProgress{}, err
	}
	defer func() { _ = admin.Close() }()
	return target.StepDatabase(ctx, admin, db, ddl, databaseOperation(run), databaseStepWait)
}

// databaseOperation is the run's database operation still running, as
// status.target records it ("" if none).
func databaseOperation(run *v1alpha1.BenchmarkRun) string {
	if observed := run.Status.Target; observed != nil {
		return observed.DatabaseOperation
	}
	return ""
}

// Prepare implements TargetPreparer.
func (p SpannerPreparer) Prepare(ctx context.Context, run *v1alpha1.BenchmarkRun, spec *v1alpha1.WorkloadSpec) (DatasetPlan, error) {
	t := run.Spec.Target
	ep, err := p.dialable(run)
	if err != nil {
		return DatasetPlan{}, err
	}
	schema, err := workload.SchemaFor(spec, t.Dialect)
	if err != nil {
		return DatasetPlan{}, err
	}
	// The database and its schema are there: Database made it so.
	s, err := session.Open(ctx, ep, t)
	if err != nil {
		return DatasetPlan{}, err
	}
	defer s.Close()
	wants := dataset.Wants(schema, *spec.Dataset.Rows)
	// The one decision `spanbench run` makes too: the loader pods then
	// load only the tables it does not keep.
	dp, err := dataset.PlanLoad(ctx, s.Client, schema, spec.Dataset, "spec.workload.dataset.reload")
	if err != nil {
		return DatasetPlan{}, err
	}
	plan := DatasetPlan{Marker: wants[0], Source: v1alpha1.DatasetLoaded, DDL: schema.DDL(), Tables: datasetTables(schema, wants, dp)}
	// status.dataset counts load units, which the loader pods' slices
	// split: a Custom dataset's first table's marker counts its own rows.
	plan.Marker.Rows = *spec.Dataset.Rows
	switch {
	case dp.Complete():
		plan.Source = v1alpha1.DatasetExisting
	case len(dp.Clear) > 0:
		plan.Source = v1alpha1.DatasetReloaded
	}
	return plan, nil
}

// datasetTables are the tables of a dataset with a marker per table
// (wants), each with its rows and what the plan does with it; nil for the
// built-in workloads' one marker.
func datasetTables(schema workload.Schema, wants []dataset.Marker, p dataset.Plan) []v1alpha1.DatasetTableStatus {
	if _, ok := schema.(workload.TableSet); !ok {
		return nil
	}
	var out []v1alpha1.DatasetTableStatus
	for _, m := range wants {
		source := v1alpha1.DatasetExisting
		switch {
		case p.Reloads(m.Table):
			source = v1alpha1.DatasetReloaded
		case slices.Contains(p.LoadTables(), m.Table):
			source = v1alpha1.DatasetLoaded
		}
		out = append(out, v1alpha1.DatasetTableStatus{Name: m.Table, Rows: m.Rows, Source: source})
	}
	return out
}

// AddSplitPoints implements TargetPreparer.
func (p SpannerPreparer) AddSplitPoints(ctx context.Context, run *v1alpha1.BenchmarkRun, spec *v1alpha1.WorkloadSpec, keys []string) error {
	t := run.Spec.Target
	schema, err := workload.SchemaFor(spec, t.Dialect)
	if err != nil {
		return err
	}
	ep, err := p.dialable(run)
	if err != nil {
		return err
	}
	ia, da, err := target.AdminClients(ctx, ep)
	if err != nil {
		return err
	}
	defer ia.Close()
	defer da.Close()
	return target.AddSplitPoints(ctx, da, t.Project, t.Instance.Name, t.Database, schema.Table(), keys)
}

// CompleteDataset implements TargetPreparer.
func (p SpannerPreparer) CompleteDataset(ctx context.Context, run *v1alpha1.BenchmarkRun, spec *v1alpha1.WorkloadSpec) error {
	schema, err := workload.SchemaFor(spec, run.Spec.Target.Dialect)
	if err != nil {
		return err
	}
	ep, err := p.dialable(run)
	if err != nil {
		return err
	}
	s, err := session.Open(ctx, ep, run.Spec.Target)
	if err != nil {
		return err
	}
	defer s.Close()
	load, err := dataset.LoadOf(schema, *spec.Dataset.Rows, loadTables(run))
	if err != nil {
		return err
	}
	return dataset.WriteMarkers(ctx, s.Client, load.Markers)
}

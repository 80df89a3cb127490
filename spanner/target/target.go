// Package target prepares the Spanner instance and database a benchmark
// runs against, the same way for real Cloud Spanner and for the emulator:
// everything goes through the admin APIs and is create-if-absent, so a run
// can be repeated against the same target without manual setup or cleanup.
package target

import (
	"context"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/spanner"
	database "cloud.google.com/go/spanner/admin/database/apiv1"
	"cloud.google.com/go/spanner/admin/database/apiv1/databasepb"
	instance "cloud.google.com/go/spanner/admin/instance/apiv1"
	"cloud.google.com/go/spanner/admin/instance/apiv1/instancepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/endpoint"
)

// AdminOf is InstanceAdmin over an instance admin client the caller
// opened (AdminClients); closing it closes the client.
func AdminOf(c *instance.InstanceAdminClient) InstanceAdmin { return instanceAdmin{c} }

// AdminClients opens the instance and database admin clients of ep.
// The caller closes both clients.
func AdminClients(ctx context.Context, ep endpoint.Endpoint) (*instance.InstanceAdminClient, *database.DatabaseAdminClient, error) {
	opts := ep.ClientOptions()
	ia, err := instance.NewInstanceAdminClient(ctx, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("instance admin client: %w", err)
	}
	da, err := database.NewDatabaseAdminClient(ctx, opts...)
	if err != nil {
		_ = ia.Close()
		return nil, nil, fmt.Errorf("database admin client: %w", err)
	}
	return ia, da, nil
}

// Instance describes the Spanner instance to ensure.
type Instance struct {
	// Project and Instance are IDs, not resource names.
	Project, Instance string
	// Config is an instance configuration's ID (e.g.
	// "regional-asia-northeast1") or its full name
	// ("projects/P/instanceConfigs/ID"). The emulator accepts any ID.
	Config string
	// Nodes or ProcessingUnits sizes the instance; set at most one (Spanner
	// refuses both). Processing units are multiples of 100 below 1000 and of
	// 1000 from there on; one node is 1000 processing units.
	Nodes, ProcessingUnits int32
	// Edition is STANDARD, ENTERPRISE or ENTERPRISE_PLUS; "" leaves the
	// configuration's default. It applies to an instance being created.
	Edition string
}

// InstanceOf is the instance a target asks for, edition included: the
// one conversion from spec.target to an Instance.
func InstanceOf(t v1alpha1.TargetSpec) Instance {
	in := Instance{Project: t.Project, Instance: t.Instance.Name, Config: t.Instance.Config, Edition: t.Instance.Edition.APIName()}
	if t.Instance.Nodes != nil {
		in.Nodes = *t.Instance.Nodes
	}
	if t.Instance.ProcessingUnits != nil {
		in.ProcessingUnits = *t.Instance.ProcessingUnits
	}
	return in
}

// EmulatorConfig is the one instance configuration the emulator lists.
const EmulatorConfig = "emulator-config"

// EmulatorInstanceDefaults fills what an instance spec may leave out and an
// instance on the emulator needs: the emulator's own configuration and one
// node (the emulator creates instances at no cost, so a target on it need
// not size one). Fields that are set are kept.
func EmulatorInstanceDefaults(s v1alpha1.InstanceSpec) v1alpha1.InstanceSpec {
	if s.Config == "" {
		s.Config = EmulatorConfig
	}
	if s.Nodes == nil && s.ProcessingUnits == nil {
		one := int32(1)
		s.Nodes = &one
	}
	return s
}

// EnsureInstance creates the instance unless it exists, and waits until it
// is READY; ctx bounds the wait (on real Spanner it can take minutes). An
// instance that exists, or that appears concurrently (AlreadyExists), is
// success and is left as it is, even if its config or size differ from in:
// changing a live instance is not this helper's job. The instance carries
// no owner labels: use EnsureOwned for one that belongs to a run.
func EnsureInstance(ctx context.Context, admin InstanceAdmin, in Instance) error {
	if in.Project == "" || in.Instance == "" || in.Config == "" {
		return fmt.Errorf("ensure instance: project (%q), instance (%q) and config (%q) are required",
			in.Project, in.Instance, in.Config)
	}
	if in.Nodes != 0 && in.ProcessingUnits != 0 {
		return fmt.Errorf("ensure instance %s: set nodes (%d) or processing units (%d), not both",
			in.Instance, in.Nodes, in.ProcessingUnits)
	}
	edition, err := editionOf(in.Edition)
	if err != nil {
		return fmt.Errorf("ensure instance %s: %w", in.Instance, err)
	}
	config, err := configName(in.Project, in.Config)
	if err != nil {
		return fmt.Errorf("ensure instance %s: %w", in.Instance, err)
	}
	parent := "projects/" + in.Project
	name := parent + "/instances/" + in.Instance
	// Look first, so that reusing an existing instance needs no permission
	// to create one.
	_, err = admin.GetInstance(ctx, name)
	if err == nil {
		return nil
	}
	if status.Code(err) != codes.NotFound {
		return fmt.Errorf("get instance %s: %w", name, err)
	}
	err = admin.CreateInstance(ctx, &instancepb.CreateInstanceRequest{
		Parent:     parent,
		InstanceId: in.Instance,
		Instance: &instancepb.Instance{
			Name:            name,
			Config:          config,
			DisplayName:     displayName(in.Instance),
			NodeCount:       in.Nodes,
			ProcessingUnits: in.ProcessingUnits,
			Edition:         edition,
		},
	})
	if status.Code(err) == codes.AlreadyExists {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create instance %s: %w", name, err)
	}
	return waitReady(ctx, admin, in.Project, in.Instance)
}

// waitReady polls the instance until it is READY or ctx ends.
func waitReady(ctx context.Context, admin InstanceAdmin, project, id string) error {
	for {
		info, err := Describe(ctx, admin, project, id)
		if err == nil && info.Ready() {
			return nil
		}
		select {
		case <-ctx.Done():
			last := info.State
			if err != nil {
				last = err.Error()
			}
			return fmt.Errorf("waiting for instance %s to be READY (last seen: %s): %w", instanceName(project, id), last, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// displayName derives the display name Spanner requires (4 to 30
// characters) from an instance ID (2 to 64 characters).
func displayName(id string) string {
	if len(id) < 4 {
		id = "spanbench-" + id
	}
	if len(id) > 30 {
		id = id[:30]
	}
	return id
}

// Database is a database for EnsureDatabase.
type Database struct {
	// Project, Instance and Database are IDs, not resource names.
	Project, Instance, Database string
	// Dialect is the database's SQL dialect ("" is GoogleSQL), which its
	// DDL is written in.
	Dialect v1alpha1.Dialect
	// Endpoint is where the database is. It reaches the database with a
	// data client when GetDatabase does not report an existing database's
	// dialect (the emulator never does).
	Endpoint endpoint.Endpoint
}

// name is the database's resource name.
func (d Database) name() string {
	return "projects/" + d.Project + "/instances/" + d.Instance + "/databases/" + d.Database
}

// ErrDialectMismatch says the database exists in another SQL dialect than
// the one asked for. A database's dialect cannot be changed.
var ErrDialectMismatch = errors.New("database dialect mismatch")

// ErrDatabaseBusy says the database cannot take spanbench's schema change
// now but may later: another schema change is running, or the database is
// still being created or restored. The DDL spanbench sends is its own and
// valid, so FailedPrecondition and Aborted from CreateDatabase and
// UpdateDatabaseDdl mean that; the original error stays in the chain.
var ErrDatabaseBusy = errors.New("database busy")

// busy marks err as ErrDatabaseBusy when its gRPC code says so.
func busy(err error) error {
	switch status.Code(err) {
	case codes.FailedPrecondition, codes.Aborted:
		return fmt.Errorf("%w: %w", ErrDatabaseBusy, err)
	}
	return err
}

// EnsureDatabase creates the database in db.Dialect with ddl unless it
// exists. A GoogleSQL database gets ddl with its creation; a PostgreSQL one
// is created empty and gets ddl afterwards (Spanner takes no extra
// statements with a PostgreSQL CREATE DATABASE). An existing database must
// have db.Dialect (ErrDialectMismatch otherwise); then only the statements
// that create an object (table, index, view, change stream, sequence, ...)
// the database lacks are applied, found by name in GetDatabaseDdl; existing
// objects are not altered, even if their definition differs. On an
// existing database every statement must therefore be a CREATE of a named
// object: for others (ALTER ..., DROP ...) it cannot tell whether they were
// applied, and returns an error without applying anything. A database that
// cannot take the schema change now is ErrDatabaseBusy. ctx bounds the
// wait for the schema change.
//
// It loops on StepDatabase, the one owner of these steps, which a
// reconciler calls once per reconcile instead.
func EnsureDatabase(ctx context.Context, admin DatabaseAdmin, db Database, ddl []string) error {
	operation := ""
	for {
		p, err := StepDatabase(ctx, admin, db, ddl, operation, ensureStepWait)
		switch {
		case err == nil && p.Done:
			return nil
		case ctx.Err() != nil && p.Operation != "":
			// Still running (or no longer readable) when ctx ended.
			return fmt.Errorf("waiting for database %s (%s): %w", db.name(), p.Describe(db.Database), ctx.Err())
		case err != nil:
			return err
		}
		operation = p.Operation
	}
}

// ensureStepWait is how long EnsureDatabase's steps wait for an operation:
// each step ends by reading the database afresh, so a longer wait saves
// calls.
const ensureStepWait = 10 * time.Second

// apiDialects are the admin API's names of the dialects.
var apiDialects = map[v1alpha1.Dialect]databasepb.DatabaseDialect{
	v1alpha1.DialectGoogleSQL:  databasepb.DatabaseDialect_GOOGLE_STANDARD_SQL,
	v1alpha1.DialectPostgreSQL: databasepb.DatabaseDialect_POSTGRESQL,
}

// checkDialect refuses an existing database whose dialect is not
// db.Dialect. got is GetDatabase's answer, nil if there is none; where it
// does not say the dialect (the emulator), the database itself is asked.
func checkDialect(ctx context.Context, db Database, got *databasepb.Database) error {
	want := db.Dialect.OrDefault()
	have, err := dialectOf(got)
	if err != nil {
		have, err = queryDialect(ctx, db)
	}
	if err != nil {
		// A database still being created or restored answers
		// FailedPrecondition.
		return fmt.Errorf("reading the dialect of database %s: %w", db.name(), busy(err))
	}
	if have != want {
		return fmt.Errorf("%w: database %s is %s, the spec asks for %s (spec.target.dialect); "+
			"set the dialect the database has, or use another database", ErrDialectMismatch, db.name(), have, want)
	}
	return nil
}

// dialectOf is the dialect GetDatabase reports, an error when it reports
// none.
func dialectOf(got *databasepb.Database) (v1alpha1.Dialect, error) {
	for d, api := range apiDialects {
		if got.GetDatabaseDialect() == api {
			return d, nil
		}
	}
	return "", fmt.Errorf("GetDatabase reports dialect %s", got.GetDatabaseDialect())
}

// queryDialect asks the database for its dialect through a data client:
// INFORMATION_SCHEMA.DATABASE_OPTIONS holds it, queried the same way in
// both dialects.
func queryDialect(ctx context.Context, db Database) (v1alpha1.Dialect, error) {
	c, err := db.Endpoint.NewClient(ctx, db.name(), spanner.ClientConfig{DisableNativeMetrics: true})
	if err != nil {
		return "", err
	}
	defer c.Close()
	row, err := c.Single().Query(ctx, spanner.Statement{
		SQL: "SELECT option_value FROM information_schema.database_options WHERE option_name = 'database_dialect'"}).Next()
	if err != nil {
		return "", err
	}
	var name string
	if err := row.Columns(&name); err != nil {
		return "", err
	}
	for d, api := range apiDialects {
		if name == api.String() {
			return d, nil
		}
	}
	return "", fmt.Errorf("the database reports dialect %q", name)
}

// missingStatements returns, in order, the statements of ddl whose object
// the database lacks.
func missingStatements(ctx context.Context, admin DatabaseAdmin, name string, ddl []string) ([]string, error) {
	statements, err := admin.GetDatabaseDdl(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("get ddl of %s: %w", name, err)
	}
	have := map[object]bool{}
	for _, s := range statements {
		if o, ok := createdObject(s); ok {
			have[o] = true
		}
	}
	var missing []string
	var unknown []error
	for _, s := range ddl {
		o, ok := createdObject(s)
		switch {
		case !ok:
			unknown = append(unknown, fmt.Errorf("%q", s))
		case !have[o]:
			missing = append(missing, s)
			have[o] = true // a repeated statement is applied once
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("database %s exists and these statements create no named object, so whether they were applied is unknown: %w",
			name, errors.Join(unknown...))
	}
	return missing, nil
}

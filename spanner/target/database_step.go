package target

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/longrunning/autogen/longrunningpb"
	database "cloud.google.com/go/spanner/admin/database/apiv1"
	"cloud.google.com/go/spanner/admin/database/apiv1/databasepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/endpoint"
)

// DatabaseAdmin is the part of the Spanner database admin API that makes a
// database and its schema. OpenDatabaseAdmin returns the real one; tests
// of a schema change that takes minutes (Cloud Spanner's do, the
// emulator's finish at once) wrap it in a fake. Names are resource names.
type DatabaseAdmin interface {
	// GetDatabase reads a database, its state included.
	GetDatabase(ctx context.Context, name string) (*databasepb.Database, error)
	// GetDatabaseDdl reads the statements of a database's schema.
	GetDatabaseDdl(ctx context.Context, name string) ([]string, error)
	// StartCreateDatabase sends CreateDatabase and returns the name of its
	// long-running operation without waiting for it.
	StartCreateDatabase(ctx context.Context, req *databasepb.CreateDatabaseRequest) (operation string, err error)
	// StartUpdateDatabaseDdl sends UpdateDatabaseDdl and returns the name
	// of its long-running operation without waiting for it.
	StartUpdateDatabaseDdl(ctx context.Context, req *databasepb.UpdateDatabaseDdlRequest) (operation string, err error)
	// GetOperation reads a database's long-running operation.
	GetOperation(ctx context.Context, name string) (*longrunningpb.Operation, error)
	// Close releases the connection.
	Close() error
}

// OpenDatabaseAdmin opens the database admin API of ep. The caller closes
// it.
func OpenDatabaseAdmin(ctx context.Context, ep endpoint.Endpoint) (DatabaseAdmin, error) {
	c, err := database.NewDatabaseAdminClient(ctx, ep.ClientOptions()...)
	if err != nil {
		return nil, fmt.Errorf("database admin client: %w", err)
	}
	return databaseAdmin{c}, nil
}

// DatabaseAdminOf is DatabaseAdmin over a database admin client the caller
// opened (AdminClients); closing it closes the client.
func DatabaseAdminOf(c *database.DatabaseAdminClient) DatabaseAdmin { return databaseAdmin{c} }

// databaseAdmin is DatabaseAdmin over the generated client.
type databaseAdmin struct{ c *database.DatabaseAdminClient }

func (a databaseAdmin) GetDatabase(ctx context.Context, name string) (*databasepb.Database, error) {
	return a.c.GetDatabase(ctx, &databasepb.GetDatabaseRequest{Name: name})
}

func (a databaseAdmin) GetDatabaseDdl(ctx context.Context, name string) ([]string, error) {
	resp, err := a.c.GetDatabaseDdl(ctx, &databasepb.GetDatabaseDdlRequest{Database: name})
	return resp.GetStatements(), err
}

func (a databaseAdmin) StartCreateDatabase(ctx context.Context, req *databasepb.CreateDatabaseRequest) (string, error) {
	op, err := a.c.CreateDatabase(ctx, req)
	if err != nil {
		return "", err
	}
	return op.Name(), nil
}

func (a databaseAdmin) StartUpdateDatabaseDdl(ctx context.Context, req *databasepb.UpdateDatabaseDdlRequest) (string, error) {
	op, err := a.c.UpdateDatabaseDdl(ctx, req)
	if err != nil {
		return "", err
	}
	return op.Name(), nil
}

func (a databaseAdmin) GetOperation(ctx context.Context, name string) (*longrunningpb.Operation, error) {
	return a.c.GetOperation(ctx, &longrunningpb.GetOperationRequest{Name: name})
}

func (a databaseAdmin) Close() error { return a.c.Close() }

// DatabaseProgress is where making a database and its schema stands after
// a StepDatabase.
type DatabaseProgress struct {
	// Done is true once the database exists in its dialect with every
	// statement applied.
	Done bool
	// Operation is the long-running operation still working on it
	// ("projects/P/instances/I/databases/D/operations/O"); "" when none is.
	// The caller passes it to the next StepDatabase, which polls it
	// instead of starting the change again.
	Operation string
	// Creating is true while Operation creates the database; otherwise it
	// applies DDL to an existing one.
	Creating bool
	// Statements is the number of DDL statements Operation applies, and
	// Applied how many of them Spanner has committed so far (from the
	// operation's UpdateDatabaseDdlMetadata; a creation reports none).
	Statements, Applied int
}

// Describe says, for a condition's message, what is under way on database
// id. It changes only when the progress does, so that a reconciler that
// writes it into a status does not write on every poll.
func (p DatabaseProgress) Describe(id string) string {
	switch {
	case p.Done:
		return fmt.Sprintf("database %s and its schema are ready", id)
	case p.Creating && p.Statements > 0:
		return fmt.Sprintf("creating database %s with the workload's schema (%d DDL statements)", id, p.Statements)
	case p.Creating:
		return fmt.Sprintf("creating database %s", id)
	case p.Statements == 0: // not read yet
		return fmt.Sprintf("waiting for operation %s on database %s", p.Operation, id)
	}
	return fmt.Sprintf("applying the workload's schema to database %s: %d of %d DDL statements applied", id, p.Applied, p.Statements)
}

// Reads of an operation within one step's wait start operationPollFirst
// apart and double up to operationPollMax: an emulator's finish at once,
// Cloud Spanner's take minutes and its admin API is rate-limited.
const (
	operationPollFirst = 250 * time.Millisecond
	operationPollMax   = 5 * time.Second
)

// StepDatabase takes one step towards the database db with ddl, as
// EnsureDatabase describes, without waiting longer than wait for a
// long-running operation: it starts the creation or the schema change the
// database needs, or polls the one operation names (Progress.Operation of
// the previous step; "" if none), and returns. Progress.Done is true once
// nothing is left to do. A reconciler calls it once per reconcile with a
// short wait, so that a schema change of minutes holds no worker; a CLI
// loops on it (EnsureDatabase).
//
// An operation that failed returns its error, with its gRPC status, as
// the synchronous calls would have ("create database ...: wait: ..."); one
// Spanner no longer knows is forgotten and the database looked at afresh.
// While the operation cannot be read, Progress.Operation keeps it.
func StepDatabase(ctx context.Context, admin DatabaseAdmin, db Database, ddl []string, operation string, wait time.Duration) (DatabaseProgress, error) {
	dialect := db.Dialect.OrDefault()
	apiDialect, ok := apiDialects[dialect]
	if !ok {
		return DatabaseProgress{}, fmt.Errorf("ensure database %s: unknown dialect %q", db.Database, db.Dialect)
	}
	if operation != "" {
		if p, err := awaitOperation(ctx, admin, db, operation, wait); err != nil || p.Operation != "" {
			return withStatements(p, dialect, ddl), err
		}
	}
	name := db.name()
	got, err := admin.GetDatabase(ctx, name)
	switch {
	case status.Code(err) == codes.NotFound:
		p, created, err := startCreate(ctx, admin, db, apiDialect, ddl, wait)
		if err != nil || p.Operation != "" {
			return withStatements(p, dialect, ddl), err
		}
		if created && dialect == v1alpha1.DialectGoogleSQL {
			return DatabaseProgress{Done: true}, nil // the DDL came with the creation
		}
		if !created { // created concurrently: check it like any other
			if err := checkDialect(ctx, db, nil); err != nil {
				return DatabaseProgress{}, err
			}
		}
	case err != nil:
		return DatabaseProgress{}, fmt.Errorf("get database %s: %w", name, err)
	case got.GetState() == databasepb.Database_CREATING:
		// Not by an operation of ours that we know of.
		return DatabaseProgress{}, fmt.Errorf("%w: database %s is still being created or restored", ErrDatabaseBusy, name)
	default:
		if err := checkDialect(ctx, db, got); err != nil {
			return DatabaseProgress{}, err
		}
	}
	return startSchemaChange(ctx, admin, db, ddl, wait)
}

// withStatements counts the statements a running creation applies, which
// its metadata does not say: a GoogleSQL database gets ddl with its
// creation, a PostgreSQL one none.
func withStatements(p DatabaseProgress, dialect v1alpha1.Dialect, ddl []string) DatabaseProgress {
	if p.Creating && dialect == v1alpha1.DialectGoogleSQL {
		p.Statements = len(ddl)
	}
	return p
}

// startCreate starts creating db, with ddl for GoogleSQL, and waits up to
// wait for it. created is false when it appeared concurrently
// (AlreadyExists).
func startCreate(ctx context.Context, admin DatabaseAdmin, db Database, dialect databasepb.DatabaseDialect, ddl []string,
	wait time.Duration) (p DatabaseProgress, created bool, err error) {
	req := &databasepb.CreateDatabaseRequest{Parent: "projects/" + db.Project + "/instances/" + db.Instance, DatabaseDialect: dialect}
	if dialect == databasepb.DatabaseDialect_POSTGRESQL {
		req.CreateStatement = `CREATE DATABASE "` + db.Database + `"`
	} else {
		req.CreateStatement, req.ExtraStatements = "CREATE DATABASE `"+db.Database+"`", ddl
	}
	operation, err := admin.StartCreateDatabase(ctx, req)
	switch {
	case status.Code(err) == codes.AlreadyExists:
		return DatabaseProgress{}, false, nil
	case err != nil:
		return DatabaseProgress{}, false, fmt.Errorf("create database %s: %w", db.name(), busy(err))
	}
	p, err = awaitOperation(ctx, admin, db, operation, wait)
	return p, err == nil, err
}

// startSchemaChange applies the statements of ddl whose object db lacks,
// and waits up to wait for the change.
func startSchemaChange(ctx context.Context, admin DatabaseAdmin, db Database, ddl []string, wait time.Duration) (DatabaseProgress, error) {
	name := db.name()
	missing, err := missingStatements(ctx, admin, name, ddl)
	if err != nil || len(missing) == 0 {
		return DatabaseProgress{Done: err == nil}, err
	}
	operation, err := admin.StartUpdateDatabaseDdl(ctx, &databasepb.UpdateDatabaseDdlRequest{Database: name, Statements: missing})
	if err != nil {
		return DatabaseProgress{}, fmt.Errorf("update ddl of %s: %w", name, busy(err))
	}
	p, err := awaitOperation(ctx, admin, db, operation, wait)
	if err == nil && p.Operation == "" {
		p.Done = true
	}
	return p, err
}

// awaitOperation reads operation, db's creation or schema change, until
// it is done or wait has passed (at least once). The progress it returns
// names the operation while it runs; Operation is "" once it finished
// (also when Spanner no longer knows it), and err is then its error.
func awaitOperation(ctx context.Context, admin DatabaseAdmin, db Database, operation string, wait time.Duration) (DatabaseProgress, error) {
	until, every := time.Now().Add(wait), operationPollFirst
	for {
		op, err := admin.GetOperation(ctx, operation)
		switch {
		case status.Code(err) == codes.NotFound:
			return DatabaseProgress{}, nil
		case err != nil:
			return DatabaseProgress{Operation: operation}, fmt.Errorf("reading operation %s on database %s: %w", operation, db.name(), err)
		case op.GetDone():
			return DatabaseProgress{}, operationError(db, op)
		}
		left := time.Until(until)
		if left <= 0 {
			return progressOf(op), nil
		}
		select {
		case <-ctx.Done():
			return progressOf(op), nil
		case <-time.After(min(left, every)):
		}
		every = min(2*every, operationPollMax)
	}
}

// operationError is a finished operation's error, worded as the
// synchronous call's wait would have worded it, with its gRPC status.
func operationError(db Database, op *longrunningpb.Operation) error {
	if op.GetError() == nil {
		return nil
	}
	err := busy(status.ErrorProto(op.GetError()))
	if op.GetMetadata().MessageIs(&databasepb.CreateDatabaseMetadata{}) {
		return fmt.Errorf("create database %s: wait: %w", db.name(), err)
	}
	return fmt.Errorf("update ddl of %s: wait: %w", db.name(), err)
}

// progressOf reads a running operation's metadata.
func progressOf(op *longrunningpb.Operation) DatabaseProgress {
	p := DatabaseProgress{Operation: op.GetName()}
	var create databasepb.CreateDatabaseMetadata
	if op.GetMetadata().UnmarshalTo(&create) == nil {
		p.Creating = true
		return p
	}
	var update databasepb.UpdateDatabaseDdlMetadata
	if op.GetMetadata().UnmarshalTo(&update) == nil {
		p.Statements, p.Applied = len(update.GetStatements()), len(update.GetCommitTimestamps())
	}
	return p
}

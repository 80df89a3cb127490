package target_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/spanbench/spanbench/internal/emulatortest"
	"github.com/spanbench/spanbench/internal/slowddlfake"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/target"
)

// The emulator finishes every database operation within its call; Cloud
// Spanner's take tens of seconds to minutes. These tests hold the
// emulator's operations open with slowddlfake to see the steps between.

var stepDDL = []string{
	"CREATE TABLE usertable (id STRING(MAX) NOT NULL, field0 STRING(MAX)) PRIMARY KEY (id)",
	"CREATE INDEX usertable_by_field0 ON usertable(field0)",
	"CREATE TABLE other (id INT64 NOT NULL) PRIMARY KEY (id)",
}

// stepTarget starts an emulator with an instance and returns the real
// database admin wrapped in hold, and the database to make there.
func stepTarget(t *testing.T, hold *slowddlfake.Hold) (context.Context, target.DatabaseAdmin, target.Database) {
	t.Helper()
	e := emulatortest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	ep := endpoint.Emulator(e.Host())
	ia, err := target.OpenInstanceAdmin(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ia.Close() })
	if err := target.EnsureInstance(ctx, ia, target.Instance{Project: "p", Instance: "inst", Config: "emulator-config", Nodes: 1}); err != nil {
		t.Fatal(err)
	}
	da, err := target.OpenDatabaseAdmin(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = da.Close() })
	return ctx, hold.Wrap(da), target.Database{Project: "p", Instance: "inst", Database: "bench", Endpoint: ep}
}

// schemaStatements counts the statements of the database's schema.
func schemaStatements(ctx context.Context, t *testing.T, admin target.DatabaseAdmin) int {
	t.Helper()
	stmts, err := admin.GetDatabaseDdl(ctx, "projects/p/instances/inst/databases/bench")
	if err != nil {
		t.Fatal(err)
	}
	return len(stmts)
}

func TestStepDatabaseStartsACreationAndPollsItWithoutWaitingForIt(t *testing.T) {
	hold := slowddlfake.NewHold()
	ctx, admin, db := stepTarget(t, hold)

	p, err := target.StepDatabase(ctx, admin, db, stepDDL, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Done || !p.Creating || p.Operation == "" || p.Statements != len(stepDDL) {
		t.Fatalf("first step on a held creation: %+v; want it running, creating with %d statements, its operation named", p, len(stepDDL))
	}
	if got, want := p.Describe("bench"), "creating database bench with the workload's schema (3 DDL statements)"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	again, err := target.StepDatabase(ctx, admin, db, stepDDL, p.Operation, 0)
	if err != nil || again != p {
		t.Fatalf("polling the held creation: %+v, %v; want %+v unchanged (nothing started again)", again, err, p)
	}

	hold.Release()
	done, err := target.StepDatabase(ctx, admin, db, stepDDL, p.Operation, 0)
	if err != nil || !done.Done || done.Operation != "" {
		t.Fatalf("step after the creation finished: %+v, %v; want done", done, err)
	}
	if n := schemaStatements(ctx, t, admin); n != len(stepDDL) {
		t.Errorf("database has %d statements, want %d", n, len(stepDDL))
	}
}

func TestStepDatabaseReportsHowManyStatementsASchemaChangeApplied(t *testing.T) {
	hold := slowddlfake.NewHold()
	ctx, admin, db := stepTarget(t, hold)
	hold.Release() // the creation, with the first statement, goes through
	if err := target.EnsureDatabase(ctx, admin, db, stepDDL[:1]); err != nil {
		t.Fatal(err)
	}

	hold = slowddlfake.NewHold()
	admin = hold.Wrap(admin)
	p, err := target.StepDatabase(ctx, admin, db, stepDDL, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Done || p.Creating || p.Statements != 2 || p.Applied != 0 {
		t.Fatalf("held schema change: %+v; want 0 of the 2 missing statements applied", p)
	}
	hold.Applied(1)
	p, err = target.StepDatabase(ctx, admin, db, stepDDL, p.Operation, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Describe("bench"), "applying the workload's schema to database bench: 1 of 2 DDL statements applied"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	hold.Release()
	if p, err = target.StepDatabase(ctx, admin, db, stepDDL, p.Operation, 0); err != nil || !p.Done {
		t.Fatalf("step after the schema change finished: %+v, %v; want done", p, err)
	}
	if n := schemaStatements(ctx, t, admin); n != 3 {
		t.Errorf("database has %d statements, want 3", n)
	}
}

func TestStepDatabaseReturnsTheErrorOfAnOperationThatFailedLate(t *testing.T) {
	hold := slowddlfake.NewHold()
	hold.FailWith(status.Error(codes.PermissionDenied, "spanner.databases.create denied (injected)"))
	ctx, admin, db := stepTarget(t, hold)
	p, err := target.StepDatabase(ctx, admin, db, stepDDL, "", 0)
	if err != nil || p.Operation == "" {
		t.Fatalf("first step: %+v, %v; want the creation running", p, err)
	}
	hold.Release()
	p, err = target.StepDatabase(ctx, admin, db, stepDDL, p.Operation, 0)
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(err.Error(), "create database projects/p/instances/inst/databases/bench: wait:") {
		t.Errorf("step on the failed creation: %v; want PermissionDenied, worded as the creation's wait", err)
	}
	if p.Operation != "" {
		t.Errorf("a failed operation is still named: %q", p.Operation)
	}
}

func TestStepDatabaseForgetsAnOperationSpannerNoLongerKnows(t *testing.T) {
	ctx, admin, db := stepTarget(t, slowddlfake.NewHold("none"))
	p, err := target.StepDatabase(ctx, admin, db, stepDDL, "projects/p/instances/inst/databases/bench/operations/gone", 0)
	if err != nil || !p.Done {
		t.Fatalf("step with a forgotten operation: %+v, %v; want the database created afresh", p, err)
	}
}

func TestEnsureDatabaseWaitsForASlowCreation(t *testing.T) {
	hold := slowddlfake.NewHold("bench")
	ctx, admin, db := stepTarget(t, hold)

	// Never finished: the caller's deadline ends the wait, saying how far
	// it got.
	short, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer cancel()
	err := target.EnsureDatabase(short, admin, db, stepDDL)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "creating database bench") {
		t.Fatalf("EnsureDatabase on a creation that never finishes: %v; want the deadline, saying the database is being created", err)
	}

	// Finished while it waits: it returns once the operation is done.
	hold = slowddlfake.NewHold("bench2")
	admin = hold.Wrap(admin)
	db.Database = "bench2"
	go func() {
		<-hold.Started()
		hold.Release()
	}()
	if err := target.EnsureDatabase(ctx, admin, db, stepDDL); err != nil {
		t.Fatalf("EnsureDatabase on a creation released while it waits: %v", err)
	}
}

package target

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/spanner/admin/database/apiv1/databasepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/emulatortest"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/workload"
)

// workloadDDL is what spanbench applies for a workload type in dialect d:
// the workload's schema and the dataset marker table.
func workloadDDL(t *testing.T, typ v1alpha1.WorkloadType, d v1alpha1.Dialect) []string {
	t.Helper()
	rows, rate := int64(10), int32(1)
	spec := &v1alpha1.WorkloadSpec{Type: typ, Dataset: v1alpha1.DatasetSpec{Rows: &rows},
		Operations: []v1alpha1.OperationSpec{{Type: v1alpha1.OpRead, Weight: 1}}, Load: v1alpha1.LoadSpec{Rate: &rate},
		Duration: &metav1.Duration{Duration: 1}}
	*spec = spec.Resolved()
	s, err := workload.SchemaFor(spec, d)
	if err != nil {
		t.Fatal(err)
	}
	return append(s.DDL(), dataset.MarkerDDL(d))
}

// TestEnsureDatabaseCreatesAPostgreSQLDatabaseOnce creates a PostgreSQL
// database with both workloads' schemas on the emulator, checks its
// dialect and objects, and that a second call finds every object in the
// DDL the database returns (normalised: character varying, PRIMARY
// KEY("Id")) and so applies nothing.
func TestEnsureDatabaseCreatesAPostgreSQLDatabaseOnce(t *testing.T) {
	e := emulatortest.Start(t)
	ctx, ia, da := adminClients(t, e)
	if err := EnsureInstance(ctx, AdminOf(ia), Instance{Project: "p", Instance: "inst", Config: "emulator-config", Nodes: 1}); err != nil {
		t.Fatal(err)
	}
	db := Database{Project: "p", Instance: "inst", Database: "pg-db", Dialect: v1alpha1.DialectPostgreSQL, Endpoint: endpoint.Emulator(e.Host())}
	ddl := append(workloadDDL(t, v1alpha1.WorkloadTweet, db.Dialect), workloadDDL(t, v1alpha1.WorkloadYCSB, db.Dialect)[0])
	schema := func() []string {
		t.Helper()
		resp, err := da.GetDatabaseDdl(ctx, &databasepb.GetDatabaseDdlRequest{Database: db.name()})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetStatements()
	}
	var first []string
	for i := range 2 {
		if err := EnsureDatabase(ctx, DatabaseAdminOf(da), db, ddl); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		stmts := schema()
		var objects []string
		for _, s := range stmts {
			o, ok := createdObject(s)
			if !ok {
				t.Fatalf("cannot parse the emulator's own PostgreSQL DDL %q", s)
			}
			objects = append(objects, o.kind+" "+o.name)
		}
		slices.Sort(objects)
		if want := []string{"INDEX TWEETSORTASC", "TABLE SPANBENCHDATASET", "TABLE TWEET", "TABLE USERTABLE"}; !slices.Equal(objects, want) {
			t.Fatalf("call %d: the database has %q, want %q", i+1, objects, want)
		}
		if i == 0 {
			first = stmts
		} else if !slices.Equal(stmts, first) {
			t.Errorf("the second call changed the schema:\n%q\nto\n%q", first, stmts)
		}
	}
	if missing, err := missingStatements(ctx, DatabaseAdminOf(da), db.name(), ddl); err != nil || len(missing) > 0 {
		t.Errorf("after EnsureDatabase, missingStatements = %q, %v; want none: the PostgreSQL DDL Spanner returns is not recognised", missing, err)
	}
	if d, err := queryDialect(ctx, db); err != nil || d != v1alpha1.DialectPostgreSQL {
		t.Errorf("the created database reports dialect %q (%v), want PostgreSQL", d, err)
	}
}

// TestEnsureDatabaseRefusesTheOtherDialect: a database that exists in one
// dialect is refused, with ErrDialectMismatch naming both dialects, when
// the other is asked for, both ways, and its schema is left alone.
func TestEnsureDatabaseRefusesTheOtherDialect(t *testing.T) {
	e := emulatortest.Start(t)
	ctx, ia, da := adminClients(t, e)
	if err := EnsureInstance(ctx, AdminOf(ia), Instance{Project: "p", Instance: "inst", Config: "emulator-config", Nodes: 1}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ have, want v1alpha1.Dialect }{
		{v1alpha1.DialectGoogleSQL, v1alpha1.DialectPostgreSQL},
		{v1alpha1.DialectPostgreSQL, v1alpha1.DialectGoogleSQL},
	} {
		db := Database{Project: "p", Instance: "inst", Database: strings.ToLower(string(tc.have)), Dialect: tc.have, Endpoint: endpoint.Emulator(e.Host())}
		if err := EnsureDatabase(ctx, DatabaseAdminOf(da), db, workloadDDL(t, v1alpha1.WorkloadYCSB, tc.have)); err != nil {
			t.Fatalf("creating the %s database: %v", tc.have, err)
		}
		before, err := da.GetDatabaseDdl(ctx, &databasepb.GetDatabaseDdlRequest{Database: db.name()})
		if err != nil {
			t.Fatal(err)
		}
		other := db
		other.Dialect = tc.want
		err = EnsureDatabase(ctx, DatabaseAdminOf(da), other, workloadDDL(t, v1alpha1.WorkloadTweet, tc.want))
		if !errors.Is(err, ErrDialectMismatch) {
			t.Fatalf("EnsureDatabase(%s) on a %s database: %v; want ErrDialectMismatch", tc.want, tc.have, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "is "+string(tc.have)) || !strings.Contains(msg, "asks for "+string(tc.want)) {
			t.Errorf("the mismatch error does not say what the database is and what is asked: %s", msg)
		}
		after, err := da.GetDatabaseDdl(ctx, &databasepb.GetDatabaseDdlRequest{Database: db.name()})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(before.GetStatements(), after.GetStatements()) {
			t.Errorf("a refused EnsureDatabase changed the %s database's schema to %q", tc.have, after.GetStatements())
		}
	}
}

// TestDialectOfReadsGetDatabase covers Cloud Spanner's answer, which the
// emulator never gives (it reports no dialect).
func TestDialectOfReadsGetDatabase(t *testing.T) {
	for api, want := range map[databasepb.DatabaseDialect]v1alpha1.Dialect{
		databasepb.DatabaseDialect_GOOGLE_STANDARD_SQL: v1alpha1.DialectGoogleSQL,
		databasepb.DatabaseDialect_POSTGRESQL:          v1alpha1.DialectPostgreSQL,
	} {
		if got, err := dialectOf(&databasepb.Database{DatabaseDialect: api}); err != nil || got != want {
			t.Errorf("dialectOf(%s) = %q, %v; want %q", api, got, err, want)
		}
	}
	if got, err := dialectOf(&databasepb.Database{}); err == nil {
		t.Errorf("dialectOf(unspecified) = %q; want an error, so that the database is asked", got)
	}
	if got, err := dialectOf(nil); err == nil {
		t.Errorf("dialectOf(nil) = %q; want an error", got)
	}
}

// TestBusyKeepsTheCauseAndMarksOnlyBusyCodes: FailedPrecondition and
// Aborted from a schema change are ErrDatabaseBusy with their gRPC status
// still readable; other errors are not.
func TestBusyKeepsTheCauseAndMarksOnlyBusyCodes(t *testing.T) {
	for code, want := range map[codes.Code]bool{codes.FailedPrecondition: true, codes.Aborted: true,
		codes.InvalidArgument: false, codes.PermissionDenied: false, codes.Unavailable: false} {
		cause := fmt.Errorf("wait: %w", status.Error(code, "schema change"))
		err := busy(cause)
		if errors.Is(err, ErrDatabaseBusy) != want {
			t.Errorf("busy(%s): errors.Is ErrDatabaseBusy = %v, want %v", code, !want, want)
		}
		if status.Code(err) != code || !errors.Is(err, cause) {
			t.Errorf("busy(%s) = %v lost the original error", code, err)
		}
	}
	if busy(nil) != nil {
		t.Error("busy(nil) is not nil")
	}
}

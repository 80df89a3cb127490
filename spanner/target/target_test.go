package target

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"cloud.google.com/go/spanner"
	database "cloud.google.com/go/spanner/admin/database/apiv1"
	"cloud.google.com/go/spanner/admin/database/apiv1/databasepb"
	instance "cloud.google.com/go/spanner/admin/instance/apiv1"
	"cloud.google.com/go/spanner/admin/instance/apiv1/instancepb"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/emulatortest"
	"github.com/spanbench/spanbench/spanner/emulator"
	"github.com/spanbench/spanbench/spanner/endpoint"
)

// Each test starts its own emulator: state must not leak between tests, and
// a long-running emulator gets slower.

func adminClients(t *testing.T, e *emulator.Emulator) (context.Context, *instance.InstanceAdminClient, *database.DatabaseAdminClient) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	ia, da, err := AdminClients(ctx, endpoint.Emulator(e.Host()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ia.Close(); _ = da.Close() })
	return ctx, ia, da
}

func TestEnsureInstance(t *testing.T) {
	ctx, ia, _ := adminClients(t, emulatortest.Start(t))
	in := Instance{Project: "spanbench-test", Instance: "bench", Config: "regional-asia-northeast1", Nodes: 3}
	for i := range 2 { // the second call finds it and changes nothing
		if err := EnsureInstance(ctx, AdminOf(ia), in); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		got, err := ia.GetInstance(ctx, &instancepb.GetInstanceRequest{Name: "projects/spanbench-test/instances/bench"})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetConfig() != "projects/spanbench-test/instanceConfigs/regional-asia-northeast1" ||
			got.GetProcessingUnits() != 3000 || got.GetNodeCount() != 3 {
			t.Errorf("call %d: instance has config %q, %d nodes, %d processing units; want regional-asia-northeast1, 3, 3000",
				i+1, got.GetConfig(), got.GetNodeCount(), got.GetProcessingUnits())
		}
	}

	// Processing units work too.
	in = Instance{Project: "spanbench-test", Instance: "pu", Config: "asia1", ProcessingUnits: 200}
	if err := EnsureInstance(ctx, AdminOf(ia), in); err != nil {
		t.Fatal(err)
	}
	got, err := ia.GetInstance(ctx, &instancepb.GetInstanceRequest{Name: "projects/spanbench-test/instances/pu"})
	if err != nil || got.GetConfig() != "projects/spanbench-test/instanceConfigs/asia1" || got.GetProcessingUnits() != 200 {
		t.Errorf("instance pu: %v, %v", got, err)
	}

	// Both sizes are refused before any call.
	in.Instance, in.Nodes = "both", 1
	if err := EnsureInstance(ctx, AdminOf(ia), in); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("nodes and processing units together: %v", err)
	}
}

func TestEnsureDatabase(t *testing.T) {
	e := emulatortest.Start(t)
	ctx, ia, da := adminClients(t, e)
	benchDB := Database{Project: "p", Instance: "inst", Database: "bench-db", Endpoint: endpoint.Emulator(e.Host())}
	if err := EnsureInstance(ctx, AdminOf(ia), Instance{Project: "p", Instance: "inst", Config: "emulator-config", Nodes: 1}); err != nil {
		t.Fatal(err)
	}
	ddl := []string{
		`CREATE TABLE usertable (
			id STRING(MAX) NOT NULL,
			field0 STRING(MAX),
			field1 INT64,
		) PRIMARY KEY (id)`,
		"CREATE INDEX usertable_by_field0 ON usertable(field0)",
	}
	schema := func() []string {
		t.Helper()
		resp, err := da.GetDatabaseDdl(ctx, &databasepb.GetDatabaseDdlRequest{Database: "projects/p/instances/inst/databases/bench-db"})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetStatements()
	}
	wantObjects := func(stmts []string, want ...string) {
		t.Helper()
		var got []string
		for _, s := range stmts {
			o, ok := createdObject(s)
			if !ok {
				t.Fatalf("cannot parse the emulator's own DDL %q", s)
			}
			got = append(got, o.kind+" "+o.name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("schema has %q, want %q", got, want)
		}
	}

	for i := range 2 { // the second call finds everything present
		if err := EnsureDatabase(ctx, DatabaseAdminOf(da), benchDB, ddl); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		wantObjects(schema(), "TABLE USERTABLE", "INDEX USERTABLE_BY_FIELD0")
	}

	// A new index is added; the existing table and index are skipped,
	// even spelled in another case.
	ddl[1] = strings.ToUpper(ddl[1])
	ddl = append(ddl, "CREATE UNIQUE INDEX usertable_by_field1 ON usertable(field1)")
	if err := EnsureDatabase(ctx, DatabaseAdminOf(da), benchDB, ddl); err != nil {
		t.Fatal(err)
	}
	stmts := schema()
	wantObjects(stmts, "TABLE USERTABLE", "INDEX USERTABLE_BY_FIELD0", "INDEX USERTABLE_BY_FIELD1")
	if !strings.Contains(stmts[2], "UNIQUE") || !strings.Contains(stmts[2], "field1") {
		t.Errorf("new index statement is %q", stmts[2])
	}

	// A statement whose effect cannot be looked up is refused on an
	// existing database, and nothing is applied.
	bad := append(slices.Clone(ddl), "ALTER TABLE usertable ADD COLUMN field2 BOOL", "CREATE INDEX by_field2 ON usertable(field2)")
	if err := EnsureDatabase(ctx, DatabaseAdminOf(da), benchDB, bad); err == nil || !strings.Contains(err.Error(), "ALTER TABLE") {
		t.Errorf("EnsureDatabase with an ALTER: %v", err)
	}
	if got := len(schema()); got != 3 {
		t.Errorf("schema has %d statements after a refused call, want 3", got)
	}
}

func TestCreatedObject(t *testing.T) {
	for _, c := range []struct {
		stmt, want string // want "" = not a named CREATE
	}{
		{"CREATE TABLE usertable (id INT64) PRIMARY KEY (id)", "TABLE USERTABLE"},
		{"create table `Tweet`(id INT64) PRIMARY KEY(id)", "TABLE TWEET"},
		{"CREATE TABLE IF NOT EXISTS t (id INT64) PRIMARY KEY (id)", "TABLE T"},
		{"-- the table\n/* really */ CREATE\n\tTABLE\nt2(id INT64) PRIMARY KEY (id)", "TABLE T2"},
		{"# hash comment\nCREATE INDEX i ON t(c)", "INDEX I"},
		{"CREATE UNIQUE NULL_FILTERED INDEX i2 ON t(c)", "INDEX I2"},
		{"CREATE NULL_FILTERED UNIQUE INDEX i3 ON t(c)", "INDEX I3"},
		{"CREATE SEARCH INDEX s ON t(tokens)", "INDEX S"},
		{"CREATE OR REPLACE VIEW v SQL SECURITY INVOKER AS SELECT 1", "VIEW V"},
		{"CREATE CHANGE STREAM cs FOR ALL", "CHANGE STREAM CS"},
		{"CREATE SEQUENCE seq OPTIONS (sequence_kind='bit_reversed_positive')", "SEQUENCE SEQ"},
		{"CREATE TABLE `my table` (id INT64) PRIMARY KEY (id)", "TABLE MY TABLE"},
		{`CREATE TABLE "pg"(id bigint primary key)`, "TABLE PG"},
		// PostgreSQL DDL as GetDatabaseDdl returns it.
		{"CREATE TABLE \"Tweet\" (\n  \"Id\" character varying NOT NULL,\n  PRIMARY KEY(\"Id\")\n)", "TABLE TWEET"},
		{"CREATE TABLE usertable (\n  id character varying NOT NULL,\n  PRIMARY KEY(id)\n)", "TABLE USERTABLE"},
		{`CREATE INDEX "TweetSortAsc" ON "Tweet" ("Sort")`, "INDEX TWEETSORTASC"},
		{"CREATE TABLE s.t (id INT64) PRIMARY KEY (id)", "TABLE S.T"},
		{"CREATE PROTO BUNDLE (a.B)", ""},
		{"CREATE DATABASE d", ""},
		{"ALTER TABLE t ADD COLUMN c INT64", ""},
		{"DROP INDEX i", ""},
		{"CREATE TABLE (id INT64)", ""},
		{"CREATE", ""},
		{"", ""},
	} {
		o, ok := createdObject(c.stmt)
		got := ""
		if ok {
			got = o.kind + " " + o.name
		}
		if got != c.want {
			t.Errorf("createdObject(%q) = %q, want %q", c.stmt, got, c.want)
		}
	}
}

// A data client of an emulator endpoint reads and writes, with nothing in
// the process environment.
func TestDataClient(t *testing.T) {
	e := emulatortest.Start(t)
	ctx, ia, da := adminClients(t, e)
	if err := EnsureInstance(ctx, AdminOf(ia), Instance{Project: "p", Instance: "inst", Config: "emulator-config", Nodes: 1}); err != nil {
		t.Fatal(err)
	}
	ddl := []string{"CREATE TABLE kv (k STRING(MAX) NOT NULL, v INT64) PRIMARY KEY (k)"}
	if err := EnsureDatabase(ctx, DatabaseAdminOf(da), Database{Project: "p", Instance: "inst", Database: "db"}, ddl); err != nil {
		t.Fatal(err)
	}
	c, err := endpoint.Emulator(e.Host()).NewClient(ctx, "projects/p/instances/inst/databases/db", spanner.ClientConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Apply(ctx, []*spanner.Mutation{spanner.Insert("kv", []string{"k", "v"}, []any{"a", 1})}); err != nil {
		t.Fatal(err)
	}
	row, err := c.Single().ReadRow(ctx, "kv", spanner.Key{"a"}, []string{"v"})
	var v int64
	if err == nil {
		err = row.Columns(&v)
	}
	if err != nil || v != 1 {
		t.Errorf("read back %d, %v", v, err)
	}
}

// TestInstanceOf: the one conversion from spec.target keeps every field an
// instance is created with, the edition included.
func TestInstanceOf(t *testing.T) {
	two, pu := int32(2), int32(300)
	for _, c := range []struct {
		name string
		spec v1alpha1.InstanceSpec
		want Instance
	}{
		{"nodes and edition", v1alpha1.InstanceSpec{Name: "i", Config: "asia1", Nodes: &two, Edition: v1alpha1.EditionEnterprisePlus},
			Instance{Project: "p", Instance: "i", Config: "asia1", Nodes: 2, Edition: "ENTERPRISE_PLUS"}},
		{"processing units, no edition", v1alpha1.InstanceSpec{Name: "i", Config: "asia1", ProcessingUnits: &pu},
			Instance{Project: "p", Instance: "i", Config: "asia1", ProcessingUnits: 300}},
	} {
		got := InstanceOf(v1alpha1.TargetSpec{Project: "p", Database: "d", Instance: c.spec})
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: InstanceOf (-want +got):\n%s", c.name, diff)
		}
	}
}

// TestEmulatorInstanceDefaults: an emulator instance gets the emulator's
// configuration and one node where the spec names none, and keeps what it
// names.
func TestEmulatorInstanceDefaults(t *testing.T) {
	pu := int32(300)
	got := EmulatorInstanceDefaults(v1alpha1.InstanceSpec{Name: "i"})
	if got.Config != EmulatorConfig || got.Nodes == nil || *got.Nodes != 1 || got.ProcessingUnits != nil {
		t.Errorf("defaults of an empty spec: config %q, nodes %v, processing units %v; want %q, 1, none",
			got.Config, got.Nodes, got.ProcessingUnits, EmulatorConfig)
	}
	got = EmulatorInstanceDefaults(v1alpha1.InstanceSpec{Name: "i", Config: "asia1", ProcessingUnits: &pu})
	if got.Config != "asia1" || got.Nodes != nil || *got.ProcessingUnits != 300 {
		t.Errorf("defaults overwrote the spec: config %q, nodes %v, processing units %v", got.Config, got.Nodes, *got.ProcessingUnits)
	}
}

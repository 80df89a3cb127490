package workload_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/spanner/customcheck"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/workload"
)

// customPGQuotedWorkload names its tables, columns and index with quoted
// mixed-case names, which PostgreSQL keeps exactly: its statements quote
// them, and the loader, reads and mutations must use them as stored.
const customPGQuotedWorkload = `
type: Custom
custom:
  ddl:
  - CREATE TABLE "Singers" ("SingerId" bigint NOT NULL, "Name" varchar(100), "Sales" bigint NOT NULL, PRIMARY KEY ("SingerId"))
  - >-
    CREATE TABLE "Albums" ("SingerId" bigint NOT NULL, "AlbumId" bigint NOT NULL, "Title" varchar,
    PRIMARY KEY ("SingerId", "AlbumId")) INTERLEAVE IN PARENT "Singers" ON DELETE CASCADE
  - CREATE INDEX "AlbumsByTitle" ON "Albums" ("Title")
  tables:
  - name: Singers
    rows: 10
    columns:
    - name: Sales
      generator: {type: Uniform, min: 1, max: 100}
  - name: Albums
    rowsPerParent: 2
    columns:
    - name: Title
      generator: {type: UUID}
operations:
- name: get-singer
  type: Query
  weight: 1
  custom:
    sql: SELECT s."Name" AS "N" FROM "Singers" AS s WHERE s."SingerId" = $1 ORDER BY "N"
    params:
    - name: p1
      key: {table: Singers, column: SingerId}
- name: read-singer
  type: ReadRows
  weight: 1
  custom:
    read: {table: Singers, columns: [SingerId, Name], shape: Key}
- name: read-album-keys
  type: ReadRows
  weight: 1
  rows: 4
  custom:
    read: {table: Albums, columns: [SingerId, AlbumId], shape: KeyList}
- name: album-by-title
  type: ReadRows
  weight: 1
  custom:
    read: {table: Albums, index: AlbumsByTitle, columns: [SingerId, AlbumId, Title], shape: Key}
- name: album-range
  type: ReadRows
  weight: 1
  rows: 4
  custom:
    read: {table: Albums, columns: [SingerId, AlbumId], shape: Range}
- name: add-sales
  type: DML
  weight: 1
  custom:
    sql: UPDATE "Singers" SET "Sales" = "Sales" + $1 WHERE "SingerId" = $2
    params:
    - name: p1
      generator: {type: Uniform, min: 1, max: 1}
    - name: p2
      key: {table: Singers, column: SingerId}
- name: double-sales
  type: Transaction
  weight: 1
  custom:
    steps:
    - name: src
      sql: SELECT "Sales" FROM "Singers" WHERE "SingerId" = $1
      params:
      - name: p1
        generator: {type: Choice, choices: [{value: "3", weight: 1}]}
    - name: dst
      sql: UPDATE "Singers" SET "Sales" = $1 * 2 WHERE "SingerId" = $2
      params:
      - name: p1
        from: src.Sales
      - name: p2
        generator: {type: Choice, choices: [{value: "7", weight: 1}]}
- name: new-singer
  type: Mutation
  weight: 1
  custom:
    mutation: {kind: Insert, table: Singers}
- name: rename-singer
  type: Mutation
  weight: 1
  custom:
    mutation: {kind: Update, table: Singers}
- name: upsert-album
  type: Mutation
  weight: 1
  custom:
    mutation: {kind: Upsert, table: Albums}
- name: delete-album
  type: Mutation
  weight: 1
  custom:
    mutation: {kind: Delete, table: Albums}
load:
  rate: 1
`

// TestPostgreSQLQuotedMixedCaseNamesLoadAndRun: on a PostgreSQL-dialect
// database of the real emulator, tables, columns and an index created
// with quoted mixed-case names are created, loaded with exactly their
// rows, and every operation kind — a query, Read API reads of a key, a
// key list, a range and an index, DML, a transaction, each mutation kind
// — returns or changes exactly the rows it should, and a reload clears
// them: the engine uses the names as PostgreSQL stored them.
func TestPostgreSQLQuotedMixedCaseNamesLoadAndRun(t *testing.T) {
	var spec v1alpha1.WorkloadSpec
	if err := yaml.UnmarshalStrict([]byte(customPGQuotedWorkload), &spec); err != nil {
		t.Fatalf("decoding the workload: %v", err)
	}
	spec.Duration = &metav1.Duration{Duration: time.Second}
	spec.Interval = &metav1.Duration{Duration: time.Second} // a run holds at least one interval
	spec = spec.Resolved()
	if errs := customcheck.Workload(field.NewPath("workload"), &spec, v1alpha1.DialectPostgreSQL); len(errs) > 0 {
		t.Fatalf("the test's workload is invalid: %v", errs)
	}
	s := sessiontest.StartDialect(t, &spec, v1alpha1.DialectPostgreSQL)
	for sql, want := range map[string]int64{
		`SELECT COUNT(*) FROM "Singers"`:                                  10,
		`SELECT COUNT(*) FROM "Albums"`:                                   20,
		`SELECT COUNT(*) FROM "Singers" WHERE "Sales" BETWEEN 1 AND 100`:  10,
		`SELECT COUNT(DISTINCT "Title") FROM "Albums"`:                    20,
		`SELECT COUNT(*) FROM "Albums" WHERE "AlbumId" IN (0, 1)`:         20,
		`SELECT COUNT(*) FROM "Singers" WHERE "SingerId" BETWEEN 0 AND 9`: 10,
	} {
		if got := count(t, s, sql); got != want {
			t.Errorf("%s = %d, want %d", sql, got, want)
		}
	}
	if n := countIndex(t, s, "Albums", "AlbumsByTitle", "Title"); n != 20 {
		t.Errorf(`the index "AlbumsByTitle" holds %d entries, want 20`, n)
	}
	run := opRunner(t, s, &spec)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for range 5 {
		for name, want := range map[string]int64{"get-singer": 1, "read-singer": 1, "album-by-title": 1, "album-range": 4, "add-sales": 1} {
			if got := run(name); got != want {
				t.Errorf("%s returned or changed %d rows, want %d", name, got, want)
			}
		}
		if got := run("read-album-keys"); got < 1 || got > 4 {
			t.Errorf("read-album-keys returned %d rows, want 1 to 4", got)
		}
	}
	before := count(t, s, `SELECT SUM("Sales")::bigint FROM "Singers"`)
	run("add-sales")
	if after := count(t, s, `SELECT SUM("Sales")::bigint FROM "Singers"`); after != before+1 {
		t.Errorf("add-sales added %d to the total sales, want 1", after-before)
	}
	src := count(t, s, `SELECT "Sales" FROM "Singers" WHERE "SingerId" = 3`)
	if got := run("double-sales"); got != 2 {
		t.Errorf("double-sales read and changed %d rows, want 2 (one read, one updated)", got)
	}
	if dst := count(t, s, `SELECT "Sales" FROM "Singers" WHERE "SingerId" = 7`); dst != 2*src {
		t.Errorf(`after double-sales singer 7 has sales %d, want twice singer 3's %d`, dst, src)
	}
	for _, step := range []struct {
		op             string
		table          string
		wantAfterwards int64
	}{
		{"new-singer", "Singers", 11},
		{"rename-singer", "Singers", 11},
		{"upsert-album", "Albums", 20},
		{"delete-album", "Albums", 19},
	} {
		run(step.op)
		if got := count(t, s, `SELECT COUNT(*) FROM "`+step.table+`"`); got != step.wantAfterwards {
			t.Errorf("after %s %q holds %d rows, want %d", step.op, step.table, got, step.wantAfterwards)
		}
	}
	// A reload clears the tables by their quoted names.
	schema, err := workload.SchemaFor(&spec, v1alpha1.DialectPostgreSQL)
	if err != nil {
		t.Fatal(err)
	}
	if err := dataset.Clear(ctx, s.Client, schema); err != nil {
		t.Fatalf("clearing the dataset: %v", err)
	}
	for _, table := range []string{"Singers", "Albums"} {
		if got := count(t, s, `SELECT COUNT(*) FROM "`+table+`"`); got != 0 {
			t.Errorf("after clearing the dataset %q holds %d rows, want 0", table, got)
		}
	}
}

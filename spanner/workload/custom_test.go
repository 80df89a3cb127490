package workload_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/spanner/customcheck"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

// customWorkload is a Custom workload with an interleaved child table and
// an index, and one operation of each kind.
const customWorkload = `
type: Custom
custom:
  ddl:
  - >-
    CREATE TABLE Singers (SingerId INT64 NOT NULL, Name STRING(100), Genre STRING(20), Photo BYTES(64),
    Born TIMESTAMP, Updated TIMESTAMP OPTIONS (allow_commit_timestamp = true), Score FLOAT64, Active BOOL,
    Mentor INT64, Nick STRING(36)) PRIMARY KEY (SingerId)
  - CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX), Sales INT64 NOT NULL) PRIMARY KEY (SingerId, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE
  - CREATE INDEX AlbumsByTitle ON Albums(Title)
  tables:
  - name: Singers
    rows: 20
    columns:
    - name: Genre
      generator:
        type: Choice
        choices:
        - {value: rock, weight: 1}
        - {value: jazz, weight: 1}
    - name: Photo
      generator: {type: Bytes, minLength: 8, maxLength: 64}
    - name: Born
      generator: {type: Timestamp, timestamp: {mode: Range, from: "1950-01-01T00:00:00Z", to: "2000-01-01T00:00:00Z"}}
    - name: Updated
      generator: {type: Timestamp, timestamp: {mode: Commit}}
    - name: Mentor
      generator: {type: Reference, reference: {table: Singers, column: SingerId}}
    - name: Nick
      generator: {type: UUID, nullPercent: 50}
  - name: Albums
    rowsPerParent: 3
    columns:
    - name: Title
      generator: {type: UUID}
    - name: Sales
      generator: {type: Uniform, min: 1, max: 1000}
operations:
- name: get-singer
  type: Query
  weight: 1
  custom:
    sql: SELECT Name, Genre FROM Singers WHERE SingerId = @id
    params:
    - name: id
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
    sql: UPDATE Albums SET Sales = Sales + @delta WHERE SingerId = @id
    params:
    - name: delta
      generator: {type: Uniform, min: 1, max: 1}
    - name: id
      key: {table: Singers, column: SingerId}
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
- name: double-sales
  type: Transaction
  weight: 1
  custom:
    steps:
    - name: src
      sql: SELECT Sales FROM Albums WHERE SingerId = @a AND AlbumId = 0
      params:
      - name: a
        generator:
          type: Choice
          choices: [{value: "3", weight: 1}]
    - name: dst
      sql: UPDATE Albums SET Sales = @sales * 2 WHERE SingerId = @b AND AlbumId = 0
      params:
      - name: sales
        from: src.Sales
      - name: b
        generator:
          type: Choice
          choices: [{value: "7", weight: 1}]
- name: copy-missing
  type: Transaction
  weight: 1
  custom:
    steps:
    - name: src
      sql: SELECT Sales FROM Albums WHERE SingerId = 999
    - name: dst
      sql: UPDATE Albums SET Sales = @sales WHERE SingerId = 1
      params:
      - name: sales
        from: src.Sales
load:
  rate: 1
`

func customSpec(t *testing.T) *v1alpha1.WorkloadSpec {
	t.Helper()
	var w v1alpha1.WorkloadSpec
	if err := yaml.UnmarshalStrict([]byte(customWorkload), &w); err != nil {
		t.Fatalf("decoding the workload: %v", err)
	}
	w.Duration = &metav1.Duration{Duration: time.Second}
	w.Interval = &metav1.Duration{Duration: time.Second} // a run holds at least one interval
	w = w.Resolved()
	if errs := customcheck.Workload(field.NewPath("workload"), &w, v1alpha1.DialectGoogleSQL); len(errs) > 0 {
		t.Fatalf("the test's workload is invalid: %v", errs)
	}
	return &w
}

func count(t *testing.T, s *session.Session, sql string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var n int64
	row, err := s.Client.Single().Query(ctx, spanner.Statement{SQL: sql}).Next()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if err := row.Columns(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// TestCustomWorkloadLoadsAndRunsEveryOperationKind runs a Custom workload
// on the real emulator: the schema is created from its DDL, every table is
// loaded with exactly its rows, and each operation kind returns or changes
// exactly the rows it should.
func TestCustomWorkloadLoadsAndRunsEveryOperationKind(t *testing.T) {
	spec := customSpec(t)
	s := sessiontest.Start(t, spec)
	if got := count(t, s, "SELECT COUNT(*) FROM Singers"); got != 20 {
		t.Fatalf("Singers holds %d rows after the load, want 20", got)
	}
	if got := count(t, s, "SELECT COUNT(*) FROM Albums"); got != 60 {
		t.Fatalf("Albums holds %d rows after the load, want 20 x 3 = 60", got)
	}
	if got := count(t, s, "SELECT COUNT(DISTINCT Title) FROM Albums@{FORCE_INDEX=AlbumsByTitle} WHERE Title IS NOT NULL"); got != 60 {
		t.Fatalf("the index AlbumsByTitle holds %d distinct titles, want 60", got)
	}
	for sql, want := range map[string]int64{
		"SELECT COUNT(*) FROM Singers WHERE Mentor BETWEEN 0 AND 19":                                           20,
		"SELECT COUNT(*) FROM Singers WHERE Born >= '1950-01-01T00:00:00Z' AND Born <= '2000-01-01T00:00:00Z'": 20,
		"SELECT COUNT(*) FROM Singers WHERE LENGTH(Photo) BETWEEN 8 AND 64 AND Updated IS NOT NULL":            20,
		"SELECT COUNT(*) FROM Singers WHERE Score IS NOT NULL AND Active IS NOT NULL":                          20,
	} {
		if got := count(t, s, sql); got != want {
			t.Errorf("%s = %d, want %d", sql, got, want)
		}
	}
	if nicks := count(t, s, "SELECT COUNT(Nick) FROM Singers"); nicks == 0 || nicks == 20 {
		t.Errorf("%d of 20 singers have a Nick; want some NULL and some not (nullPercent 50)", nicks)
	}
	checkCustomMarker(t, s, spec)
	w, err := s.Workload(spec, "test", 0, 1)
	if err != nil {
		t.Fatalf("binding the workload: %v", err)
	}
	ops := map[string]func(context.Context, *rand.Rand) (int64, error){}
	for _, op := range w.Ops() {
		ops[op.Spec.Name] = func(ctx context.Context, rng *rand.Rand) (int64, error) {
			out, err := op.Do(ctx, rng)
			return out.Rows, err
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(name string) int64 {
		t.Helper()
		n, err := ops[name](ctx, rng)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return n
	}
	for range 10 {
		for name, want := range map[string]int64{"get-singer": 1, "read-singer": 1, "album-by-title": 1, "add-sales": 3, "album-range": 4} {
			if got := run(name); got != want {
				t.Errorf("%s returned or changed %d rows, want %d", name, got, want)
			}
		}
		if got := run("read-album-keys"); got < 1 || got > 4 {
			t.Errorf("read-album-keys returned %d rows, want 1 to 4 (4 keys drawn, repeats read once)", got)
		}
	}

	before := count(t, s, "SELECT SUM(Sales) FROM Albums")
	run("add-sales")
	if after := count(t, s, "SELECT SUM(Sales) FROM Albums"); after != before+3 {
		t.Errorf("add-sales added %d to the total sales, want 3 (1 to each of a singer's 3 albums)", after-before)
	}
	run("new-singer")
	if got := count(t, s, "SELECT COUNT(*) FROM Singers"); got != 21 {
		t.Errorf("after one Insert Singers holds %d rows, want 21", got)
	}
	run("rename-singer")
	run("upsert-album")
	if got := count(t, s, "SELECT COUNT(*) FROM Albums"); got != 60 {
		t.Errorf("after an Upsert of an existing album Albums holds %d rows, want 60", got)
	}
	run("delete-album")
	if got := count(t, s, "SELECT COUNT(*) FROM Albums"); got != 59 {
		t.Errorf("after one Delete Albums holds %d rows, want 59", got)
	}

	checkReadOfDeletedRowsIsNotFound(t, s, w.Ops())
	if _, err := ops["copy-missing"](ctx, rng); err == nil || !strings.Contains(err.Error(), "src.Sales has no value") {
		t.Errorf("a step using a value its earlier step did not read: %v, want an error naming src.Sales", err)
	}
	src := count(t, s, "SELECT Sales FROM Albums WHERE SingerId = 3 AND AlbumId = 0")
	if got := run("double-sales"); got != 2 {
		t.Errorf("double-sales read and changed %d rows, want 2 (one read, one updated)", got)
	}
	if dst := count(t, s, "SELECT Sales FROM Albums WHERE SingerId = 7 AND AlbumId = 0"); dst != 2*src {
		t.Errorf("after double-sales album (7, 0) has sales %d, want twice album (3, 0)'s %d", dst, src)
	}
}

// checkCustomMarker: a second Prepare of the same Custom dataset finds its
// marker and skips the load; one with another row count is refused.
func checkCustomMarker(t *testing.T, s *session.Session, spec *v1alpha1.WorkloadSpec) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	schema, err := workload.SchemaFor(spec, "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := dataset.Prepare(ctx, s.Client, schema, spec.Dataset, nil)
	if err != nil || !out.Skipped || out.Marker.Rows != 20 {
		t.Fatalf("preparing the loaded Custom dataset again: %+v, %v; want it skipped with 20 units", out, err)
	}
	other := spec.DeepCopy()
	rows := int64(30)
	other.Custom.Tables[0].Rows = &rows
	other.Dataset.Rows = nil // resolved anew: 30 units
	*other = other.Resolved()
	otherSchema, err := workload.SchemaFor(other, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dataset.Prepare(ctx, s.Client, otherSchema, other.Dataset, nil); !errors.Is(err, dataset.ErrMismatch) {
		t.Fatalf("preparing a Custom dataset of 30 singers over one of 20: %v, want %v", err, dataset.ErrMismatch)
	}
}

// TestAnInvalidCustomWorkloadIsRefusedNotRun: a Custom spec that reached
// the engine without the admission webhook (a reference to a column that
// does not exist) is refused with the validator's error, not a panic.
func TestAnInvalidCustomWorkloadIsRefusedNotRun(t *testing.T) {
	spec := customSpec(t)
	spec.Custom.Tables[0].Columns = append(spec.Custom.Tables[0].Columns, v1alpha1.CustomColumnSpec{Name: "Name",
		Generator: v1alpha1.GeneratorSpec{Type: v1alpha1.GenReference, Reference: &v1alpha1.ColumnRef{Table: "Singers", Column: "Nope"}}})
	_, err := workload.SchemaFor(spec, "")
	if err == nil || !strings.Contains(err.Error(), "workload.custom.tables[0].columns[") || !strings.Contains(err.Error(), "Nope") {
		t.Fatalf("SchemaFor of a Custom workload referring to Singers.Nope: %v; want the validator's error naming the field", err)
	}
}

// checkReadOfDeletedRowsIsNotFound: a ReadRows of keys the dataset held
// whose rows are gone counts as not found, as a built-in Read does.
func checkReadOfDeletedRowsIsNotFound(t *testing.T, s *session.Session, ops []*workload.Op) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Client.Apply(ctx, []*spanner.Mutation{spanner.Delete("Singers", spanner.KeyRange{Start: spanner.Key{8}, End: spanner.Key{19}, Kind: spanner.ClosedClosed})}); err != nil {
		t.Fatalf("deleting singers 8 to 19: %v", err)
	}
	for _, op := range ops {
		if op.Spec.Name != "read-singer" {
			continue
		}
		rng := rand.New(rand.NewPCG(3, 4))
		var found, notFound int
		for range 40 {
			out, err := op.Do(ctx, rng)
			if err != nil {
				t.Fatalf("read-singer: %v", err)
			}
			if out.NotFound {
				notFound++
			} else if out.Rows == 1 {
				found++
			}
		}
		if notFound == 0 || found == 0 || found+notFound != 40 {
			t.Errorf("reading 40 singers of whom 12 of 20 are deleted: %d found, %d not found; want both, adding up to 40", found, notFound)
		}
	}
}

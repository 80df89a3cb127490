package workload_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/spanner/customcheck"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

// customPGWorkload is customWorkload in Spanner's PostgreSQL dialect: an
// interleaved child table, an index, a numeric column, $n parameters.
const customPGWorkload = `
type: Custom
custom:
  ddl:
  - >-
    CREATE TABLE singers (singer_id bigint NOT NULL, name varchar(100), genre varchar(20), photo bytea,
    born timestamptz, updated spanner.commit_timestamp, score float8, active boolean, mentor bigint,
    nick varchar(36), PRIMARY KEY (singer_id))
  - >-
    CREATE TABLE albums (singer_id bigint NOT NULL, album_id bigint NOT NULL, title varchar, sales bigint NOT NULL,
    price numeric, PRIMARY KEY (singer_id, album_id)) INTERLEAVE IN PARENT singers ON DELETE CASCADE
  - CREATE INDEX albums_by_title ON albums (title)
  tables:
  - name: singers
    rows: 20
    columns:
    - name: genre
      generator:
        type: Choice
        choices:
        - {value: rock, weight: 1}
        - {value: jazz, weight: 1}
    - name: photo
      generator: {type: Bytes, minLength: 8, maxLength: 64}
    - name: born
      generator: {type: Timestamp, timestamp: {mode: Range, from: "1950-01-01T00:00:00Z", to: "2000-01-01T00:00:00Z"}}
    - name: updated
      generator: {type: Timestamp, timestamp: {mode: Commit}}
    - name: mentor
      generator: {type: Reference, reference: {table: singers, column: singer_id}}
    - name: nick
      generator: {type: UUID, nullPercent: 50}
  - name: albums
    rowsPerParent: 3
    columns:
    - name: title
      generator: {type: UUID}
    - name: sales
      generator: {type: Uniform, min: 1, max: 1000}
    - name: price
      generator: {type: Uniform, min: 5, max: 20}
operations:
- name: get-singer
  type: Query
  weight: 1
  custom:
    sql: SELECT name, genre FROM singers WHERE singer_id = $1
    params:
    - name: p1
      key: {table: singers, column: singer_id}
- name: read-singer
  type: ReadRows
  weight: 1
  custom:
    read: {table: singers, columns: [singer_id, name], shape: Key}
- name: read-album-keys
  type: ReadRows
  weight: 1
  rows: 4
  custom:
    read: {table: albums, columns: [singer_id, album_id], shape: KeyList}
- name: album-by-title
  type: ReadRows
  weight: 1
  custom:
    read: {table: albums, index: albums_by_title, columns: [singer_id, album_id, title], shape: Key}
- name: album-range
  type: ReadRows
  weight: 1
  rows: 4
  custom:
    read: {table: albums, columns: [singer_id, album_id], shape: Range}
- name: add-sales
  type: DML
  weight: 1
  custom:
    sql: UPDATE albums SET sales = sales + $1 WHERE singer_id = $2
    params:
    - name: p1
      generator: {type: Uniform, min: 1, max: 1}
    - name: p2
      key: {table: singers, column: singer_id}
- name: reprice
  type: DML
  weight: 1
  custom:
    sql: UPDATE albums SET price = $1 WHERE singer_id = $2 AND album_id = 0
    params:
    - name: p1
      generator: {type: Uniform, min: 7, max: 7}
    - name: p2
      generator:
        type: Choice
        choices: [{value: "5", weight: 1}]
- name: new-singer
  type: Mutation
  weight: 1
  custom:
    mutation: {kind: Insert, table: singers}
- name: rename-singer
  type: Mutation
  weight: 1
  custom:
    mutation: {kind: Update, table: singers}
- name: upsert-album
  type: Mutation
  weight: 1
  custom:
    mutation: {kind: Upsert, table: albums}
- name: delete-album
  type: Mutation
  weight: 1
  custom:
    mutation: {kind: Delete, table: albums}
- name: double-sales
  type: Transaction
  weight: 1
  custom:
    steps:
    - name: src
      sql: SELECT sales FROM albums WHERE singer_id = $1 AND album_id = 0
      params:
      - name: p1
        generator:
          type: Choice
          choices: [{value: "3", weight: 1}]
    - name: dst
      sql: UPDATE albums SET sales = $1 * 2 WHERE singer_id = $2 AND album_id = 0
      params:
      - name: p1
        from: src.sales
      - name: p2
        generator:
          type: Choice
          choices: [{value: "7", weight: 1}]
load:
  rate: 1
`

func customPGSpec(t *testing.T) *v1alpha1.WorkloadSpec {
	t.Helper()
	var w v1alpha1.WorkloadSpec
	if err := yaml.UnmarshalStrict([]byte(customPGWorkload), &w); err != nil {
		t.Fatalf("decoding the workload: %v", err)
	}
	w.Duration = &metav1.Duration{Duration: time.Second}
	w.Interval = &metav1.Duration{Duration: time.Second} // a run holds at least one interval
	w = w.Resolved()
	if errs := customcheck.Workload(field.NewPath("workload"), &w, v1alpha1.DialectPostgreSQL); len(errs) > 0 {
		t.Fatalf("the test's workload is invalid: %v", errs)
	}
	return &w
}

// TestPostgreSQLCustomWorkloadLoadsAndRunsEveryOperationKind is
// TestCustomWorkloadLoadsAndRunsEveryOperationKind on a PostgreSQL-dialect
// database of the real emulator: the DDL (with INTERLEAVE IN PARENT and
// spanner.commit_timestamp) creates the schema, every table is loaded with
// exactly its rows, and each operation kind, with $n parameters, returns
// or changes exactly the rows it should.
func TestPostgreSQLCustomWorkloadLoadsAndRunsEveryOperationKind(t *testing.T) {
	spec := customPGSpec(t)
	s := sessiontest.StartDialect(t, spec, v1alpha1.DialectPostgreSQL)
	for sql, want := range map[string]int64{
		"SELECT COUNT(*) FROM singers":                               20,
		"SELECT COUNT(*) FROM albums":                                60,
		"SELECT COUNT(*) FROM singers WHERE mentor BETWEEN 0 AND 19": 20,
		"SELECT COUNT(*) FROM singers WHERE born >= '1950-01-01T00:00:00Z' AND born <= '2000-01-01T00:00:00Z'": 20,
		"SELECT COUNT(*) FROM singers WHERE length(photo) BETWEEN 8 AND 64 AND updated IS NOT NULL":            20,
		"SELECT COUNT(*) FROM albums WHERE price BETWEEN 5 AND 20":                                             60,
	} {
		if got := count(t, s, sql); got != want {
			t.Errorf("%s = %d, want %d", sql, got, want)
		}
	}
	if n := countIndex(t, s, "albums", "albums_by_title", "title"); n != 60 {
		t.Errorf("the index albums_by_title holds %d entries, want 60", n)
	}
	run := opRunner(t, s, spec)
	for range 5 {
		for name, want := range map[string]int64{"get-singer": 1, "read-singer": 1, "album-by-title": 1, "add-sales": 3, "album-range": 4, "reprice": 1} {
			if got := run(name); got != want {
				t.Errorf("%s returned or changed %d rows, want %d", name, got, want)
			}
		}
		if got := run("read-album-keys"); got < 1 || got > 4 {
			t.Errorf("read-album-keys returned %d rows, want 1 to 4", got)
		}
	}
	if n := count(t, s, "SELECT COUNT(*) FROM albums WHERE singer_id = 5 AND album_id = 0 AND price = 7"); n != 1 {
		t.Errorf("after reprice album (5, 0) does not cost 7 (%d rows match)", n)
	}
	before := count(t, s, "SELECT SUM(sales)::bigint FROM albums")
	run("add-sales")
	if after := count(t, s, "SELECT SUM(sales)::bigint FROM albums"); after != before+3 {
		t.Errorf("add-sales added %d to the total sales, want 3", after-before)
	}
	src := count(t, s, "SELECT sales FROM albums WHERE singer_id = 3 AND album_id = 0")
	if got := run("double-sales"); got != 2 {
		t.Errorf("double-sales read and changed %d rows, want 2 (one read, one updated)", got)
	}
	if dst := count(t, s, "SELECT sales FROM albums WHERE singer_id = 7 AND album_id = 0"); dst != 2*src {
		t.Errorf("after double-sales album (7, 0) has sales %d, want twice album (3, 0)'s %d", dst, src)
	}
	for _, step := range []struct {
		op             string
		table          string
		wantAfterwards int64
	}{
		{"new-singer", "singers", 21},
		{"rename-singer", "singers", 21},
		{"upsert-album", "albums", 60},
		{"delete-album", "albums", 59},
	} {
		run(step.op)
		if got := count(t, s, "SELECT COUNT(*) FROM "+step.table); got != step.wantAfterwards {
			t.Errorf("after %s %s holds %d rows, want %d", step.op, step.table, got, step.wantAfterwards)
		}
	}
}

// countIndex counts an index's entries through the Read API, reading
// column.
func countIndex(t *testing.T, s *session.Session, table, index, column string) int64 {
	t.Helper()
	var n int64
	err := s.Client.Single().ReadUsingIndex(context.Background(), table, index, spanner.AllKeys(), []string{column}).Do(func(*spanner.Row) error {
		n++
		return nil
	})
	if err != nil {
		t.Fatalf("reading index %s: %v", index, err)
	}
	return n
}

// opRunner binds spec to s as run "test" and returns a function that runs
// the named operation once, failing the test on an error, and returns the
// rows it returned or changed. The operations share one seeded random
// source and a 2-minute context.
func opRunner(t *testing.T, s *session.Session, spec *v1alpha1.WorkloadSpec) func(name string) int64 {
	t.Helper()
	w, err := s.Workload(spec, "test", 0, 1)
	if err != nil {
		t.Fatalf("binding the workload: %v", err)
	}
	ops := map[string]*workload.Op{}
	for _, op := range w.Ops() {
		ops[op.Spec.Name] = op
	}
	rng := rand.New(rand.NewPCG(1, 2))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return func(name string) int64 {
		t.Helper()
		out, err := ops[name].Do(ctx, rng)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return out.Rows
	}
}

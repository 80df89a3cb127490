package benchmarkrun_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
)

// customWorkload is a small Custom workload: Singers with two interleaved
// Albums each, a query and an insert.
const customWorkload = `
type: Custom
custom:
  ddl:
  - CREATE TABLE Singers (SingerId INT64 NOT NULL, Name STRING(100)) PRIMARY KEY (SingerId)
  - CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX)) PRIMARY KEY (SingerId, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE
  tables:
  - {name: Singers, rows: 30}
  - {name: Albums, rowsPerParent: 2}
operations:
- name: albums-of
  type: Query
  weight: 3
  custom:
    sql: SELECT AlbumId, Title FROM Albums WHERE SingerId = @id
    params:
    - name: id
      key: {table: Singers, column: SingerId}
- name: new-album
  type: Mutation
  weight: 1
  custom:
    mutation: {kind: Insert, table: Albums}
`

// countRows counts a table of the run's database.
func (h *harness) countRows(run *v1alpha1.BenchmarkRun, table string) int64 {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := session.Open(ctx, endpoint.Emulator(run.Spec.Target.EmulatorHost), run.Spec.Target)
	if err != nil {
		h.t.Fatal(err)
	}
	defer s.Close()
	var n int64
	err = s.Client.Single().Query(ctx, spanner.Statement{SQL: "SELECT COUNT(*) FROM " + table}).Do(func(r *spanner.Row) error { return r.Column(0, &n) })
	if err != nil {
		h.t.Fatalf("counting the rows of %s: %v", table, err)
	}
	return n
}

// customPGWorkload is customWorkload in Spanner's PostgreSQL dialect.
const customPGWorkload = `
type: Custom
custom:
  ddl:
  - CREATE TABLE singers (singer_id bigint NOT NULL, name varchar(100), PRIMARY KEY (singer_id))
  - CREATE TABLE albums (singer_id bigint NOT NULL, album_id bigint NOT NULL, title varchar, PRIMARY KEY (singer_id, album_id)) INTERLEAVE IN PARENT singers ON DELETE CASCADE
  tables:
  - {name: singers, rows: 30}
  - {name: albums, rowsPerParent: 2}
operations:
- name: albums-of
  type: Query
  weight: 3
  custom:
    sql: SELECT album_id, title FROM albums WHERE singer_id = $1
    params:
    - name: p1
      key: {table: singers, column: singer_id}
- name: new-album
  type: Mutation
  weight: 1
  custom:
    mutation: {kind: Insert, table: albums}
`

// TestCustomRunLoadsEveryTableAndRuns: a Custom run through the
// controller: its database gets the user's DDL, three loader pods split
// its 30 units (a singer and its two albums each), every table holds
// exactly its rows, and the run's custom operations succeed.
func TestCustomRunLoadsEveryTableAndRuns(t *testing.T) {
	checkCustomRun(t, customWorkload, v1alpha1.DialectGoogleSQL, "Singers", "Albums")
}

// TestPostgreSQLCustomRunLoadsEveryTableAndRuns is the same run written
// in PostgreSQL against a PostgreSQL database.
func TestPostgreSQLCustomRunLoadsEveryTableAndRuns(t *testing.T) {
	checkCustomRun(t, customPGWorkload, v1alpha1.DialectPostgreSQL, "singers", "albums")
}

func checkCustomRun(t *testing.T, workload string, d v1alpha1.Dialect, singers, albums string) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	run := h.runSpec("custom", 1)
	run.Spec.Target.Dialect = d
	var w v1alpha1.WorkloadSpec
	if err := yaml.UnmarshalStrict([]byte(workload), &w); err != nil {
		t.Fatalf("decoding the workload: %v", err)
	}
	w.Load, w.Duration, w.Interval = run.Spec.Workload.Load, run.Spec.Workload.Duration, run.Spec.Workload.Interval
	w.Dataset.LoaderPods = ptr.To[int32](3)
	run.Spec.Workload = w
	h.create(run)

	h.eventually("the loader Job exists", provisionWithin, func() bool { return h.job(v1alpha1.LoaderJobName(run)) != nil })
	for i, err := range h.runLoaders(h.podClient(run), run) {
		if err != nil {
			t.Fatalf("loader %d failed: %v", i, err)
		}
	}
	for i := range 3 {
		cm := h.configMap(protocol.LoaderConfigMapName(run.Name, i))
		if rep, err := protocol.DecodeLoaderReport(cm.Data); err != nil || rep.Loaded != 10 {
			t.Errorf("loader %d reported %+v, %v; want its third, 10 units", i, rep, err)
		}
	}
	if s, a := h.countRows(run, singers), h.countRows(run, albums); s != 30 || a != 60 {
		t.Fatalf("the loaders left %d singers and %d albums; want exactly 30 and 60", s, a)
	}

	h.kubelet(run, 0)
	got := h.finished(run, 90*time.Second)
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue {
		t.Fatalf("run ended %s/%s: %s", c.Status, c.Reason, c.Message)
	}
	if ds := got.Status.Dataset; ds == nil || ds.Loaded != 30 || len(ds.DDL) != 2 || !strings.HasPrefix(ds.DDL[0], "CREATE TABLE "+singers) {
		t.Errorf("status.dataset = %+v; want 30 units loaded and the custom DDL", ds)
	}
	if o := got.Status.Overall; o == nil || o.Count == 0 || o.Errors != 0 {
		t.Errorf("status.overall = %+v; want operations and no errors", o)
	}
}

package benchmarkrun_test

import (
	"context"
	"slices"
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
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
)

// threeTableWorkload is a Custom workload of three tables: Singers with
// albumsPerSinger interleaved Albums each, and Labels beside them. Its one
// operation reads, so a run leaves the loaded rows as they are.
func threeTableWorkload(t *testing.T, albumsPerSinger int32) v1alpha1.WorkloadSpec {
	t.Helper()
	var w v1alpha1.WorkloadSpec
	err := yaml.UnmarshalStrict([]byte(`
type: Custom
custom:
  ddl:
  - CREATE TABLE Singers (SingerId INT64 NOT NULL, Name STRING(100)) PRIMARY KEY (SingerId)
  - CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL, Title STRING(MAX)) PRIMARY KEY (SingerId, AlbumId), INTERLEAVE IN PARENT Singers ON DELETE CASCADE
  - CREATE TABLE Labels (LabelId INT64 NOT NULL, Name STRING(100)) PRIMARY KEY (LabelId)
  tables:
  - {name: Singers, rows: 30}
  - {name: Albums, rowsPerParent: 2}
  - {name: Labels, rows: 12}
operations:
- name: albums-of
  type: Query
  weight: 1
  custom:
    sql: SELECT AlbumId, Title FROM Albums WHERE SingerId = @id
    params:
    - name: id
      key: {table: Singers, column: SingerId}
`), &w)
	if err != nil {
		t.Fatalf("decoding the workload: %v", err)
	}
	w.Custom.Tables[1].RowsPerParent = ptr.To(albumsPerSinger)
	w.Dataset.LoaderPods = ptr.To[int32](3)
	return w
}

// TestCustomRunLoadsOnlyTheTablesWhoseMarkersDoNotMatch: through the
// operator, a second Custom run on the same database, with Albums' row
// count changed (and dataset.reload), has its loader pods load Albums
// alone, as `spanbench run` does: the control document names Albums, the
// loaders split Albums' 30 units, Albums then holds exactly its new 90
// rows, and Singers and Labels are not written — an edit made to each
// between the runs survives, and their markers keep their commit
// timestamps. Status and conditions say which tables loaded and which
// were kept.
func TestCustomRunLoadsOnlyTheTablesWhoseMarkersDoNotMatch(t *testing.T) {
	h := newHarness(t)
	h.startManager(benchmarkrun.SpannerPreparer{})
	customRun := func(name string, w v1alpha1.WorkloadSpec) *v1alpha1.BenchmarkRun {
		run := h.runSpec(name, 1)
		w.Load, w.Duration, w.Interval = run.Spec.Workload.Load, run.Spec.Workload.Duration, run.Spec.Workload.Interval
		run.Spec.Workload = w
		return run
	}

	first := customRun("first", threeTableWorkload(t, 2))
	h.create(first)
	h.kubelet(first, 0)
	if got := h.finished(first, 90*time.Second); h.condition(got, v1alpha1.ConditionSucceeded).Status != metav1.ConditionTrue {
		t.Fatalf("the first run did not succeed: %+v", h.condition(got, v1alpha1.ConditionSucceeded))
	}
	for table, want := range map[string]int64{"Singers": 30, "Albums": 60, "Labels": 12} {
		if got := h.countRows(first, table); got != want {
			t.Fatalf("the first run left %d rows in %s, want %d", got, table, want)
		}
	}

	// Edits a rewrite of Singers or Labels would undo.
	db := h.openDatabase(first)
	ctx := context.Background()
	if _, err := db.Client.Apply(ctx, []*spanner.Mutation{
		spanner.Update("Singers", []string{"SingerId", "Name"}, []any{int64(5), "kept"}),
		spanner.Delete("Labels", spanner.Key{int64(3)}),
	}); err != nil {
		t.Fatal(err)
	}
	loadedAt := markerTimes(t, db.Client)

	second := customRun("second", threeTableWorkload(t, 3))
	second.Spec.Workload.Dataset.Reload = true
	h.create(second)
	h.eventually("the second run's loader Job exists", 20*time.Second, func() bool { return h.job(v1alpha1.LoaderJobName(second)) != nil })
	ctl, err := protocol.DecodeControl([]byte(h.configMap(protocol.ControlConfigMapName(second.Name)).Data[protocol.KeyControl]))
	if err != nil || !slices.Equal(ctl.LoadTables, []string{"Albums"}) {
		t.Fatalf("the control document tells the loaders LoadTables %q (%v); want Albums alone", ctl.LoadTables, err)
	}
	loading := h.current(second)
	wantScope := "2 of 3 tables already loaded (markers match: Singers, Labels); loading Albums"
	if c := h.condition(loading, v1alpha1.ConditionDatasetLoaded); c == nil || !strings.Contains(c.Message, wantScope) {
		t.Errorf("DatasetLoaded while loading = %+v; want it to say %q", c, wantScope)
	}
	h.mustLoad(second)
	for i := range 3 {
		rep, err := protocol.DecodeLoaderReport(h.configMap(protocol.LoaderConfigMapName(second.Name, i)).Data)
		if err != nil || rep.Loaded != 10 {
			t.Errorf("loader %d reported %+v, %v; want its third of Albums' 30 units, 10", i, rep, err)
		}
	}
	h.kubelet(second, 0)
	got := h.finished(second, 90*time.Second)
	if c := h.condition(got, v1alpha1.ConditionSucceeded); c.Status != metav1.ConditionTrue {
		t.Fatalf("the second run ended %s/%s: %s", c.Status, c.Reason, c.Message)
	}

	for table, want := range map[string]int64{"Singers": 30, "Albums": 90, "Labels": 11} {
		if n := h.countRows(second, table); n != want {
			t.Errorf("after the second run %s holds %d rows, want %d (Albums reloaded with 3 per singer; Labels not rewritten, its deleted row still gone)", table, n, want)
		}
	}
	var name string
	row, err := db.Client.Single().ReadRow(ctx, "Singers", spanner.Key{int64(5)}, []string{"Name"})
	if err == nil {
		err = row.Columns(&name)
	}
	if err != nil || name != "kept" {
		t.Errorf("singer 5 is named %q (%v) after the second run; the loaders rewrote Singers, whose marker matched", name, err)
	}
	after := markerTimes(t, db.Client)
	for _, table := range []string{"Singers", "Labels"} {
		if !after[table].Equal(loadedAt[table]) {
			t.Errorf("the marker of %s was rewritten (loaded at %s, now %s); only Albums' was to be written", table, loadedAt[table], after[table])
		}
	}
	if !after["Albums"].After(loadedAt["Albums"]) {
		t.Errorf("the marker of Albums was not rewritten (%s, before %s)", after["Albums"], loadedAt["Albums"])
	}
	if m, ok, err := dataset.ReadMarker(ctx, db.Client, "Albums"); err != nil || !ok || m.Rows != 90 {
		t.Errorf("Albums' marker = %+v (present %v, %v); want 90 rows", m, ok, err)
	}

	ds := got.Status.Dataset
	wantTables := []v1alpha1.DatasetTableStatus{{Name: "Singers", Rows: 30, Source: v1alpha1.DatasetExisting},
		{Name: "Albums", Rows: 90, Source: v1alpha1.DatasetReloaded}, {Name: "Labels", Rows: 12, Source: v1alpha1.DatasetExisting}}
	if ds == nil || !slices.Equal(ds.Tables, wantTables) || ds.Source != v1alpha1.DatasetReloaded || ds.Loaded != 30 {
		t.Errorf("status.dataset = %+v; want tables %+v, source Reloaded, all 30 units held", ds, wantTables)
	}
	wantDone := "loaded Albums (90 rows) in "
	if c := h.condition(got, v1alpha1.ConditionDatasetLoaded); !strings.Contains(c.Message, wantDone) || !strings.Contains(c.Message, "markers match: Singers, Labels") {
		t.Errorf("DatasetLoaded at the end says %q; want %q and the kept tables", c.Message, wantDone)
	}
}

// openDatabase is a data session of the run's database, closed with the
// test.
func (h *harness) openDatabase(run *v1alpha1.BenchmarkRun) *session.Session {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := session.Open(ctx, endpoint.Emulator(run.Spec.Target.EmulatorHost), run.Spec.Target)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(s.Close)
	return s
}

// markerTimes are the commit timestamps of the dataset markers, by table.
func markerTimes(t *testing.T, c *spanner.Client) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	err := c.Single().Read(context.Background(), dataset.MarkerTable, spanner.AllKeys(), []string{"TableName", "LoadedAt"}).Do(func(r *spanner.Row) error {
		var table string
		var at time.Time
		if err := r.Columns(&table, &at); err != nil {
			return err
		}
		out[table] = at
		return nil
	})
	if err != nil {
		t.Fatalf("reading the dataset markers: %v", err)
	}
	return out
}

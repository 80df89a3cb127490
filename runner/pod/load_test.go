package pod

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

// createLoaderMaps creates the empty loader ConfigMaps, as the controller
// does.
func createLoaderMaps(t *testing.T, ns, run string, loaders int) {
	t.Helper()
	for i := range loaders {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: protocol.LoaderConfigMapName(run, i)}}
		if err := k8sClient.Create(bounded(t), cm); err != nil {
			t.Fatalf("creating loader ConfigMap %d: %v", i, err)
		}
	}
}

// loaderReport reads loader i's report, which must decode.
func loaderReport(t *testing.T, ns, run string, i int) protocol.LoaderReport {
	t.Helper()
	var cm corev1.ConfigMap
	if err := k8sClient.Get(bounded(t), client.ObjectKey{Namespace: ns, Name: protocol.LoaderConfigMapName(run, i)}, &cm); err != nil {
		t.Fatalf("reading loader ConfigMap %d: %v", i, err)
	}
	rep, err := protocol.DecodeLoaderReport(cm.Data)
	if err != nil {
		t.Fatalf("loader ConfigMap %d holds %v, which does not decode: %v", i, cm.Data, err)
	}
	return rep
}

// load runs loader i to its end.
func load(t *testing.T, ns, run string, i int) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return Load(ctx, k8sClient, Options{Namespace: ns, Run: run, Index: i, Log: testLog(t).WithName(fmt.Sprintf("loader-%d", i))})
}

// TestLoadersCoverTheKeySpaceOnce: two loaders each load their slice of an
// odd row count, report it in their maps, and together write every row; a
// loader run again after it succeeded loads nothing.
func TestLoadersCoverTheKeySpaceOnce(t *testing.T) {
	spec := ycsb(1001, time.Second, readOp) // an odd count: the slices differ in size
	batch, writers, loaders := int32(100), int32(2), int32(2)
	spec.Dataset.BatchRows, spec.Dataset.Loaders, spec.Dataset.LoaderPods = &batch, &writers, &loaders
	target := emptyDatabase(t, &spec)
	ns, run := newNamespace(t), "load"
	createControl(t, ns, protocol.Control{Run: run, Namespace: ns, Shards: 1, Target: target, Workload: spec})
	createLoaderMaps(t, ns, run, 2)

	errs := make(chan error, 2)
	for i := range 2 {
		go func() { errs <- load(t, ns, run, i) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("a loader failed: %v", err)
		}
	}
	for i, want := range []int64{500, 501} {
		rep := loaderReport(t, ns, run, i)
		if rep.State != protocol.StateSucceeded || rep.Loaded != want {
			t.Errorf("loader %d's map says state %q, loaded %d; want Succeeded with its slice, %d rows", i, rep.State, rep.Loaded, want)
		}
		if rep.Retries != 0 {
			t.Errorf("loader %d's first attempt counted itself as retry %d", i, rep.Retries)
		}
	}
	if n := countRows(t, target, &spec); n != 1001 {
		t.Fatalf("after loading, the table holds %d rows; want exactly 1001", n)
	}

	deleteAllRows(t, target, &spec)
	if err := load(t, ns, run, 0); err != nil {
		t.Fatalf("loader 0 run again after it succeeded: %v", err)
	}
	if n := countRows(t, target, &spec); n != 0 {
		t.Errorf("loader 0 run again after it succeeded wrote %d rows; want none", n)
	}
}

// TestFailedLoaderReportsWhyAndARetryLoads: a loader that cannot write
// (the table is missing) stores Failed and the reason in its map; once the
// cause is gone, the Job's retry of the same index loads the slice and
// replaces the failure.
func TestFailedLoaderReportsWhyAndARetryLoads(t *testing.T) {
	spec := ycsb(300, time.Second, readOp)
	tweet := spec
	tweet.Type = v1alpha1.WorkloadTweet
	target := emptyDatabase(t, &tweet) // a database without usertable
	ns, run := newNamespace(t), "retry"
	createControl(t, ns, protocol.Control{Run: run, Namespace: ns, Shards: 1, Target: target, Workload: spec})
	createLoaderMaps(t, ns, run, 1)

	err := load(t, ns, run, 0)
	rep := loaderReport(t, ns, run, 0)
	if err == nil || rep.State != protocol.StateFailed || !strings.Contains(rep.Message, "usertable") {
		t.Fatalf("loading into a missing table: err %v, map state %q message %q; want Failed naming usertable", err, rep.State, rep.Message)
	}

	schema, err := workload.SchemaFor(&spec, target.Dialect)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := session.EnsureDatabase(ctx, endpoint.Emulator(target.EmulatorHost), target, schema, false); err != nil {
		t.Fatalf("adding usertable: %v", err)
	}
	if err := load(t, ns, run, 0); err != nil {
		t.Fatalf("the retried loader failed: %v", err)
	}
	want := protocol.LoaderReport{State: protocol.StateSucceeded, Loaded: 300, ResumeFrom: 300, Retries: 1, ResumedAt: 0}
	if got := loaderReport(t, ns, run, 0); got != want {
		t.Errorf("after the retry the map says %+v; want %+v: Succeeded, 300 rows, no message, 1 retry resumed at row 0", got, want)
	}
	if n := countRows(t, target, &spec); n != 300 {
		t.Errorf("after the retry the table holds %d rows; want 300", n)
	}
}

// TestLoaderOutsideTheRunsLoadersRefuses: an index the control does not
// know is refused, in the map too.
func TestLoaderOutsideTheRunsLoadersRefuses(t *testing.T) {
	spec := ycsb(10, time.Second, readOp)
	ns, run := newNamespace(t), "range"
	target := v1alpha1.TargetSpec{Project: "spanbench-test", Instance: v1alpha1.InstanceSpec{Name: "test"}, Database: "bench", EmulatorHost: "127.0.0.1:1"}
	createControl(t, ns, protocol.Control{Run: run, Namespace: ns, Shards: 1, Target: target, Workload: spec})
	createLoaderMaps(t, ns, run, 2)
	err := load(t, ns, run, 1)
	if err == nil || !strings.Contains(err.Error(), "loader index 1 is out of range") || loaderReport(t, ns, run, 1).State != protocol.StateFailed {
		t.Fatalf("loader 1 of 1: err %v; want out of range, reported Failed", err)
	}
}

func deleteAllRows(t *testing.T, target v1alpha1.TargetSpec, spec *v1alpha1.WorkloadSpec) {
	t.Helper()
	onTable(t, target, spec, func(ctx context.Context, c *spanner.Client, table string) {
		if _, err := c.Apply(ctx, []*spanner.Mutation{spanner.Delete(table, spanner.AllKeys())}); err != nil {
			t.Fatalf("deleting the rows: %v", err)
		}
	})
}

// TestRetriedLoaderResumesWhereTheFailedAttemptLeftOff: a loader whose map
// says every row below 700 of its slice [0, 1000) is loaded writes only
// [700, 1000), reports the whole slice loaded, and counts itself as the
// slice's second retry, resumed at 700.
func TestRetriedLoaderResumesWhereTheFailedAttemptLeftOff(t *testing.T) {
	spec := ycsb(1000, time.Second, readOp)
	target := emptyDatabase(t, &spec)
	ns, run := newNamespace(t), "resume"
	createControl(t, ns, protocol.Control{Run: run, Namespace: ns, Shards: 1, Target: target, Workload: spec})
	createLoaderMaps(t, ns, run, 1)
	patch := `{"data":{"state":"Failed","message":"evicted","loaded":"700","resumeFrom":"700","retries":"1","resumedAt":"400"}}`
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: protocol.LoaderConfigMapName(run, 0)}}
	if err := k8sClient.Patch(bounded(t), cm, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
	if err := load(t, ns, run, 0); err != nil {
		t.Fatalf("the retried loader failed: %v", err)
	}
	if n := countRows(t, target, &spec); n != 300 {
		t.Errorf("the retry wrote %d rows into an empty table; want only the 300 above its resume point", n)
	}
	got := loaderReport(t, ns, run, 0)
	if got.State != protocol.StateSucceeded || got.Loaded != 1000 || got.ResumeFrom != 1000 {
		t.Errorf("after the resumed load the map says %+v; want Succeeded, 1000 loaded, resumeFrom 1000", got)
	}
	if got.Retries != 2 || got.ResumedAt != 700 {
		t.Errorf("the second retry recorded retries %d, resumedAt %d; want 2 and 700", got.Retries, got.ResumedAt)
	}
}

func TestNewSliceResumesOnlyInsideItself(t *testing.T) {
	for resume, want := range map[int64]int64{0: 500, 400: 500, 500: 500, 750: 750, 1000: 1000, 1001: 500, -3: 500} {
		if got := newSlice(2000, 1, 4, resume); got.from != 500 || got.to != 1000 || got.start != want {
			t.Errorf("slice 1 of 4 of 2000 rows with resumeFrom %d = %+v; want [500, 1000) starting at %d", resume, got, want)
		}
	}
}

// TestLoaderRefusesATableListNotOfItsDataset: the tables a loader loads
// come from a ConfigMap; a name the dataset does not have (here a case
// that the DDL does not write) is refused before anything is written,
// naming it and the dataset's tables, in the map too.
func TestLoaderRefusesATableListNotOfItsDataset(t *testing.T) {
	var spec v1alpha1.WorkloadSpec
	err := yaml.UnmarshalStrict([]byte(`
type: Custom
custom:
  ddl:
  - CREATE TABLE Singers (SingerId INT64 NOT NULL) PRIMARY KEY (SingerId)
  - CREATE TABLE Albums (SingerId INT64 NOT NULL, AlbumId INT64 NOT NULL) PRIMARY KEY (SingerId, AlbumId), INTERLEAVE IN PARENT Singers
  tables: [{name: Singers, rows: 10}, {name: Albums, rowsPerParent: 2}]
operations:
- name: get
  type: ReadRows
  weight: 1
  custom:
    read: {table: Singers, columns: [SingerId], shape: Key}
load: {rate: 10}
`), &spec)
	if err != nil {
		t.Fatal(err)
	}
	spec.Duration = &metav1.Duration{Duration: time.Second}
	spec.Interval = &metav1.Duration{Duration: time.Second} // a run holds at least one interval
	spec = spec.Resolved()
	ns, run := newNamespace(t), "tables"
	target := v1alpha1.TargetSpec{Project: "spanbench-test", Instance: v1alpha1.InstanceSpec{Name: "test"}, Database: "bench", EmulatorHost: "127.0.0.1:1"}
	createControl(t, ns, protocol.Control{Run: run, Namespace: ns, Shards: 1, Target: target, Workload: spec, LoadTables: []string{"albums"}})
	createLoaderMaps(t, ns, run, 1)
	err = load(t, ns, run, 0)
	want := `LoadTables: table "albums" is not a table of the dataset (Singers, Albums)`
	if rep := loaderReport(t, ns, run, 0); err == nil || !strings.Contains(err.Error(), want) || rep.State != protocol.StateFailed || !strings.Contains(rep.Message, want) {
		t.Fatalf("loading LoadTables [albums]: err %v, map %+v; want Failed saying %q", err, rep, want)
	}
}

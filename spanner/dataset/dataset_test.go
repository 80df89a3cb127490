package dataset_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/workload"
)

func spec(rows int64, fieldBytes int32) *v1alpha1.WorkloadSpec {
	rate := int32(1)
	s := &v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadYCSB, Dataset: v1alpha1.DatasetSpec{Rows: &rows, FieldBytes: &fieldBytes},
		Operations: []v1alpha1.OperationSpec{{Type: v1alpha1.OpRead, Weight: 1}},
		Load:       v1alpha1.LoadSpec{Rate: &rate}, Duration: &metav1.Duration{Duration: time.Second}}
	*s = s.Resolved()
	return s
}

func count(t *testing.T, c *spanner.Client) int64 {
	t.Helper()
	row, err := c.Single().Query(context.Background(), spanner.Statement{SQL: "SELECT COUNT(*) FROM usertable"}).Next()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := row.Columns(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMarkerSkipsMatchingDataRefusesOtherAndReloadsOnRequest walks the
// dataset lifecycle on one database of each dialect: the fixture loads 1200
// rows; the same spec again is skipped; another row count or field size is
// refused with ErrMismatch and nothing changes; with reload it is replaced.
func TestMarkerSkipsMatchingDataRefusesOtherAndReloadsOnRequest(t *testing.T) {
	for _, d := range []v1alpha1.Dialect{v1alpha1.DialectGoogleSQL, v1alpha1.DialectPostgreSQL} {
		t.Run(string(d), func(t *testing.T) { checkMarkerLifecycle(t, d) })
	}
}

func checkMarkerLifecycle(t *testing.T, d v1alpha1.Dialect) {
	ctx := context.Background()
	first := spec(1200, 100)
	s := sessiontest.StartDialect(t, first, d)
	schema, _ := workload.SchemaFor(first, d)
	if n := count(t, s.Client); n != 1200 {
		t.Fatalf("the first load left %d rows, want 1200", n)
	}

	out, err := dataset.Prepare(ctx, s.Client, schema, first.Dataset, func(dataset.Progress) { t.Error("a matching dataset was loaded again") })
	if err != nil || !out.Skipped {
		t.Fatalf("preparing the same dataset again: skipped=%v err=%v; want skipped", out.Skipped, err)
	}

	for _, other := range []*v1alpha1.WorkloadSpec{spec(1000, 100), spec(1200, 50)} {
		otherSchema, _ := workload.SchemaFor(other, d)
		_, err := dataset.Prepare(ctx, s.Client, otherSchema, other.Dataset, nil)
		if !errors.Is(err, dataset.ErrMismatch) || !strings.Contains(err.Error(), "dataset.reload") {
			t.Fatalf("preparing %d rows of %d bytes over 1200 of 100: err = %v; want ErrMismatch naming dataset.reload", *other.Dataset.Rows, *other.Dataset.FieldBytes, err)
		}
	}
	if n := count(t, s.Client); n != 1200 {
		t.Fatalf("a refused dataset changed the table: %d rows", n)
	}

	smaller := spec(700, 100)
	smaller.Dataset.Reload = true
	out, err = dataset.Prepare(ctx, s.Client, schema, smaller.Dataset, nil)
	if err != nil || !out.Reloaded {
		t.Fatalf("reload: reloaded=%v err=%v", out.Reloaded, err)
	}
	if n := count(t, s.Client); n != 700 {
		t.Fatalf("after reloading 700 rows the table holds %d", n)
	}
	m, ok, err := dataset.ReadMarker(ctx, s.Client, "usertable")
	if err != nil || !ok || m.Rows != 700 {
		t.Fatalf("marker after reload = %+v (present %v, err %v); want 700 rows", m, ok, err)
	}
}

// TestDatasetsOfTheTwoDialectsNeverMatch: the same workload, size and rows
// in GoogleSQL and in PostgreSQL are different datasets, so a marker never
// vouches for a dataset of the other dialect.
func TestDatasetsOfTheTwoDialectsNeverMatch(t *testing.T) {
	for _, typ := range []v1alpha1.WorkloadType{v1alpha1.WorkloadYCSB, v1alpha1.WorkloadTweet} {
		w := spec(1000, 100)
		w.Type = typ
		gsql, err := workload.SchemaFor(w, v1alpha1.DialectGoogleSQL)
		if err != nil {
			t.Fatal(err)
		}
		pg, err := workload.SchemaFor(w, v1alpha1.DialectPostgreSQL)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := dataset.Want(gsql, 1000), dataset.Want(pg, 1000); a == b {
			t.Errorf("%s: the GoogleSQL and PostgreSQL datasets have the same marker %+v", typ, a)
		}
		again, _ := workload.SchemaFor(w, v1alpha1.DialectPostgreSQL)
		if dataset.Want(pg, 1000) != dataset.Want(again, 1000) {
			t.Errorf("%s: the PostgreSQL marker is not a pure function of the schema", typ)
		}
	}
	if dataset.MarkerDDL("") != dataset.MarkerDDL(v1alpha1.DialectGoogleSQL) || dataset.MarkerDDL("MySQL") != "" {
		t.Error(`MarkerDDL("") is not GoogleSQL's, or MarkerDDL of an unknown dialect is not ""`)
	}
}

// TestClearEmptiesTheTableAndItsMarkerInBothDialects clears a loaded Tweet
// table, whose mixed-case name PostgreSQL must quote, in a database of each
// dialect.
func TestClearEmptiesTheTableAndItsMarkerInBothDialects(t *testing.T) {
	for _, d := range []v1alpha1.Dialect{v1alpha1.DialectGoogleSQL, v1alpha1.DialectPostgreSQL} {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			w := spec(300, 16)
			w.Type = v1alpha1.WorkloadTweet
			s := sessiontest.StartDialect(t, w, d)
			schema, err := workload.SchemaFor(w, d)
			if err != nil {
				t.Fatal(err)
			}
			if err := dataset.Clear(ctx, s.Client, schema); err != nil {
				t.Fatalf("clearing Tweet in a %s database: %v", d, err)
			}
			var n int64
			err = s.Client.Single().Read(ctx, "Tweet", spanner.AllKeys(), []string{"Id"}).Do(func(*spanner.Row) error { n++; return nil })
			if err != nil || n != 0 {
				t.Errorf("after Clear, Tweet holds %d rows (%v); want none", n, err)
			}
			if m, ok, err := dataset.ReadMarker(ctx, s.Client, "Tweet"); ok || err != nil {
				t.Errorf("after Clear, the marker is %+v (present %v, err %v); want none", m, ok, err)
			}
		})
	}
}

// TestInterruptedLoadReportsOnlyRowsItWrote: a load cut short reports a
// watermark below which every row is in the table, so a retry may start
// there without leaving a hole.
func TestInterruptedLoadReportsOnlyRowsItWrote(t *testing.T) {
	empty := spec(0, 100)
	s := sessiontest.Start(t, empty)
	schema, _ := workload.SchemaFor(empty, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var last dataset.Progress
	var stopped bool
	err := dataset.Range(ctx, s.Client, schema, 0, 50_000, dataset.Writers{BatchRows: 100, Loaders: 4}, func(p dataset.Progress) {
		last = p
		if !stopped && p.Loaded > 0 {
			stopped = true
			cancel() // cut the load short after its first report
		}
	})
	if err == nil {
		t.Fatal("a load cancelled midway returned no error")
	}
	if last.Done <= 0 || last.Done >= 50_000 || last.Done > last.Loaded {
		t.Fatalf("the final report says done up to %d with %d loaded; want a watermark inside the range, at most the rows loaded", last.Done, last.Loaded)
	}
	keys := make([]spanner.Key, last.Done)
	for k := range keys {
		keys[k] = spanner.Key{workload.YCSBKey(int64(k))}
	}
	var found int64
	err = s.Client.Single().Read(context.Background(), "usertable", spanner.KeySetFromKeys(keys...), []string{"id"}).Do(func(*spanner.Row) error {
		found++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found != last.Done {
		t.Errorf("of the %d rows below the watermark, %d are in the table; a retry starting there would leave a hole", last.Done, found)
	}
}

// TestRateCapHoldsTheLoadToItsPace: with a cap (dataset.maxRowsPerSecond)
// no progress report shows more rows than the cap allows by then (one
// batch at once, then the rate), the whole load takes at least its rows
// over the rate, and it still writes every row. A slower host only makes
// the load slower; uncapped, the emulator writes these 1,000 rows in
// about 0.1 s.
func TestRateCapHoldsTheLoadToItsPace(t *testing.T) {
	const rows, batch, perSecond = 1000, 50, 400
	empty := spec(0, 100)
	s := sessiontest.Start(t, empty)
	schema, _ := workload.SchemaFor(empty, "")
	var reports []dataset.Progress
	begin := time.Now()
	err := dataset.Range(context.Background(), s.Client, schema, 0, rows, dataset.Writers{BatchRows: batch, Loaders: 4, RowsPerSecond: perSecond}, func(p dataset.Progress) {
		reports = append(reports, p)
	})
	took := time.Since(begin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range reports {
		if allowed := batch + perSecond*p.Elapsed.Seconds(); float64(p.Loaded) > allowed {
			t.Errorf("after %s the load had written %d rows; the cap of %d rows/s allows %.0f", p.Elapsed, p.Loaded, perSecond, allowed)
		}
	}
	if least := time.Duration(float64(rows-batch) / perSecond * float64(time.Second)); took < least {
		t.Errorf("the load of %d rows took %s; at %d rows/s it takes at least %s", rows, took, perSecond, least)
	}
	if n := count(t, s.Client); n != rows {
		t.Errorf("the capped load left %d rows, want %d", n, rows)
	}
}

// TestWritersShareTheRateCapAmongLoaderPods: each of the loader pods gets
// its share of dataset.maxRowsPerSecond; without a cap none has one.
func TestWritersShareTheRateCapAmongLoaderPods(t *testing.T) {
	d := spec(1000, 100).Dataset
	if w := dataset.WritersOf(d, 4); w.RowsPerSecond != 0 || w.BatchRows != int(*d.BatchRows) || w.Loaders != int(*d.Loaders) {
		t.Errorf("uncapped: %+v; want no rate, the spec's batchRows %d and loaders %d", w, *d.BatchRows, *d.Loaders)
	}
	capped := int64(1000)
	d.MaxRowsPerSecond = &capped
	for share, want := range map[int]float64{1: 1000, 4: 250, 3: 1000.0 / 3} {
		if w := dataset.WritersOf(d, share); w.RowsPerSecond != want {
			t.Errorf("a cap of 1000 rows/s shared by %d: %v rows/s each; want %v", share, w.RowsPerSecond, want)
		}
	}
}

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
	"github.com/spanbench/spanbench/runner/dataset"
	"github.com/spanbench/spanbench/runner/session"
	"github.com/spanbench/spanbench/runner/workload"
)

func spec(rows int64, fieldBytes int32) *v1alpha1.WorkloadSpec {
	rate := int32(1)
	s := &v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadYCSB, Dataset: v1alpha1.DatasetSpec{Rows: &rows, FieldBytes: &fieldBytes},
		Operations: []v1alpha1.OperationSpec{{Type: v1alpha1.OpRead, Weight: 1}},
		Load:       v1alpha1.LoadSpec{Rate: &rate}, Duration: &metav1.Duration{Duration: time.Second}}
	s.Default()
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
// dataset lifecycle on one database: the fixture loads 1200 rows; the same
// spec again is skipped; another row count or field size is refused with
// ErrMismatch and nothing changes; with reload it is replaced.
func TestMarkerSkipsMatchingDataRefusesOtherAndReloadsOnRequest(t *testing.T) {
	ctx := context.Background()
	first := spec(1200, 100)
	s := session.StartForTest(t, first)
	schema, _ := workload.SchemaFor(first)
	if n := count(t, s.Client); n != 1200 {
		t.Fatalf("the first load left %d rows, want 1200", n)
	}

	out, err := dataset.Prepare(ctx, s.Client, schema, first.Dataset, func(dataset.Progress) { t.Error("a matching dataset was loaded again") })
	if err != nil || !out.Skipped {
		t.Fatalf("preparing the same dataset again: skipped=%v err=%v; want skipped", out.Skipped, err)
	}

	for _, other := range []*v1alpha1.WorkloadSpec{spec(1000, 100), spec(1200, 50)} {
		otherSchema, _ := workload.SchemaFor(other)
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

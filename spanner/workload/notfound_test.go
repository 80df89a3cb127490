package workload_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/spanner/session"
)

// TestStaleReadRightAfterTheLoadIsNotFound runs, on the real emulator,
// each read shape that names keys the dataset holds with an exact 15 s
// staleness right after the dataset was loaded: the snapshot predates the
// load, so every read finds no row and must say NotFound, through both
// APIs. The same reads strong find their rows and are not NotFound; a
// QueryBySort-like value range is not covered here (it may rightly be
// empty, OperationType.ExpectsRows).
func TestStaleReadRightAfterTheLoadIsNotFound(t *testing.T) {
	loaded := time.Now()
	s := sessiontest.Start(t, ycsbSpec(v1alpha1.OperationSpec{Type: v1alpha1.OpRead, Weight: 1}))
	const staleness = 15 * time.Second
	stale := &v1alpha1.StalenessSpec{Exact: &metav1.Duration{Duration: staleness}}
	ten := int32(10)
	for _, typ := range []v1alpha1.OperationType{v1alpha1.OpRead, v1alpha1.OpScan, v1alpha1.OpReadKeys} {
		for _, api := range []v1alpha1.ReadAPI{v1alpha1.APIRead, v1alpha1.APISQL} {
			o := v1alpha1.OperationSpec{Type: typ, Weight: 1, API: api, Staleness: stale}
			if typ != v1alpha1.OpRead {
				o.Rows = &ten
			}
			rows, notFound := doOnce(t, s, o)
			if rows != 0 || !notFound {
				t.Errorf("a %s-stale %s through the %s API %s after the load: %d rows, NotFound=%v; want 0 rows and NotFound",
					staleness, typ, api, time.Since(loaded).Round(time.Millisecond), rows, notFound)
			}
			o.Staleness = nil
			if rows, notFound := doOnce(t, s, o); rows == 0 || notFound {
				t.Errorf("a strong %s through the %s API: %d rows, NotFound=%v; want rows and not NotFound", typ, api, rows, notFound)
			}
		}
	}
	if time.Since(loaded) >= staleness {
		t.Fatalf("the reads ended %s after the load began, past the %s staleness: the stale reads proved nothing", time.Since(loaded), staleness)
	}
}

// doOnce runs operation o once and returns its outcome's rows and NotFound.
func doOnce(t *testing.T, s *session.Session, o v1alpha1.OperationSpec) (int64, bool) {
	t.Helper()
	w, err := s.Workload(ycsbSpec(o), "test", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := w.Ops()[0].Do(ctx, rand.New(rand.NewPCG(7, 7)))
	if err != nil {
		t.Fatalf("%s: %v", o.Type, err)
	}
	return out.Rows, out.NotFound
}

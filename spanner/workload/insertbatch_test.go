package workload_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
)

// TestAnInsertOfSeveralRowsWritesThemAll: an Insert with rows: 25 (a
// batch, one commit of mutations) writes 25 new rows each time it runs,
// on the real emulator, for YCSB and Tweet (whose rows have a commit
// timestamp and an index entry), reports them as its outcome's rows, and
// later batches land beside earlier ones rather than on their keys.
func TestAnInsertOfSeveralRowsWritesThemAll(t *testing.T) {
	for _, tc := range []struct {
		typ   v1alpha1.WorkloadType
		table string
	}{{v1alpha1.WorkloadYCSB, "usertable"}, {v1alpha1.WorkloadTweet, "Tweet"}} {
		t.Run(string(tc.typ), func(t *testing.T) {
			rows, rate, batch := int64(100), int32(1), int32(25)
			spec := &v1alpha1.WorkloadSpec{Type: tc.typ, Dataset: v1alpha1.DatasetSpec{Rows: &rows},
				Operations: []v1alpha1.OperationSpec{{Name: "insert", Type: v1alpha1.OpInsert, Weight: 1, Rows: &batch}},
				Load:       v1alpha1.LoadSpec{Rate: &rate}, Duration: &metav1.Duration{Duration: time.Second}}
			*spec = spec.Resolved()
			s := sessiontest.Start(t, spec)
			w, err := s.Workload(spec, "batch", 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			rng := rand.New(rand.NewPCG(3, 3))
			const calls = 4
			for i := range calls {
				out, err := w.Ops()[0].Do(ctx, rng)
				if err != nil {
					t.Fatalf("insert %d: %v", i+1, err)
				}
				if out.Rows != int64(batch) {
					t.Errorf("insert %d reported %d rows, want %d", i+1, out.Rows, batch)
				}
			}
			if got, want := count(t, s, "SELECT COUNT(*) FROM "+tc.table), rows+calls*int64(batch); got != want {
				t.Errorf("%s holds %d rows after %d inserts of %d; want %d", tc.table, got, calls, batch, want)
			}
		})
	}
}

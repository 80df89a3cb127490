package benchmarkrun

import (
	"testing"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// TestConsistencyTimeoutFollowsThePopulation: the check's time limit grows
// with the warehouses it reads (30 s per Full warehouse, 1 s per Test
// one, after 2 minutes), and stops at 50 minutes, inside Spanner's one
// hour of version retention that its snapshot needs.
func TestConsistencyTimeoutFollowsThePopulation(t *testing.T) {
	for _, tc := range []struct {
		population v1alpha1.TPCCPopulation
		warehouses int32
		want       time.Duration
	}{
		{v1alpha1.TPCCTest, 1, 2*time.Minute + time.Second},
		{v1alpha1.TPCCTest, 100, 3*time.Minute + 40*time.Second},
		{v1alpha1.TPCCFull, 1, 2*time.Minute + 30*time.Second},
		{v1alpha1.TPCCFull, 10, 7 * time.Minute},
		{v1alpha1.TPCCFull, 100, 50 * time.Minute},
	} {
		w := &v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadTPCC, TPCC: &v1alpha1.TPCCSpec{Population: tc.population, Warehouses: &tc.warehouses}}
		if got := consistencyTimeout(w); got != tc.want {
			t.Errorf("%s population, %d warehouses: time limit %s, want %s", tc.population, tc.warehouses, got, tc.want)
		}
	}
}

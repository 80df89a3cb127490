package workload_test

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/workload"
)

var fullWarehouses = flag.Int("tpcc.full-warehouses", 1, "Full warehouses BenchmarkTPCCConsistencyCheck loads and checks")

// BenchmarkTPCCConsistencyCheck measures the consistency check, partitioned
// by warehouse, of a freshly loaded population on the emulator: the Test
// population at 40 warehouses (about 400,000 rows, as many as the emulator
// loads here in about a minute) and one warehouse of the Full population
// (about 460,000 rows). It reports the rows read per second and the
// seconds per warehouse, and fails if a condition does not hold. Against
// the emulator this measures the check and the emulator, not Cloud
// Spanner (docs/workloads.md extrapolates).
//
// -tpcc.full-warehouses N checks N Full warehouses instead of one, for a
// measurement at a larger scale than CI's: each takes the emulator minutes
// to load, so the load's limit grows by 15 minutes a warehouse.
func BenchmarkTPCCConsistencyCheck(b *testing.B) {
	for _, tc := range []struct {
		population v1alpha1.TPCCPopulation
		warehouses int32
	}{{v1alpha1.TPCCTest, 40}, {v1alpha1.TPCCFull, int32(*fullWarehouses)}} {
		b.Run(fmt.Sprintf("%s/warehouses=%d", tc.population, tc.warehouses), func(b *testing.B) {
			spec := tpccSpec(tc.warehouses)
			spec.TPCC.Population = tc.population
			spec.Dataset.Rows = nil
			*spec = spec.Resolved()
			// An empty database, then the population loaded by 4 writers
			// within 15 minutes per Full warehouse: one takes longer
			// than sessiontest's load allows.
			empty := *spec
			empty.Dataset.Rows = new(int64)
			s := sessiontest.Start(b, &empty)
			schema, err := workload.SchemaFor(spec, "")
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(max(1, *fullWarehouses))*15*time.Minute)
			defer cancel()
			start := time.Now()
			if err := dataset.Range(ctx, s.Client, schema, 0, *spec.Dataset.Rows, dataset.Writers{BatchRows: int(*spec.Dataset.BatchRows), Loaders: 4}, nil); err != nil {
				b.Fatal(err)
			}
			b.Logf("loaded %d units in %s", *spec.Dataset.Rows, time.Since(start).Round(time.Second))
			for b.Loop() {
				start := time.Now()
				check, err := workload.CheckTPCC(context.Background(), s.Client)
				took := time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				for _, c := range check.Conditions {
					if !c.Passed {
						b.Fatalf("the loaded population fails %s: %s", c.Name, c.Detail)
					}
				}
				b.Logf("checked %d warehouses, %d rows, in %s", check.Warehouses, check.Rows, took.Round(time.Millisecond))
				b.ReportMetric(float64(check.Rows)/took.Seconds(), "rows/s")
				b.ReportMetric(took.Seconds()/float64(check.Warehouses), "s/warehouse")
				b.ReportMetric(float64(check.Rows), "rows")
			}
		})
	}
}

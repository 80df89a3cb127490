package dataset_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/workload"
)

// BenchmarkLoad measures what one loader pod does: 20,000 YCSB rows of
// about 1 KiB (ten 100-byte fields) into an empty table of a fresh
// emulator, in batches of 500 rows, with 1, 4 and 16 parallel writers
// (dataset.loaders). It reports rows/s and MiB/s of field data. Against
// the emulator this measures spanbench's loader and the emulator, not
// Cloud Spanner.
func BenchmarkLoad(b *testing.B) {
	const rows, batch = 20_000, 500
	for _, writers := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			empty := spec(0, 100)
			s := sessiontest.Start(b, empty)
			schema, err := workload.SchemaFor(empty, "")
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				start := time.Now()
				err := dataset.Range(ctx, s.Client, schema, 0, rows, dataset.Writers{BatchRows: batch, Loaders: writers}, nil)
				took := time.Since(start)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(rows/took.Seconds(), "rows/s")
				b.ReportMetric(rows*10*100/took.Seconds()/(1<<20), "MiB/s")
			}
		})
	}
}

package dataset

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/spanner"
	"golang.org/x/sync/errgroup"

	"github.com/spanbench/spanbench/runner/workload"
)

// Progress is a snapshot of a running load.
type Progress struct {
	// Loaded and Total count rows.
	Loaded, Total int64
	// Elapsed is the time since the load began.
	Elapsed time.Duration
}

// RowsPerSecond is the average load rate so far.
func (p Progress) RowsPerSecond() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Loaded) / p.Elapsed.Seconds()
}

// Range loads rows [from, to) of a schema with `loaders` parallel writers,
// each applying batches of batchRows rows. Rows are written with
// InsertOrUpdate and are a pure function of their index, so a load that is
// interrupted and run again converges to the same dataset. progress, if not
// nil, is called about once a second and at the end.
func Range(ctx context.Context, c *spanner.Client, s workload.Schema, from, to int64, batchRows, loaders int, progress func(Progress)) error {
	if from >= to {
		return nil
	}
	start := time.Now()
	var next, loaded atomic.Int64
	next.Store(from)
	g, gctx := errgroup.WithContext(ctx)
	for range max(loaders, 1) {
		g.Go(func() error { return loadBatches(gctx, c, s, &next, &loaded, to, int64(batchRows)) })
	}
	stop := reportProgress(progress, &loaded, to-from, start)
	err := g.Wait()
	stop()
	if err != nil {
		return fmt.Errorf("loading rows %d-%d of %s: %w", from, to, s.Table(), err)
	}
	return nil
}

func loadBatches(ctx context.Context, c *spanner.Client, s workload.Schema, next, loaded *atomic.Int64, to, batch int64) error {
	for {
		lo := next.Add(batch) - batch
		if lo >= to {
			return nil
		}
		hi := min(lo+batch, to)
		ms := make([]*spanner.Mutation, 0, hi-lo)
		for k := lo; k < hi; k++ {
			ms = append(ms, s.Row(k))
		}
		// At least once is safe for idempotent upserts and skips a
		// BeginTransaction round trip per batch.
		if _, err := c.Apply(ctx, ms, spanner.ApplyAtLeastOnce()); err != nil {
			return err
		}
		loaded.Add(hi - lo)
	}
}

// reportProgress calls progress every second until stopped, then once more.
func reportProgress(progress func(Progress), loaded *atomic.Int64, total int64, start time.Time) (stop func()) {
	if progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				progress(Progress{Loaded: loaded.Load(), Total: total, Elapsed: time.Since(start)})
				return
			case <-t.C:
				progress(Progress{Loaded: loaded.Load(), Total: total, Elapsed: time.Since(start)})
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

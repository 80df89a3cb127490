package dataset

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/spanner"
	"golang.org/x/sync/errgroup"
	"golang.org/x/time/rate"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/workload"
)

// Progress is a snapshot of a running load.
type Progress struct {
	// Loaded and Total count rows.
	Loaded, Total int64
	// Done is a watermark: every row of the range below it is loaded, so
	// a load of the same range that starts over may start there. It lags
	// Loaded by the batches in flight.
	Done int64
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

// Writers is how a load writes its rows: Loaders parallel writers, each
// applying batches of BatchRows rows, at most RowsPerSecond rows a second
// among them (0: as fast as the database takes the batches).
type Writers struct {
	BatchRows, Loaders int
	RowsPerSecond      float64
}

// WritersOf is the writers of a dataset spec for one of share loaders
// (loader pods) that split the load and its rate cap
// (dataset.maxRowsPerSecond) evenly: 1 for a load by one process. d has
// its defaults (batchRows and loaders set).
func WritersOf(d v1alpha1.DatasetSpec, share int) Writers {
	w := Writers{BatchRows: int(*d.BatchRows), Loaders: int(*d.Loaders)}
	if d.MaxRowsPerSecond != nil {
		w.RowsPerSecond = float64(*d.MaxRowsPerSecond) / float64(max(share, 1))
	}
	return w
}

// Range loads rows [from, to) of a schema with w's writers. Rows are
// written with InsertOrUpdate and are a pure function of their index, so
// a load that is interrupted and run again converges to the same dataset;
// Progress.Done says where such a second run may start. progress, if not
// nil, is called about once a second and once at the end, also when the
// load fails.
func Range(ctx context.Context, c *spanner.Client, s workload.Schema, from, to int64, w Writers, progress func(Progress)) error {
	if from >= to {
		return nil
	}
	start := time.Now()
	b := &batches{next: from, to: to, size: int64(max(w.BatchRows, 1)), inFlight: map[int64]bool{}, pace: pace(w)}
	g, gctx := errgroup.WithContext(ctx)
	for range max(w.Loaders, 1) {
		g.Go(func() error { return loadBatches(gctx, c, s, b) })
	}
	stop := reportProgress(progress, b, from, start)
	err := g.Wait()
	stop()
	if err != nil {
		return fmt.Errorf("loading rows %d-%d of %s: %w", from, to, s.Table(), err)
	}
	return nil
}

// pace is the limiter that holds w's writers to its rate, nil without
// one. Its burst is one batch: a batch is written whole once the rate has
// earned its rows, so the rows written by time t never exceed
// batchRows + RowsPerSecond·t.
func pace(w Writers) *rate.Limiter {
	if w.RowsPerSecond <= 0 {
		return nil
	}
	return rate.NewLimiter(rate.Limit(w.RowsPerSecond), max(w.BatchRows, 1))
}

// batches hands out a range's batches in key order and keeps track of
// which are done. A batch is claimed and marked in flight under one lock,
// so the watermark never passes a batch that was claimed but not written.
type batches struct {
	mu          sync.Mutex
	next, to    int64
	size        int64
	inFlight    map[int64]bool
	loadedCount atomic.Int64
	// pace, if not nil, is waited on for each batch's rows before it is
	// written.
	pace *rate.Limiter
}

// claim returns the next batch [lo, hi), or ok=false when none is left.
func (b *batches) claim() (lo, hi int64, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next >= b.to {
		return 0, 0, false
	}
	lo, hi = b.next, min(b.next+b.size, b.to)
	b.next = hi
	b.inFlight[lo] = true
	return lo, hi, true
}

// done records a written batch.
func (b *batches) done(lo, hi int64) {
	b.mu.Lock()
	delete(b.inFlight, lo)
	b.mu.Unlock()
	b.loadedCount.Add(hi - lo)
}

// watermark is the first row not known to be written: the lowest batch in
// flight (a failed one stays in flight), else the next to claim.
func (b *batches) watermark() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := b.next
	for lo := range b.inFlight {
		w = min(w, lo)
	}
	return w
}

func loadBatches(ctx context.Context, c *spanner.Client, s workload.Schema, b *batches) error {
	for {
		lo, hi, ok := b.claim()
		if !ok {
			return nil
		}
		if b.pace != nil {
			if err := b.pace.WaitN(ctx, int(hi-lo)); err != nil {
				return err
			}
		}
		ms := make([]*spanner.Mutation, 0, hi-lo)
		for k := lo; k < hi; k++ {
			ms = append(ms, s.Rows(k)...)
		}
		// At least once is safe for idempotent upserts and skips a
		// BeginTransaction round trip per batch.
		if _, err := c.Apply(ctx, ms, spanner.ApplyAtLeastOnce()); err != nil {
			return err
		}
		b.done(lo, hi)
	}
}

// reportProgress calls progress every second until stopped, then once more.
func reportProgress(progress func(Progress), b *batches, from int64, start time.Time) (stop func()) {
	if progress == nil {
		return func() {}
	}
	snapshot := func() Progress {
		return Progress{Loaded: b.loadedCount.Load(), Total: b.to - from, Done: b.watermark(), Elapsed: time.Since(start)}
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
				progress(snapshot())
				return
			case <-t.C:
				progress(snapshot())
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

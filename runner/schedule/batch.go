package schedule

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spanbench/spanbench/runner/clock"
)

// runBatch runs cfg.Concurrency workers that call h back to back until
// they have made cfg.Iterations calls in all, the profile's duration has
// elapsed, or ctx is done. The batch's wall time ends when its last call
// returns: Stats.Finished, zero if the profile's end came first.
func runBatch(ctx context.Context, cfg Config, clk clock.Clock, w waiter, h Handler, start time.Time) (Stats, error) {
	stats := Stats{Start: start}
	if _, err := w.waitUntil(start); err != nil {
		return stats, err
	}
	var stop atomic.Bool
	var claimed atomic.Uint64
	calls := make([]uint64, cfg.Concurrency)
	inFlight := inFlightCounter(cfg)
	var wg sync.WaitGroup
	for i := range cfg.Concurrency {
		wg.Go(func() {
			calls[i] = batchWorker(ctx, clk, h, &stop, &claimed, cfg.Iterations, inFlight, i, cfg.Concurrency)
		})
	}
	// The end of the profile is waited for on its own context, cancelled
	// when the workers are done, so a finished batch returns at once.
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var finished atomic.Pointer[time.Time]
	go func() {
		wg.Wait()
		at := clk.Now()
		finished.Store(&at)
		cancel()
	}()
	end := newWaiter(waitCtx, clk)
	defer end.close()
	_, err := end.waitUntil(start.Add(cfg.Profile.Duration()))
	stop.Store(true)
	wg.Wait()
	for _, n := range calls {
		stats.Sent += n
	}
	stats.Scheduled = stats.Sent
	if ctx.Err() != nil {
		return stats, ctx.Err()
	}
	if stats.Sent == cfg.Iterations {
		if at := finished.Load(); at != nil {
			stats.Finished = *at
		} else {
			stats.Finished = clk.Now()
		}
	}
	_ = err // the profile's end, or the batch's: neither is an error
	return stats, nil
}

// batchWorker claims iterations one at a time and calls h for each until
// none are left, stop is set or ctx is done; it returns its calls.
func batchWorker(ctx context.Context, clk clock.Clock, h Handler, stop *atomic.Bool, claimed *atomic.Uint64, limit uint64, inFlight *atomic.Int64, worker, workers int) uint64 {
	var n uint64
	for !stop.Load() && ctx.Err() == nil && claimed.Add(1) <= limit {
		inFlight.Add(1)
		h.Handle(ctx, worker, Request{Seq: n*uint64(workers) + uint64(worker), Intended: clk.Now()})
		inFlight.Add(-1)
		n++
	}
	return n
}

package schedule

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spanbench/spanbench/runner/clock"
)

// runClosed runs cfg.Concurrency workers that call h back to back from start
// until the profile's duration has elapsed or ctx is done.
func runClosed(ctx context.Context, cfg Config, clk clock.Clock, w waiter, h Handler, start time.Time) (Stats, error) {
	stats := Stats{Start: start}
	if _, err := w.waitUntil(start); err != nil {
		return stats, err
	}
	var stop atomic.Bool
	calls := make([]uint64, cfg.Concurrency)
	inFlight := inFlightCounter(cfg)
	var wg sync.WaitGroup
	for i := range cfg.Concurrency {
		wg.Go(func() {
			// Each worker writes its own slot once, at exit, so there is no
			// shared call counter (or false sharing) on the hot path.
			calls[i] = closedWorker(ctx, clk, h, &stop, inFlight, i, cfg.Concurrency)
		})
	}
	_, err := w.waitUntil(start.Add(cfg.Profile.Duration()))
	stop.Store(true)
	wg.Wait()
	for _, n := range calls {
		stats.Sent += n
	}
	stats.Scheduled = stats.Sent
	return stats, err
}

// closedWorker calls h until stop is set or ctx is done and returns the
// number of calls.
func closedWorker(ctx context.Context, clk clock.Clock, h Handler, stop *atomic.Bool, inFlight *atomic.Int64, worker, workers int) uint64 {
	var n uint64
	for !stop.Load() && ctx.Err() == nil {
		inFlight.Add(1)
		h.Handle(ctx, worker, Request{Seq: n*uint64(workers) + uint64(worker), Intended: clk.Now()})
		inFlight.Add(-1)
		n++
	}
	return n
}

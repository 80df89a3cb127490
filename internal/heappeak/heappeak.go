// Package heappeak measures the peak of a process's live heap while a
// test or benchmark does something, for the memory budgets the tests
// assert (aggregation within the manager's limit) and the benchmarks
// report. A test helper: never linked into the binary.
package heappeak

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// Peak samples the heap's live and unswept objects every 2 ms until
// stopped, and keeps the largest sample.
type Peak struct {
	stop chan struct{}
	done sync.WaitGroup
	peak uint64
	// base is the heap just after the collection Start runs: what the
	// process held before the work began.
	base uint64
}

// Start collects garbage (so that the peak is the work's, not earlier
// garbage's) and starts sampling.
func Start() *Peak {
	runtime.GC()
	p := &Peak{stop: make(chan struct{})}
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	p.base = s[0].Value.Uint64()
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			p.peak = max(p.peak, s[0].Value.Uint64())
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// MiB stops sampling and returns the peak in MiB.
func (p *Peak) MiB() float64 {
	close(p.stop)
	p.done.Wait()
	return float64(p.peak) / (1 << 20)
}

// BaseMiB is the heap, in MiB, just after Start's collection: what the
// process already held (earlier tests' leftovers, caches) before the
// work began.
func (p *Peak) BaseMiB() float64 {
	return float64(p.base) / (1 << 20)
}

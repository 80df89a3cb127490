package schedule

import (
	"sync"
)

// pool is the open-loop dispatcher's workers: goroutines started as the
// load needs them, up to MaxInFlight, each with its own one-slot channel.
// The dispatcher hands a request to the worker that went idle last (a
// stack): at a steady rate the same few goroutines do all the work, with
// their stacks and the caches they touch warm, and a run at a few thousand
// requests a second with a cap of 512 keeps a handful of goroutines rather
// than 512 (whose stacks, grown by the client's call depth, are memory the
// process holds and the collector scans). A shared FIFO channel, as before,
// rotated every request through all of them.
type pool struct {
	mu   sync.Mutex
	idle []*poolWorker // idle workers, the most recently idled last
	all  []*poolWorker // every worker started, for closing
	max  int
	wg   sync.WaitGroup
	run  func(worker int, r Request) // does one request (Handle and the count)
}

// poolWorker is one worker goroutine's mailbox.
type poolWorker struct {
	index int
	in    chan Request // one slot: a worker holds at most one request
}

func newPool(maxWorkers int, run func(worker int, r Request)) *pool {
	return &pool{max: maxWorkers, run: run, idle: make([]*poolWorker, 0, min(maxWorkers, 64))}
}

// hand gives r to an idle worker, starting one if none is idle. The caller
// holds one of the max in-flight slots and a worker returns itself to the
// idle stack before it gives its slot back, so a worker is always idle or
// can be started; hand reports false only if that invariant is broken.
func (p *pool) hand(r Request) bool {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.in <- r // never blocks: an idle worker's slot is empty
		return true
	}
	if len(p.all) == p.max {
		p.mu.Unlock()
		return false
	}
	w := &poolWorker{index: len(p.all), in: make(chan Request, 1)}
	p.all = append(p.all, w)
	p.mu.Unlock()
	w.in <- r
	p.wg.Go(func() { p.work(w) })
	return true
}

// work runs a worker's requests until its channel is closed; run returns
// the worker to the idle stack (idleAgain) before it gives its in-flight
// slot back.
func (p *pool) work(w *poolWorker) {
	for r := range w.in {
		p.run(w.index, r)
	}
}

// idleAgain returns worker index i to the idle stack.
func (p *pool) idleAgain(i int) {
	p.mu.Lock()
	p.idle = append(p.idle, p.all[i])
	p.mu.Unlock()
}

// close ends every worker once it has finished its request and waits.
func (p *pool) close() {
	p.mu.Lock()
	all := p.all
	p.mu.Unlock()
	for _, w := range all {
		close(w.in)
	}
	p.wg.Wait()
}

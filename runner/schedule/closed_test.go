package schedule

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spanbench/spanbench/runner/clock/clocktest"
)

// closedProbe is a closed-loop Handler. Each worker's first call waits until
// `want` calls are inside Handle at once (so exactly that many workers must
// exist); later calls return at once. It records overlap and Seq values.
type closedProbe struct {
	clk      *clocktest.Fake
	want     int
	gate     chan struct{} // closed when want calls are inside Handle
	gateOnce sync.Once

	active    atomic.Int32
	maxActive atomic.Int32
	busy      []atomic.Bool // per worker: a call is running

	mu      sync.Mutex
	seqs    map[uint64]int // Seq -> worker
	errs    []string
	start   time.Time
	badTime int // calls whose Intended is not a clock reading since start
}

func newClosedProbe(clk *clocktest.Fake, start time.Time, want int) *closedProbe {
	return &closedProbe{clk: clk, start: start, want: want, gate: make(chan struct{}), busy: make([]atomic.Bool, want), seqs: map[uint64]int{}}
}

func (p *closedProbe) Handle(ctx context.Context, worker int, r Request) {
	if worker < 0 || worker >= p.want {
		p.fail("Handle called with worker %d, want 0..%d", worker, p.want-1)
		return
	}
	if p.busy[worker].Swap(true) {
		p.fail("two overlapping calls on worker %d", worker)
	}
	defer p.busy[worker].Store(false)
	n := p.active.Add(1)
	defer p.active.Add(-1)
	for m := p.maxActive.Load(); n > m && !p.maxActive.CompareAndSwap(m, n); m = p.maxActive.Load() {
	}
	p.record(worker, r)
	if int(n) == p.want {
		p.gateOnce.Do(func() { close(p.gate) })
	}
	select {
	case <-p.gate:
	case <-ctx.Done():
	}
}

func (p *closedProbe) record(worker int, r Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w, dup := p.seqs[r.Seq]; dup {
		p.errs = append(p.errs, fmt.Sprintf("Seq %d used by workers %d and %d", r.Seq, w, worker))
	}
	p.seqs[r.Seq] = worker
	if r.Seq%uint64(p.want) != uint64(worker) {
		p.errs = append(p.errs, fmt.Sprintf("worker %d got Seq %d, not of the form k*Concurrency+worker", worker, r.Seq))
	}
	// Intended is a clock reading taken just before the call, so it lies
	// between the start and the clock's current time.
	if r.Intended.Before(p.start) || r.Intended.After(p.clk.Now()) {
		p.badTime++
	}
}

func (p *closedProbe) fail(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.errs = append(p.errs, fmt.Sprintf(format, args...))
}

func (p *closedProbe) Missed(r Request) { p.fail("Missed(%+v) called in closed-loop mode", r) }

func TestClosedLoopRunsExactlyConcurrencyWorkers(t *testing.T) {
	const workers = 5
	fc := clocktest.NewFake(t0)
	p := newClosedProbe(fc, t0, workers)
	cfg := Config{Profile: Profile{{Duration: time.Minute}}, Concurrency: workers}
	done := startRun(context.Background(), cfg, fc, p)

	select {
	case <-p.gate:
	case <-time.After(bound):
		t.Fatalf("only %d of %d closed-loop workers were inside Handle after %v", p.active.Load(), workers, bound)
	}
	stepLast(t, fc, time.Minute)
	res := await(t, done)

	if res.err != nil {
		t.Fatalf("Run returned error %v", res.err)
	}
	if got := p.maxActive.Load(); got != workers {
		t.Errorf("at most %d calls were in Handle at once, want exactly Concurrency = %d", got, workers)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.errs {
		t.Error(e)
	}
	if p.badTime > 0 {
		t.Errorf("%d calls had an Intended time that is not a clock reading taken during the run", p.badTime)
	}
	if res.stats.Sent != uint64(len(p.seqs)) || res.stats.Scheduled != res.stats.Sent || res.stats.Missed != 0 {
		t.Errorf("Stats = %+v, want Sent = Scheduled = %d calls and no misses", res.stats, len(p.seqs))
	}
	if res.stats.Sent < workers {
		t.Errorf("only %d calls made, want at least one per worker", res.stats.Sent)
	}
}

func TestClosedLoopCancel(t *testing.T) {
	fc := clocktest.NewFake(t0)
	h := &recorder{clk: fc, block: make(chan struct{})} // returns only when ctx ends
	ctx, cancel := context.WithCancel(context.Background())
	done := startRun(ctx, Config{Profile: Profile{{Duration: time.Hour}}, Concurrency: 3}, fc, h)
	waitFor(t, "3 closed-loop workers in Handle", func() bool { return h.count() == 3 })
	cancel()
	res := await(t, done)
	if !errors.Is(res.err, context.Canceled) {
		t.Errorf("Run after cancel returned %v, want context.Canceled", res.err)
	}
	if res.stats.Sent != 3 || h.count() != 3 {
		t.Errorf("Stats = %+v after %d calls; want exactly the 3 calls that were running", res.stats, h.count())
	}
	if fc.HasWaiters() {
		t.Errorf("Run left a timer registered on the clock after returning")
	}
}

func TestClosedLoopWaitsForStart(t *testing.T) {
	fc := clocktest.NewFake(t0)
	start := t0.Add(time.Second)
	p := newClosedProbe(fc, start, 2)
	done := startRun(context.Background(), Config{Profile: Profile{{Duration: time.Second}}, Concurrency: 2, Start: start}, fc, p)
	waitFor(t, "Run to wait for Start", fc.HasWaiters)
	step(t, fc, 999*time.Millisecond)
	if n := p.active.Load(); n != 0 {
		t.Fatalf("%d closed-loop workers started 1ms before Start", n)
	}
	stepLast(t, fc, time.Millisecond)
	select {
	case <-p.gate:
	case <-time.After(bound):
		t.Fatalf("closed-loop workers did not start within %v of reaching Start", bound)
	}
	stepLast(t, fc, time.Second)
	if res := await(t, done); res.err != nil || !res.stats.Start.Equal(start) {
		t.Errorf("Run = %+v, %v; want Start %v and no error", res.stats, res.err, start)
	}
}

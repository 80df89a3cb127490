package schedule

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/spanbench/spanbench/runner/clock/clocktest"
	// Named so: this package's tests have their own await (a Run's result).
	poll "github.com/spanbench/spanbench/internal/await"
)

// bound caps every wait in the tests. It is a deadlock guard, not a timing
// assertion: correct code finishes each wait in microseconds.
const bound = 10 * time.Second

// t0 is the fake clock's initial time.
var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// waitFor polls cond until it holds, failing with what if it does not
// within bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Eventually(t, poll.Poll{Within: bound, Every: 100 * time.Microsecond}, what, poll.Cond(cond))
}

// result is what Run returned.
type result struct {
	stats Stats
	err   error
}

// startRun runs Run in a goroutine and returns the channel its result arrives on.
func startRun(ctx context.Context, cfg Config, fc *clocktest.Fake, h Handler) <-chan result {
	done := make(chan result, 1)
	go func() {
		s, err := Run(ctx, cfg, fc, h)
		done <- result{s, err}
	}()
	return done
}

// await returns Run's result, failing if it does not arrive within bound.
func await(t *testing.T, done <-chan result) result {
	t.Helper()
	select {
	case r := <-done:
		return r
	case <-time.After(bound):
		t.Fatalf("Run did not return within %v", bound)
		return result{}
	}
}

// step advances the fake clock by d once Run's goroutine is blocked on its
// timer, then waits until it is blocked again, so that everything due by the
// new time has been dispatched. Waiting first matters: Run reads Now and then
// arms its timer for the remaining time, so a step in between would push the
// timer's target out by d.
func step(t *testing.T, fc *clocktest.Fake, d time.Duration) {
	t.Helper()
	stepLast(t, fc, d)
	waitFor(t, "Run to wait on the clock again after a step", fc.HasWaiters)
}

// stepLast is step for the final step, after which Run stops waiting.
func stepLast(t *testing.T, fc *clocktest.Fake, d time.Duration) {
	t.Helper()
	waitFor(t, "Run to wait on the clock before a step", fc.HasWaiters)
	fc.Step(d)
}

// handled is one call to Handle as a test handler saw it.
type handled struct {
	worker int
	req    Request
	at     time.Time // fake time when Handle ran
}

// recorder is a Handler that records calls. If block is non-nil, Handle
// waits for it to be closed (or for ctx to end).
type recorder struct {
	clk   *clocktest.Fake
	block chan struct{}

	mu       sync.Mutex
	calls    []handled
	missed   []Request
	returned int // calls that have returned
	ctxEnded int // calls that returned because ctx ended
}

func (r *recorder) Handle(ctx context.Context, worker int, req Request) {
	r.mu.Lock()
	r.calls = append(r.calls, handled{worker, req, r.clk.Now()})
	r.mu.Unlock()
	ended := false
	if r.block != nil {
		select {
		case <-r.block:
		case <-ctx.Done():
			ended = true
		}
	}
	r.mu.Lock()
	r.returned++
	if ended {
		r.ctxEnded++
	}
	r.mu.Unlock()
}

func (r *recorder) Missed(req Request) {
	r.mu.Lock()
	r.missed = append(r.missed, req)
	r.mu.Unlock()
}

// snapshot returns copies of the calls and misses so far.
func (r *recorder) snapshot() ([]handled, []Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]handled(nil), r.calls...), append([]Request(nil), r.missed...)
}

// count returns the number of Handle calls so far.
func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.calls)
}

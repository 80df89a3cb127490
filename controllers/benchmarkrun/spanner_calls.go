package benchmarkrun

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlevent "sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// No reconcile worker waits on Spanner. A step that calls Spanner (an
// instance's or database's preparation, the dataset's plan and markers,
// split points, the TPC-C consistency check, the SPANNER_SYS read after a
// run and an Ephemeral instance's deletion) starts its call here and
// returns at once; the call runs in a goroutine the manager owns, at most
// MaxConcurrentSpannerCalls at a time, and when it ends its run is
// queued again, and that reconcile takes the outcome. Nothing here is
// durable: a manager that restarts has lost its calls, and the step, whose
// progress the run's status records as before, starts its call again.
// docs/performance.md ("No reconcile waits on Spanner") has the
// measurements.

// MaxConcurrentSpannerCalls bounds the Spanner calls in flight for all
// runs together; more wait their turn without holding a reconcile worker.
const MaxConcurrentSpannerCalls = 16

// spannerCallLeftFor is how long an outcome nobody took is kept: a run
// deleted, or one whose step moved on, never takes it.
const spannerCallLeftFor = 10 * time.Minute

// spannerCallReplay is how long after an outcome was first taken a step
// with the same input takes it again instead of calling anew: a reconcile
// that took it and then lost its status write (a conflict with a newer
// run, read from a cache that had not caught up) must find it again, or
// it would call again from a status that does not record the outcome
// (and, for an instance being created, lose its operation). Polls of a
// running operation come back later than this (instancePollEvery,
// databasePollEvery), so they always call anew.
const spannerCallReplay = 2 * time.Second

// spannerCallPoll is when a step whose call is still running looks again
// if no completion queued it first.
const spannerCallPoll = 30 * time.Second

// SpannerCalls runs the Spanner calls of run reconciles in the
// background. It is a manager Runnable: when the manager stops, Start
// cancels every call and returns once each has returned. Calls may start
// before Start (the controller's workers and it start together).
// SetupWithManager makes one.
type SpannerCalls struct {
	clock clock.PassiveClock
	limit chan struct{}
	// done carries the run of every call that ended to the controller's
	// channel source, which queues the run.
	done chan ctrlevent.GenericEvent

	// ctx is every call's parent, cancelled when the manager stops.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	calls   map[spannerCallKey]*pendingCall
	running sync.WaitGroup
}

// spannerCallKey names one step's call for one run.
type spannerCallKey struct {
	run  types.UID
	step string
}

// pendingCall is a call in flight or ended and not yet taken.
type pendingCall struct {
	// input says what the call was started for (the status it read);
	// a step that finds a different one starts its call afresh.
	input  string
	cancel context.CancelFunc
	ended  time.Time // zero while running
	taken  time.Time // zero until a step took the outcome
	value  any
	err    error
}

// NewSpannerCalls makes the runner of Spanner calls; clk stamps when calls
// end, for dropping outcomes nobody took.
func NewSpannerCalls(clk clock.PassiveClock) *SpannerCalls {
	ctx, cancel := context.WithCancel(context.Background())
	return &SpannerCalls{clock: clk, limit: make(chan struct{}, MaxConcurrentSpannerCalls),
		done: make(chan ctrlevent.GenericEvent, 1024), ctx: ctx, cancel: cancel, calls: map[spannerCallKey]*pendingCall{}}
}

// Start implements manager.Runnable: calls run until ctx ends.
func (s *SpannerCalls) Start(ctx context.Context) error {
	<-ctx.Done()
	s.cancel()
	s.running.Wait()
	return nil
}

// Holds reports whether run's step has a call in flight or an outcome
// kept: false after a restart, which lost both.
func (s *SpannerCalls) Holds(run *v1alpha1.BenchmarkRun, step string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.calls[spannerCallKey{run.UID, step}]
	return ok
}

// take returns the outcome of run's step's call for input once it has
// ended (again within spannerCallReplay of the first take); until then it
// starts the call, unless it is already running, and ok is false. A call
// started under a context of holdCallStarts runs once that releases it.
func (s *SpannerCalls) take(ctx context.Context, run *v1alpha1.BenchmarkRun, step, input string, timeout time.Duration,
	call func(ctx context.Context) (any, error)) (value any, err error, ok bool) {
	key := spannerCallKey{run.UID, step}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropUntaken()
	now := s.clock.Now()
	c, found := s.calls[key]
	switch {
	case found && c.input == input && c.ended.IsZero():
		return nil, nil, false
	case found && c.input == input && c.taken.IsZero():
		c.taken = now
		return c.value, c.err, true
	case found && c.input == input && now.Sub(c.taken) <= spannerCallReplay:
		return c.value, c.err, true
	case found && c.cancel != nil:
		c.cancel() // started for a status that has moved on
	}
	held, _ := ctx.Value(heldStartsKey{}).(*heldStarts)
	ctx, cancel := context.WithTimeout(s.ctx, timeout)
	c = &pendingCall{input: input, cancel: cancel}
	s.calls[key] = c
	// The goroutine reads the run's copy only: the reconcile goes on
	// with its own.
	obj := &v1alpha1.BenchmarkRun{}
	obj.Namespace, obj.Name, obj.UID = run.Namespace, run.Name, run.UID
	s.running.Add(1)
	start := func() { s.runCall(ctx, cancel, c, obj, call) }
	if held != nil {
		held.starts = append(held.starts, start)
	} else {
		go start()
	}
	return nil, nil, false
}

// runCall runs call for c in its turn, records its outcome, and queues
// its run (obj).
func (s *SpannerCalls) runCall(ctx context.Context, cancel context.CancelFunc, c *pendingCall, obj *v1alpha1.BenchmarkRun,
	call func(ctx context.Context) (any, error)) {
	defer s.running.Done()
	defer cancel()
	var value any
	var err error
	select {
	case s.limit <- struct{}{}:
		value, err = call(ctx)
		<-s.limit
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.mu.Lock()
	c.value, c.err, c.ended, c.cancel = value, err, s.clock.Now(), nil
	s.mu.Unlock()
	select {
	case s.done <- ctrlevent.GenericEvent{Object: obj}:
	default: // the queue is full: the step's own poll comes back for it
	}
}

// heldStartsKey is the context key of a reconcile's heldStarts.
type heldStartsKey struct{}

// heldStarts are the calls a reconcile started, held until it has
// written its status (holdCallStarts).
type heldStarts struct{ starts []func() }

// holdCallStarts makes the calls that spannerCall starts under the
// returned context wait for release, which the reconcile defers to after
// its status write. A call on the emulator ends in milliseconds, sooner
// than the status write of the reconcile that started it, and its end
// would queue the run while that reconcile is still going: the run would
// wait in the work queue for the rest of it (docs/performance.md, "No
// reconcile waits on Spanner"). Started after the write, the call's end
// finds the run's reconcile over, and the call runs for a status that is
// stored. release must be called, even when the write failed: a call
// taken and never started would hold its step until the manager stops.
func holdCallStarts(ctx context.Context) (_ context.Context, release func()) {
	h := &heldStarts{}
	return context.WithValue(ctx, heldStartsKey{}, h), func() {
		for _, start := range h.starts {
			go start()
		}
		h.starts = nil
	}
}

// dropUntaken forgets outcomes that ended spannerCallLeftFor ago: taken,
// or never taken by a run deleted or moved on.
func (s *SpannerCalls) dropUntaken() {
	now := s.clock.Now()
	for k, c := range s.calls {
		if !c.ended.IsZero() && now.Sub(c.ended) > spannerCallLeftFor {
			delete(s.calls, k)
		}
	}
}

// spannerCall runs call for run's step without holding the reconcile:
// ok is false while it runs (the step returns and is queued again when it
// ends), and the call's value and error once it has. input is what the
// call depends on in the run's status (an operation it polls), so that a
// step that moved on never takes an outcome meant for another. timeout
// bounds the call. A reconciler without SpannerCalls (unit tests that
// drive Reconcile by hand) makes the call in the reconcile, under ctx.
func spannerCall[T any](ctx context.Context, r *BenchmarkRunReconciler, run *v1alpha1.BenchmarkRun, step, input string, timeout time.Duration,
	call func(ctx context.Context) (T, error)) (value T, err error, ok bool) {
	if r.SpannerCalls == nil {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		value, err = call(ctx)
		return value, err, true
	}
	v, err, ok := r.SpannerCalls.take(ctx, run, step, input, timeout, func(ctx context.Context) (any, error) { return call(ctx) })
	if ok && v != nil {
		value = v.(T)
	}
	return value, err, ok
}

// stillCalling is the result of a step whose call has not ended:
// nothing is held; the call's end queues the run, and this is a fallback.
func stillCalling(deadline stageDeadline) ctrl.Result {
	return ctrl.Result{RequeueAfter: min(deadline.requeue, spannerCallPoll)}
}

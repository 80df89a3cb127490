// Package await is the one way spanbench's test suites wait for something
// to happen (Eventually) or make sure it does not (Consistently): bounded in
// time, polling at a stated interval, and failing with what was awaited
// and the last state observed. A sleep followed by a check is flaky when
// the sleep is too short and slow when it is long; this polls instead.
package await

import (
	"context"
	"testing"
	"time"
)

// Poll bounds a wait.
type Poll struct {
	// Within is how long Eventually waits, or how long Consistently
	// watches.
	Within time.Duration
	// Every is the interval between two looks at the condition.
	Every time.Duration
	// LogProgress logs the condition's state each time it changes, for
	// long waits whose progress a reader wants to follow (e2e).
	LogProgress bool
}

// Condition looks once: ok says whether it holds; state says what was
// observed, for the failure message (may be "").
type Condition func() (ok bool, state string)

// Cond turns a plain predicate into a Condition that observes nothing
// more.
func Cond(f func() bool) Condition {
	return func() (bool, string) { return f(), "" }
}

// Until looks at cond every p.Every until it holds, p.Within passes or ctx
// ends. It reports whether cond held and the last state observed.
func Until(ctx context.Context, p Poll, cond Condition) (bool, string) {
	ok, state, _ := until(ctx, p, cond, nil)
	return ok, state
}

// Eventually fails t (fatally) unless cond holds within p.Within, saying
// what was awaited and the last state observed.
func Eventually(t testing.TB, p Poll, what string, cond Condition) {
	t.Helper()
	var logf func(string, ...any)
	if p.LogProgress {
		logf = t.Logf
	}
	ok, state, err := until(t.Context(), p, cond, func(state string) {
		if logf != nil {
			logf("waiting for %s: %s", what, state)
		}
	})
	if ok {
		return
	}
	if err != nil {
		t.Fatalf("gave up waiting for %s (%v); last observed: %s", what, err, orNothing(state))
	}
	t.Fatalf("timed out after %s waiting for %s; last observed: %s", p.Within, what, orNothing(state))
}

// Consistently fails t (fatally) if cond stops holding at any look during
// p.Within, saying what should have held, when it stopped and what was
// observed then. It is the bounded negative check: "this did not happen,
// for as long as it would have taken to happen".
func Consistently(t testing.TB, p Poll, what string, cond Condition) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(p.Within)
	for {
		ok, state := cond()
		if !ok {
			t.Fatalf("%s stopped holding after %s (watched for %s); observed: %s",
				what, time.Since(start).Round(time.Millisecond), p.Within, orNothing(state))
		}
		if !time.Now().Before(deadline) {
			return
		}
		if !sleep(t.Context(), min(p.Every, time.Until(deadline))) {
			t.Fatalf("stopped watching that %s: %v", what, t.Context().Err())
		}
	}
}

// until is the polling loop; changed is told each new, non-empty state.
func until(ctx context.Context, p Poll, cond Condition, changed func(string)) (bool, string, error) {
	deadline := time.Now().Add(p.Within)
	last := ""
	for {
		ok, state := cond()
		if ok {
			return true, state, nil
		}
		if state != last && state != "" && changed != nil {
			changed(state)
		}
		last = state
		if !time.Now().Before(deadline) {
			return false, last, nil
		}
		if !sleep(ctx, min(p.Every, time.Until(deadline))) {
			return false, last, ctx.Err()
		}
	}
}

// sleep waits d, or less if ctx ends (then it returns false).
func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(max(d, 0))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

func orNothing(state string) string {
	if state == "" {
		return "(the condition reports no state)"
	}
	return state
}

package await

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// recordingT is a testing.TB whose fatal failures are recorded instead of
// ending the test, so that the helpers' own failures can be checked.
type recordingT struct {
	testing.TB
	failed string
}

func (r *recordingT) Helper() {}

func (r *recordingT) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(r) // stops the helper as runtime.Goexit would
}

// run calls f with a recordingT and returns its failure message, "" if
// none.
func run(t *testing.T, f func(tb testing.TB)) (failed string) {
	r := &recordingT{TB: t}
	defer func() {
		if p := recover(); p != nil && p != any(r) {
			panic(p)
		}
		failed = r.failed
	}()
	f(r)
	return ""
}

var quick = Poll{Within: 200 * time.Millisecond, Every: 5 * time.Millisecond}

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	var looks atomic.Int32
	msg := run(t, func(tb testing.TB) {
		Eventually(tb, quick, "the third look", func() (bool, string) { return looks.Add(1) >= 3, "" })
	})
	if msg != "" || looks.Load() != 3 {
		t.Errorf("Eventually failed (%q) or looked %d times, want 3 looks", msg, looks.Load())
	}
}

func TestEventuallyFailsSayingWhatAndTheLastState(t *testing.T) {
	var looks atomic.Int32
	start := time.Now()
	msg := run(t, func(tb testing.TB) {
		Eventually(tb, quick, "the run to end", func() (bool, string) { return false, fmt.Sprintf("phase Running (look %d)", looks.Add(1)) })
	})
	if took := time.Since(start); took < quick.Within || took > 10*quick.Within {
		t.Errorf("Eventually gave up after %s, want about %s", took, quick.Within)
	}
	want := fmt.Sprintf("look %d", looks.Load())
	if !strings.Contains(msg, "the run to end") || !strings.Contains(msg, want) {
		t.Errorf("failure message %q does not say what was awaited and the last state (%s)", msg, want)
	}
}

func TestConsistentlyWatchesTheWholeWindow(t *testing.T) {
	start := time.Now()
	msg := run(t, func(tb testing.TB) { Consistently(tb, quick, "nothing happens", Cond(func() bool { return true })) })
	if msg != "" || time.Since(start) < quick.Within {
		t.Errorf("Consistently failed (%q) or returned after %s, before its window of %s", msg, time.Since(start), quick.Within)
	}
}

func TestConsistentlyFailsWhenTheConditionStopsHolding(t *testing.T) {
	var looks atomic.Int32
	msg := run(t, func(tb testing.TB) {
		Consistently(tb, quick, "no event", func() (bool, string) {
			n := looks.Add(1)
			return n < 4, fmt.Sprintf("%d events", n-1)
		})
	})
	if !strings.Contains(msg, "no event") || !strings.Contains(msg, "3 events") {
		t.Errorf("failure message %q does not say what stopped holding and what was seen", msg)
	}
}

func TestUntilEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	ok, _ := Until(ctx, Poll{Within: time.Minute, Every: time.Millisecond}, Cond(func() bool { return false }))
	if ok || time.Since(start) > 10*time.Second {
		t.Errorf("Until returned %v after %s; want false soon after its context ended", ok, time.Since(start))
	}
}

package monitoring

import (
	"errors"
	"time"
)

// SamplePeriod is Cloud Monitoring's sampling period of Spanner's metrics:
// one point a minute. Every request aligns to it.
const SamplePeriod = time.Minute

// Window is a run's window [Start, End), warm-up included: the server's
// warm-up is read from its first minutes. The figures are of the minutes
// from WarmUpEnd on (zero: Start), as the client's are.
type Window struct {
	Start, WarmUpEnd, End time.Time
}

// Validate refuses an empty or reversed window or a warm-up end outside it.
func (w Window) Validate() error {
	if !w.End.After(w.Start) {
		return errors.New("the window's end must come after its start")
	}
	if !w.WarmUpEnd.IsZero() && (w.WarmUpEnd.Before(w.Start) || w.WarmUpEnd.After(w.End)) {
		return errors.New("the window's warm-up end must lie inside it")
	}
	return nil
}

// measuredFrom is the start of the first whole minute after the warm-up:
// the figures are of the minutes ending after it.
func (w Window) measuredFrom() time.Time {
	from := w.WarmUpEnd
	if from.IsZero() {
		from = w.Start
	}
	t := from.UTC().Truncate(SamplePeriod)
	if t.Before(from) {
		t = t.Add(SamplePeriod)
	}
	return t
}

// Aligned is the interval asked of Cloud Monitoring and whether it lies
// inside w. It is the whole minutes of w: a minute's point covers the
// minute before its timestamp, so a minute that began before the window
// holds traffic from before it (a warm-up, another run). A window without
// a whole minute is widened to the minutes that enclose it instead
// (inside false): a figure with outside traffic in it, said so in the
// notes, rather than none.
func (w Window) Aligned() (a Window, inside bool) {
	start := w.Start.UTC().Truncate(SamplePeriod)
	if start.Before(w.Start) {
		start = start.Add(SamplePeriod)
	}
	end := w.End.UTC().Truncate(SamplePeriod)
	if end.After(start) {
		return Window{Start: start, End: end}, true
	}
	start = w.Start.UTC().Truncate(SamplePeriod)
	end = w.End.UTC().Truncate(SamplePeriod)
	if end.Before(w.End) {
		end = end.Add(SamplePeriod)
	}
	return Window{Start: start, End: end}, false
}

package serverstats

import (
	"errors"
	"time"
)

// Window is a run's measured window [Start, End).
type Window struct {
	Start, End time.Time
}

// Validate refuses an empty or reversed window.
func (w Window) Validate() error {
	if !w.End.After(w.Start) {
		return errors.New("the window's end must come after its start")
	}
	return nil
}

// Aligned is the part of w made of whole statistics minutes.
func (w Window) Aligned() Window { return w.AlignedTo(time.Minute) }

// AlignedTo is the part of w made of whole intervals of length: an
// interval that began before the window holds traffic from before it (a
// warm-up, another run), one closing after it holds traffic the client
// did not count in the window. It may be empty. Intervals are based on
// clock times (10-minute ones end every 10 minutes from the hour).
func (w Window) AlignedTo(length time.Duration) Window {
	start := w.Start.UTC().Truncate(length)
	if start.Before(w.Start) {
		start = start.Add(length)
	}
	end := w.End.UTC().Truncate(length)
	if end.Before(start) {
		end = start
	}
	return Window{Start: start, End: end}
}

// Minutes are the ends (INTERVAL_END) of the whole minutes of w, in order.
func (w Window) Minutes() []time.Time { return w.IntervalEnds(time.Minute) }

// IntervalEnds are the ends (INTERVAL_END) of the whole intervals of
// length in w, in order: the intervals whose statistics are read, and the
// keys of Operation.Ops.
func (w Window) IntervalEnds(length time.Duration) []time.Time {
	a := w.AlignedTo(length)
	var m []time.Time
	for t := a.Start.Add(length); !t.After(a.End); t = t.Add(length) {
		m = append(m, t)
	}
	return m
}

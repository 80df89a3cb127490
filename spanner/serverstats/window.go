package serverstats

import (
	"errors"
	"time"
)

// statsInterval is the length of the intervals of the *_TOP_MINUTE tables.
const statsInterval = time.Minute

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

// Aligned is the part of w made of whole statistics minutes: a minute that
// began before the window holds traffic from before it (a warm-up, another
// run), a minute closing after it holds traffic the client did not count
// in the window. It may be empty.
func (w Window) Aligned() Window {
	start := w.Start.UTC().Truncate(statsInterval)
	if start.Before(w.Start) {
		start = start.Add(statsInterval)
	}
	end := w.End.UTC().Truncate(statsInterval)
	if end.Before(start) {
		end = start
	}
	return Window{Start: start, End: end}
}

// Minutes are the ends (INTERVAL_END) of the whole minutes of w, in order:
// the minutes whose statistics are read, and the keys of Operation.Ops.
func (w Window) Minutes() []time.Time {
	a := w.Aligned()
	var m []time.Time
	for t := a.Start.Add(statsInterval); !t.After(a.End); t = t.Add(statsInterval) {
		m = append(m, t)
	}
	return m
}

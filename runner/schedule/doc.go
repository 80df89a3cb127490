// Package schedule is the request scheduler of the load engine.
//
// In open-loop mode the intended send time of every request comes from a
// piecewise-linear rate profile, and the workers claim the requests
// themselves: an idle worker takes the next arrival of the schedule, sleeps
// until it is due and sends it, with no dispatcher handing it over (see
// openRun). A request that is sent late keeps its original intended time,
// so latency measured from Request.Intended includes any scheduling delay
// and does not suffer from coordinated omission. When MaxInFlight requests
// are already in flight the request is not sent but reported to
// Handler.Missed.
//
// In closed-loop mode a fixed number of workers call the handler back to back
// for the duration of the profile.
//
// The package knows nothing about Spanner or histograms: the Handler does the
// work and records the results.
package schedule

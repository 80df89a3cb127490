// Package gfe measures the Google Front End's share of each operation's
// latency: Cloud Spanner's frontend answers every RPC with a
// `server-timing: gfet4t7; dur=N` header, N being the milliseconds the
// request spent from the GFE receiving it to the GFE sending the response
// headers (Spanner's own work included, the network between the client and
// the GFE excluded). A gRPC interceptor reads the header and adds N to the
// Timer the operation that issued the RPC put in the RPC's context, so RPCs
// the client makes on its own behalf (session creation, background
// refreshes) are never attributed to an operation.
//
// An operation of several RPCs (a read-write transaction's reads, DML and
// commit, an aborted attempt's RPCs too) gets the sum of their GFE
// durations: the time the operation spent inside Google's frontend and
// Spanner, comparable with its client latency, which spans the same RPCs
// one after another (docs/server-stats.md, "The latency ladder").
package gfe

import (
	"context"
	"sync/atomic"
	"time"
)

// Timer sums the GFE durations of one operation's RPCs. Its zero value is
// ready; it is safe for concurrent use (an operation's streams may deliver
// their headers on other goroutines).
type Timer struct {
	micros atomic.Int64
	rpcs   atomic.Int32
}

// Add records one RPC's GFE duration.
func (t *Timer) Add(d time.Duration) {
	t.micros.Add(d.Microseconds())
	t.rpcs.Add(1)
}

// Total is the sum of the durations added, and whether any RPC carried the
// header: an operation none of whose responses did (the emulator never
// sets it) has no GFE latency, which is not a latency of zero.
func (t *Timer) Total() (time.Duration, bool) {
	return time.Duration(t.micros.Load()) * time.Microsecond, t.rpcs.Load() > 0
}

type timerKey struct{}

// WithTimer returns ctx carrying t: the RPCs made under it add their GFE
// durations to t.
func WithTimer(ctx context.Context, t *Timer) context.Context {
	return context.WithValue(ctx, timerKey{}, t)
}

// timerFrom is the Timer ctx carries, or nil.
func timerFrom(ctx context.Context) *Timer {
	t, _ := ctx.Value(timerKey{}).(*Timer)
	return t
}

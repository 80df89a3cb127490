// Package operation is what the load engine runs: an operation is a small
// value with a Do method, and its Outcome is what the engine counts besides
// latency and error. Spanner's operations (spanner/workload) satisfy it; the
// engine knows nothing else about them.
package operation

import (
	"context"
	"math/rand/v2"
	"time"
)

// Outcome is what one operation did, beyond its latency and error.
type Outcome struct {
	// Rows is the number of rows read, inserted, updated or deleted.
	Rows int64
	// Retries is the number of transaction attempts beyond the first.
	Retries int64
	// Mutations is the commit's mutation count when commit stats were asked
	// for.
	Mutations int64
	// NotFound says the operation read keys it expected to exist and found
	// no row: not a success (the bare client's ReadRow returns NotFound), so
	// the engine counts it apart from OK and from errors.
	NotFound bool
	// GFE is the time the operation's RPCs spent in Google's frontend
	// (summed over its RPCs), when GFEMeasured: only responses of Cloud
	// Spanner carry it (docs/server-stats.md, "The latency ladder").
	GFE time.Duration
	// GFEMeasured says at least one of the operation's responses carried
	// the GFE's timing: without it GFE is unknown, not zero.
	GFEMeasured bool
	// RolledBack says the operation rolled its transaction back by design
	// (TPC-C's New-Order on an unused item): a success, counted apart in
	// rollbacks.
	RolledBack bool
}

// Operation runs one request. rng belongs to the calling worker, so Do may
// use it without locking. An error is classified by its gRPC status code.
type Operation interface {
	Do(ctx context.Context, rng *rand.Rand) (Outcome, error)
}

// Func adapts a function to an Operation: a no-op to measure the engine
// itself, or a test's stand-in.
type Func func(ctx context.Context, rng *rand.Rand) (Outcome, error)

// Do calls f.
func (f Func) Do(ctx context.Context, rng *rand.Rand) (Outcome, error) { return f(ctx, rng) }

//go:build !linux

package schedule

import (
	"context"

	"github.com/spanbench/spanbench/runner/clock"
)

// newPreciseWaiter has no OS timer to offer outside Linux, so Run uses the
// clock's own timer there.
func newPreciseWaiter(context.Context, clock.Clock) waiter { return nil }

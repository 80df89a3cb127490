//go:build !linux

package schedule

import (
	"context"

	"k8s.io/utils/clock"
)

// newPreciseWaiter has no OS timer to offer outside Linux, so Run uses the
// clock's own timer there.
func newPreciseWaiter(context.Context, clock.PassiveClock) waiter { return nil }

package schedule

import (
	"context"
	"testing"

	"github.com/spanbench/spanbench/runner/clock"
)

func TestNewWaiterUsesTimerfdForRealClockOnLinux(t *testing.T) {
	for _, clk := range []clock.Clock{clock.Real{}, &clock.Real{}} {
		w := newWaiter(context.Background(), clk)
		if _, ok := w.(*fdWaiter); !ok {
			t.Errorf("clock %T: got waiter %T, want *fdWaiter (timerfd) so that sub-ms waits are precise", clk, w)
		}
		w.close()
	}
}

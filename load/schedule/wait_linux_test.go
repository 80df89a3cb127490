package schedule

import (
	"context"
	"testing"

	"k8s.io/utils/clock"
)

func TestNewWaiterUsesTimerfdForRealClockOnLinux(t *testing.T) {
	for _, clk := range []clock.WithTicker{clock.RealClock{}, &clock.RealClock{}} {
		w := newWaiter(context.Background(), clk)
		if _, ok := w.(*fdWaiter); !ok {
			t.Errorf("clock %T: got waiter %T, want *fdWaiter (timerfd) so that sub-ms waits are precise", clk, w)
		}
		w.close()
	}
}

package benchmarkrun

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/spanbench/spanbench/internal/runtest"
)

// TestRunVersionsForgetRunsNotSeenForTheirKeepingTime: what the manager
// knows of each run's versions stays bounded by the runs seen lately. A
// pass sweeps the records of runs not seen for runVersionsKeptFor (deleted
// runs, or idle ones), at most once in that time, so that a pass of one
// run does not walk every run's record each time.
func TestRunVersionsForgetRunsNotSeenForTheirKeepingTime(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	v := newRunVersions(clk)
	pass := func(uid string) {
		run := runtest.Run(uid).Obj()
		run.UID, run.ResourceVersion = types.UID(uid), "1"
		if v.stale(run) {
			t.Fatalf("run %s's first pass was taken for stale", uid)
		}
	}
	for i := range 3 {
		pass(fmt.Sprintf("old-%d", i))
	}
	clk.SetTime(clk.Now().Add(runVersionsKeptFor / 2))
	pass("recent")
	if n := len(v.runs); n != 4 {
		t.Fatalf("%d runs recorded within the keeping time; want all 4", n)
	}
	clk.SetTime(clk.Now().Add(runVersionsKeptFor/2 + time.Second))
	pass("next")
	if _, ok := v.runs["old-0"]; ok || len(v.runs) != 2 {
		t.Errorf("after %s the records are %v; want the 3 runs not seen since forgotten, recent and next kept", runVersionsKeptFor+time.Second, slices.Sorted(maps.Keys(v.runs)))
	}
	// Within the keeping time of that sweep, no pass sweeps again.
	clk.SetTime(clk.Now().Add(runVersionsKeptFor - 2*time.Second))
	pass("later")
	if len(v.runs) != 3 {
		t.Errorf("a pass %s after the sweep: records %v; want recent, next and later (no second sweep within the keeping time)", runVersionsKeptFor-2*time.Second, slices.Sorted(maps.Keys(v.runs)))
	}
}

package result_test

import (
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol"
)

// TestMoreRollbacksThanSuccessesAreRefused: rollbacks are successes that
// rolled back by design, so a shard claiming more of them than successes
// is refused, and a shard with fewer is merged.
func TestMoreRollbacksThanSuccessesAreRefused(t *testing.T) {
	w := shardtest.Workload(time.Minute)
	start := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	e, err := protocol.ResultExpectation("rb", &w, start, time.Minute, -1, 2)
	if err != nil {
		t.Fatal(err)
	}
	m := result.NewCheckedMerger(e)
	forged := shardtest.Shard("rb", w, start, 1, 2)
	op := &forged.Intervals[0].Operations[0]
	op.Rollbacks = op.OK + 1
	if err := m.Add(forged); err == nil || !strings.Contains(err.Error(), "rollbacks of") {
		t.Fatalf("a shard with %d rollbacks of %d successes: %v; want a refusal", op.Rollbacks, op.OK, err)
	}
	good := shardtest.Shard("rb", w, start, 0, 2)
	good.Intervals[0].Operations[0].Rollbacks = 1
	if err := m.Add(good); err != nil {
		t.Fatalf("a shard with one rollback: %v", err)
	}
	d, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	var rollbacks uint64
	for _, op := range d.Totals {
		rollbacks += op.Rollbacks
	}
	if rollbacks != 1 {
		t.Errorf("merged totals hold %d rollbacks, want 1", rollbacks)
	}
}

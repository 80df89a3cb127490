package controllers

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/load/result"
	"github.com/spanbench/spanbench/protocol"
)

// TestEveryHostileShardIsRefusedAndTheOthersStillMerge: each class of
// hostile shard result (internal/shardtest.Hostile) is refused with a
// reason naming its shard, never a panic, and the run's valid shard still
// makes a partial result with exactly its own counts.
func TestEveryHostileShardIsRefusedAndTheOthersStillMerge(t *testing.T) {
	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	run := newBuilderRun("hostile").replicas(2).obj()
	run.Spec.Workload = shardtest.Workload(20 * time.Second)
	run.Status.StartTime = &metav1.Time{Time: start}
	good := shardtest.Shard(run.Name, run.Spec.Workload, start, 0, 2)
	goodResult, err := protocol.EncodeResult(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range shardtest.Hostile(run.Name, run.Spec.Workload, start, 1, 2) {
		t.Run(c.Name, func(t *testing.T) {
			reports := []shardReport{
				{index: 0, ShardReport: protocol.ShardReport{State: protocol.StateSucceeded, Result: goodResult}},
				{index: 1, ShardReport: protocol.ShardReport{State: protocol.StateSucceeded, Result: c.Result}},
			}
			doc, problems, invalid, err := mergeShards(reports, run, time.Now(), nil, shardLoaders{chunked: noChunks})
			if err != nil {
				t.Fatalf("the valid shard made no result: %v", err)
			}
			if len(invalid) != 1 || !strings.HasPrefix(invalid[0], "shard 1: invalid result: ") || len(problems) != 1 {
				t.Fatalf("refused %q (problems %q); want shard 1 alone refused, with a reason", invalid, problems)
			}
			t.Logf("%s", invalid[0])
			if doc.Overall.OK != good.Overall.OK || len(doc.Shards) != 1 || doc.Shards[0].Index != 0 {
				t.Errorf("the partial result has %d OK over shards %+v; want shard 0's %d alone", doc.Overall.OK, doc.Shards, good.Overall.OK)
			}
		})
	}
}

// TestCountsThatOverflowOnlyWhenMergedRefuseTheSecondShard: two shards
// each within int64 whose sum is not (2^62 + 2^62 ... ) merge the first
// and refuse the second, instead of wrapping to a small or negative
// figure.
func TestCountsThatOverflowOnlyWhenMergedRefuseTheSecondShard(t *testing.T) {
	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	run := newBuilderRun("overflow").replicas(2).obj()
	run.Spec.Workload = shardtest.Workload(5 * time.Second)
	run.Status.StartTime = &metav1.Time{Time: start}
	var reports []shardReport
	for i := range 2 {
		d := shardtest.Shard(run.Name, run.Spec.Workload, start, i, 2)
		d.Intervals[0].Operations[0].Rows = 3 << 61
		reports = append(reports, shardReport{index: i, ShardReport: protocol.ShardReport{State: protocol.StateSucceeded, Result: shardtest.Gzip(d)}})
	}
	doc, _, invalid, err := mergeShards(reports, run, time.Now(), nil, shardLoaders{chunked: noChunks})
	if err != nil || len(invalid) != 1 || !strings.Contains(invalid[0], "shard 1: invalid result:") || !strings.Contains(invalid[0], "overflow") {
		t.Fatalf("merged with invalid %q, error %v; want shard 1 refused for an overflow", invalid, err)
	}
	if doc.Overall.Rows < 3<<61 || doc.Overall.Rows > result.MaxCount {
		t.Errorf("overall rows %d; want shard 0's, within int64", doc.Overall.Rows)
	}
}

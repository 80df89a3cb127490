package benchmarkrun

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/runner/protocol"
)

// TestEveryHostileShardIsRefusedAndTheOthersStillMerge: each class of
// hostile shard result (internal/shardtest.Hostile) is refused with a
// reason naming its shard, never a panic, and the run's valid shard still
// makes a partial result with exactly its own counts.
func TestEveryHostileShardIsRefusedAndTheOthersStillMerge(t *testing.T) {
	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	run := runtest.Bare("hostile").Replicas(2).Obj()
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
	run := runtest.Bare("overflow").Replicas(2).Obj()
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

// TestAShardCountingMoreThanItsScheduleIsRefused: two runners share
// 1,000 ops/s in 1 s intervals, so each one's schedule produces 500
// arrivals an interval. Shard 1's result is edited so that one interval
// counts 600 successes, its histograms holding them: every other check passes it,
// and the aggregation refuses it (ResultInvalid, naming shard 1 and the
// interval) because no interval can count more than its arrivals. Shard
// 0, within its schedule, still makes the result; untouched, both merge.
func TestAShardCountingMoreThanItsScheduleIsRefused(t *testing.T) {
	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	run := runtest.Bare("overcount").Replicas(2).Obj()
	run.Spec.Workload = shardtest.Workload(4 * time.Second)
	run.Status.StartTime = &metav1.Time{Time: start}
	reports := func(tamper bool) []shardReport {
		var out []shardReport
		for i := range 2 {
			d := shardtest.Shard(run.Name, run.Spec.Workload, start, i, 2)
			if tamper && i == 1 {
				in := &d.Intervals[2]
				in.Operations[0] = shardtest.Operation(in.Operations[0].Name, result.Counts{OK: 600, Rows: 600})
				if err := result.Finalize(d); err != nil {
					t.Fatal(err)
				}
			}
			out = append(out, shardReport{index: i, ShardReport: protocol.ShardReport{State: protocol.StateSucceeded, Result: shardtest.Gzip(d)}})
		}
		return out
	}
	doc, _, invalid, err := mergeShards(reports(false), run, time.Now(), pod.RunArrivals(run), shardLoaders{chunked: noChunks})
	if err != nil || len(invalid) != 0 || len(doc.Shards) != 2 {
		t.Fatalf("two shards within their schedules: invalid %q, error %v; want both merged", invalid, err)
	}
	doc, problems, invalid, err := mergeShards(reports(true), run, time.Now(), pod.RunArrivals(run), shardLoaders{chunked: noChunks})
	if err != nil {
		t.Fatalf("shard 0 made no result: %v", err)
	}
	want := "shard 1: invalid result: shard 1: interval 2 counts 60"
	if len(invalid) != 1 || !strings.HasPrefix(invalid[0], want) || !strings.Contains(invalid[0], "more than the 500 arrivals its schedule produced in it") || len(problems) != 1 {
		t.Fatalf("refused %q (problems %q); want shard 1 alone refused: %q... more than the 500 arrivals", invalid, problems, want)
	}
	t.Logf("%s", invalid[0])
	if len(doc.Shards) != 1 || doc.Shards[0].Index != 0 {
		t.Errorf("the partial result merges shards %+v; want shard 0 alone", doc.Shards)
	}
}

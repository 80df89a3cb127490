package controllers

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/load/result"
	"github.com/spanbench/spanbench/pod"
	"github.com/spanbench/spanbench/protocol"
)

// TestAShardCountingMoreThanItsScheduleIsRefused: two runners share
// 100 ops/s in 1 s intervals, so each one's schedule produces 50 arrivals
// an interval. Shard 1's result is edited so that one interval counts 60
// successes, its histograms holding them: every other check passes it,
// and the aggregation refuses it (ResultInvalid, naming shard 1 and the
// interval) because no interval can count more than its arrivals. Shard
// 0, within its schedule, still makes the result; untouched, both merge.
func TestAShardCountingMoreThanItsScheduleIsRefused(t *testing.T) {
	start := time.Now().Add(-time.Minute).Truncate(time.Second)
	run := newBuilderRun("overcount").replicas(2).obj()
	run.Spec.Workload = shardtest.Workload(4 * time.Second)
	run.Status.StartTime = &metav1.Time{Time: start}
	reports := func(tamper bool) []shardReport {
		var out []shardReport
		for i := range 2 {
			d := shardtest.Shard(run.Name, run.Spec.Workload, start, i, 2)
			if tamper && i == 1 {
				in := &d.Intervals[2]
				in.Operations[0] = shardtest.Operation(in.Operations[0].Name, result.Counts{OK: 60, Rows: 60})
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
	want := "shard 1: invalid result: shard 1: interval 2 counts 6"
	if len(invalid) != 1 || !strings.HasPrefix(invalid[0], want) || !strings.Contains(invalid[0], "more than the 50 arrivals its schedule produced in it") || len(problems) != 1 {
		t.Fatalf("refused %q (problems %q); want shard 1 alone refused: %q... more than the 50 arrivals", invalid, problems, want)
	}
	t.Logf("%s", invalid[0])
	if len(doc.Shards) != 1 || doc.Shards[0].Index != 0 {
		t.Errorf("the partial result merges shards %+v; want shard 0 alone", doc.Shards)
	}
}

package engine_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/operation"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/runner/schedule"
)

// TestRunMeasuresTheMixAndClassifiesErrorsByCode runs two load-layer
// operations, one of which fails with a gRPC status, in 3 shards, and checks
// what the merged result says against what the operations did.
func TestRunMeasuresTheMixAndClassifiesErrorsByCode(t *testing.T) {
	ok := operation.Func(func(context.Context, *rand.Rand) (operation.Outcome, error) {
		return operation.Outcome{Rows: 2}, nil
	})
	unavailable := operation.Func(func(context.Context, *rand.Rand) (operation.Outcome, error) {
		return operation.Outcome{}, status.Error(codes.Unavailable, "down")
	})
	const rate, shards = 200, 3
	start := time.Now().Add(100 * time.Millisecond)
	docs, errs := make([]*result.Document, shards), make([]error, shards)
	var wg sync.WaitGroup
	for i := range shards {
		cfg := noopConfig(t, rate, time.Second, ok, unavailable)
		cfg.Interval, cfg.Shard, cfg.Shards, cfg.Start, cfg.Seed = 250*time.Millisecond, i, shards, start, int64(i)
		wg.Go(func() { docs[i], errs[i] = engine.Run(context.Background(), cfg) })
	}
	wg.Wait()
	for i, doc := range docs {
		if errs[i] != nil {
			t.Fatalf("shard %d: %v", i, errs[i])
		}
		if got, want := doc.Shards[0].TargetRate, schedule.Share(rate, i, shards); got != want {
			t.Errorf("shard %d reports a target rate of %v, want its share %v", i, got, want)
		}
	}
	merged, err := result.Merge(docs...)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]result.Operation{}
	for _, op := range merged.Totals {
		byName[op.Name] = op
	}
	good, bad := byName["op0"], byName["op1"]
	if good.OK == 0 || good.Rows != 2*good.OK || good.ErrorCount() != 0 {
		t.Errorf("op0 always succeeds with 2 rows; the result says %+v", good.Counts)
	}
	if bad.OK != 0 || bad.Errors[codes.Unavailable.String()] == 0 || bad.ErrorCount() != bad.Errors[codes.Unavailable.String()] {
		t.Errorf("op1 always fails with Unavailable; the result says %+v", bad.Counts)
	}
	if n := good.OK + bad.ErrorCount(); n != rate {
		t.Errorf("3 shards sent %d operations in 1 s at %d/s; want exactly %d", n, rate, rate)
	}
}

// TestRunRefusesOperationsThatAreNotTheSpecs: the result's totals are keyed
// by the spec's operation names, so the engine must run exactly those.
func TestRunRefusesOperationsThatAreNotTheSpecs(t *testing.T) {
	noop := operation.Func(func(context.Context, *rand.Rand) (operation.Outcome, error) { return operation.Outcome{}, nil })
	cfg := noopConfig(t, 10, time.Second, noop)
	cfg.Spec = recordedSpec(t, "read", "update")
	if _, err := engine.Run(context.Background(), cfg); err == nil {
		t.Error("Run accepted one operation for a spec of two")
	}
}

// TestStartedIsFreeOfTheShardsPhaseOffset: with uniform arrivals shard 3
// of 4 at 4 ops/s in all sends first 750 ms after the common start, by
// design; a shard that started on time must still report Started at the
// start (give or take scheduling), or the run's start skew would report
// the interleaving of the shards' schedules as skew (100 runners at 2
// ops/s each: 0.5 s).
func TestStartedIsFreeOfTheShardsPhaseOffset(t *testing.T) {
	noop := operation.Func(func(context.Context, *rand.Rand) (operation.Outcome, error) { return operation.Outcome{}, nil })
	cfg := noopConfig(t, 4, 1500*time.Millisecond, noop)
	cfg.Shard, cfg.Shards = 3, 4
	cfg.Start = time.Now().Add(50 * time.Millisecond)
	doc, err := engine.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	sh := doc.Shards[0]
	if sh.Started.Before(doc.Start.Add(-time.Millisecond)) || sh.Started.Sub(doc.Start) > 200*time.Millisecond {
		t.Errorf("shard 3 of 4 started its schedule on time but reports Started %s after the start (its first send is due 750 ms after it by design); "+
			"want within 200 ms", sh.Started.Sub(doc.Start))
	}
	if doc.Overall.OK == 0 {
		t.Error("the shard sent nothing: the test proves nothing")
	}
}

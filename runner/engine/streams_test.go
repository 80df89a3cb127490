package engine_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/operation"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/runner/schedule"
)

func totalsByName(doc *result.Document) map[string]result.Operation {
	m := map[string]result.Operation{}
	for _, op := range doc.Totals {
		m[op.Name] = op
	}
	return m
}

// batchWindow is the window of the tests' batch streams: RunStreams ends
// when its last stream does, so a batch that finishes early costs nothing,
// and a window far longer than the batch's work (tens of milliseconds)
// keeps a loaded host, whose late wake-ups add up over the batch's
// sequential operations, from cutting it short: a batch cut by its window
// reports its partial count.
const batchWindow = time.Minute

// TestRunStreamsPacesAndMeasuresEachStreamOnItsOwn runs an open-loop
// stream of reads next to a batch stream of slow writes sharing nothing
// but the operations: each stream's document counts only its own
// operations, the open loop sends exactly its schedule whatever the batch
// does, and the batch runs exactly its iterations and records its wall time.
func TestRunStreamsPacesAndMeasuresEachStreamOnItsOwn(t *testing.T) {
	var reads, writes atomic.Int64
	read := operation.Func(func(context.Context, *rand.Rand) (operation.Outcome, error) {
		reads.Add(1)
		return operation.Outcome{Rows: 1}, nil
	})
	write := operation.Func(func(context.Context, *rand.Rand) (operation.Outcome, error) {
		writes.Add(1)
		time.Sleep(2 * time.Millisecond)
		return operation.Outcome{Rows: 1}, nil
	})
	cfg := engine.Config{Run: "streams", Spec: recordedSpec(t, "read", "write"), Interval: 250 * time.Millisecond, Shards: 1,
		Start: time.Now().Add(50 * time.Millisecond)}
	streams := []engine.Stream{
		{Name: "online", Operations: []engine.Operation{{Name: "read", Weight: 1, Op: read}},
			Load: engine.Load{Profile: schedule.Profile{{From: 400, To: 400, Duration: time.Second}}, MaxInFlight: 64}},
		{Name: "batch", Operations: []engine.Operation{{Name: "write", Weight: 1, Op: write}}, Offset: 100 * time.Millisecond,
			Load: engine.Load{Profile: schedule.Profile{{Duration: batchWindow}}, Concurrency: 2, Iterations: 60}},
	}
	res, err := engine.RunStreams(context.Background(), cfg, streams)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Name != "online" || res[1].Name != "batch" {
		t.Fatalf("results %+v, want online then batch", res)
	}
	online, batch := totalsByName(res[0].Document), totalsByName(res[1].Document)
	if got := online["read"].OK; got != 400 || online["write"].OK != 0 {
		t.Errorf("the online stream counted %d reads and %d writes; want exactly its 400 scheduled reads and no writes", got, online["write"].OK)
	}
	if got := batch["write"].OK; got != 60 || batch["read"].OK != 0 {
		t.Errorf("the batch stream counted %d writes and %d reads; want exactly its 60 iterations and no reads", got, batch["read"].OK)
	}
	if reads.Load() != 400 || writes.Load() != 60 {
		t.Errorf("the operations ran %d reads and %d writes, want 400 and 60", reads.Load(), writes.Load())
	}
	// 60 writes of 2 ms on 2 workers take at least 60 ms.
	if w := res[1].WallTime; w < 60*time.Millisecond || w > batchWindow {
		t.Errorf("the batch's wall time is %v, want between 60ms (its work) and %v (its window)", w, batchWindow)
	}
	if res[0].Document.Stream != "online" || res[1].Document.Stream != "batch" {
		t.Errorf("the documents are of streams %q and %q, want online and batch", res[0].Document.Stream, res[1].Document.Stream)
	}
	if got := res[1].Document.Shards[0].WallTimeSeconds; got != res[1].WallTime.Seconds() {
		t.Errorf("the batch's document records a wall time of %gs, the result %v", got, res[1].WallTime)
	}
	if res[0].WallTime != 0 {
		t.Errorf("an open-loop stream has a wall time %v; only batches do", res[0].WallTime)
	}
	if got, want := res[1].Document.Start, cfg.Start.Add(100*time.Millisecond); !got.Equal(want) {
		t.Errorf("the batch stream starts at %v, want its offset after the run's start, %v", got, want)
	}
}

func TestRunStreamsRefusesAnOperationNotInTheSpec(t *testing.T) {
	// Refused before it runs: without the check the stream ran for its
	// second and only the result's assembly failed.
	var calls atomic.Int64
	counted := operation.Func(func(context.Context, *rand.Rand) (operation.Outcome, error) {
		calls.Add(1)
		return operation.Outcome{}, nil
	})
	cfg := engine.Config{Run: "streams", Spec: recordedSpec(t, "read"), Interval: time.Second, Shards: 1}
	_, err := engine.RunStreams(context.Background(), cfg, []engine.Stream{{Name: "a", Operations: []engine.Operation{{Name: "write", Weight: 1, Op: counted}},
		Load: engine.Load{Profile: schedule.Profile{{From: 1, To: 1, Duration: time.Second}}, MaxInFlight: 1}}})
	if err == nil || !strings.Contains(err.Error(), `operation "write" is not the spec's`) || calls.Load() != 0 {
		t.Errorf("RunStreams of an operation the spec does not define: %v after %d calls; want a refusal naming it before any call", err, calls.Load())
	}
}

// countingObserver counts finished operations by the shard's index.
type countingObserver struct{ finished [2]atomic.Int64 }

func (o *countingObserver) Finished(op int, _ codes.Code, _ time.Duration) { o.finished[op].Add(1) }
func (o *countingObserver) Missed()                                        {}
func (o *countingObserver) Tick(engine.Progress)                           {}

// TestRunStreamsDocumentHoldsEveryStreamAndFeedsTheLiveMetrics: a shard's
// one document holds both streams, each counting only its operations, and
// the shard's live observer sees every stream's operations under the
// spec's operation indexes.
func TestRunStreamsDocumentHoldsEveryStreamAndFeedsTheLiveMetrics(t *testing.T) {
	noop := operation.Func(func(context.Context, *rand.Rand) (operation.Outcome, error) { return operation.Outcome{Rows: 1}, nil })
	obs := &countingObserver{}
	cfg := engine.Config{Run: "streams", Spec: recordedSpec(t, "read", "write"), Interval: 250 * time.Millisecond, Shards: 1,
		Start: time.Now().Add(50 * time.Millisecond), Observer: obs,
		Operations: []engine.Operation{{Name: "read", Weight: 1, Op: noop}, {Name: "write", Weight: 1, Op: noop}}}
	streams := []engine.Stream{
		{Name: "writes", Operations: []engine.Operation{{Name: "write", Weight: 1, Op: noop}},
			Load: engine.Load{Profile: schedule.Profile{{Duration: batchWindow}}, Concurrency: 1, Iterations: 30}},
		{Name: "reads", Operations: []engine.Operation{{Name: "read", Weight: 1, Op: noop}},
			Load: engine.Load{Profile: schedule.Profile{{From: 200, To: 200, Duration: 500 * time.Millisecond}}, MaxInFlight: 8}},
	}
	doc, err := engine.RunStreamsDocument(context.Background(), cfg, streams)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Streams) != 2 || doc.Streams[0].Name != "reads" || doc.Streams[1].Name != "writes" || len(doc.Intervals) != 0 {
		t.Fatalf("the document has streams %+v and %d top-level intervals; want reads and writes, none", streamNames(doc), len(doc.Intervals))
	}
	if reads, writes := obs.finished[0].Load(), obs.finished[1].Load(); reads != 100 || writes != 30 {
		t.Errorf("the live observer saw %d reads and %d writes; want the reads stream's 100 and the batch's 30", reads, writes)
	}
	if got := totalsByName(doc); got["read"].OK != 100 || got["write"].OK != 30 {
		t.Errorf("the document's totals are %d reads and %d writes; want 100 and 30", got["read"].OK, got["write"].OK)
	}
}

func streamNames(d *result.Document) []string {
	var out []string
	for _, s := range d.Streams {
		out = append(out, s.Name)
	}
	return out
}

// TestRunStreamsAddsTheStreamsProgressUp: a shard's progress (its live
// gauges and progress log) is every stream's added up: two open-loop
// streams at 100/s and 50/s, the second started half a second in, show
// a target of 150/s once both run, over the shard's whole time.
func TestRunStreamsAddsTheStreamsProgressUp(t *testing.T) {
	noop := operation.Func(func(context.Context, *rand.Rand) (operation.Outcome, error) { return operation.Outcome{Rows: 1}, nil })
	var mu sync.Mutex
	var ticks []engine.Progress
	cfg := engine.Config{Run: "streams", Spec: recordedSpec(t, "read", "write"), Interval: time.Second, Shards: 1,
		Start:      time.Now().Add(50 * time.Millisecond),
		Progress:   func(p engine.Progress) { mu.Lock(); defer mu.Unlock(); ticks = append(ticks, p) },
		Operations: []engine.Operation{{Name: "read", Weight: 1, Op: noop}, {Name: "write", Weight: 1, Op: noop}}}
	streams := []engine.Stream{
		{Name: "reads", Operations: []engine.Operation{{Name: "read", Weight: 1, Op: noop}},
			Load: engine.Load{Profile: schedule.Profile{{From: 100, To: 100, Duration: 3 * time.Second}}, MaxInFlight: 8}},
		{Name: "writes", Operations: []engine.Operation{{Name: "write", Weight: 1, Op: noop}}, Offset: 500 * time.Millisecond,
			Load: engine.Load{Profile: schedule.Profile{{From: 50, To: 50, Duration: 2 * time.Second}}, MaxInFlight: 8}},
	}
	if _, err := engine.RunStreams(context.Background(), cfg, streams); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var most float64
	for _, p := range ticks {
		most = max(most, p.TargetRate)
		if p.Total != 3*time.Second || p.ClosedLoop {
			t.Errorf("a tick says %v of %v (closed loop %v); want the shard's 3s, open loop", p.Elapsed, p.Total, p.ClosedLoop)
		}
	}
	if most != 150 {
		t.Errorf("the shard's target rate peaked at %g/s over %d ticks; want 150 (100 + 50) while both streams run", most, len(ticks))
	}
}

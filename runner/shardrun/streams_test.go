package shardrun_test

import (
	"math"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/shardrun"
	"github.com/spanbench/spanbench/spanner/session"
)

// streamsRun is the streams run's length: the batch's window, from its
// 1 s offset to the run's end. The run ends when its last stream does, so
// a batch that finishes early ends it early (its 30 updates: 33 ms idle),
// and a window this long keeps a slow host from cutting the batch short:
// with the test's processes held to 7 % of a core, harsher than the
// project's CI when it failed a 3 s window, the batch made 0 of its 30
// updates in 3 s; given this window it needed 6.0 s (idle: 19-33 ms).
const streamsRun = time.Minute

// streamsSpec is two open-loop read streams at their own rates across both
// runners, for 4 s and 2 s, and a batch of updates pinned to runner 1,
// started 1 s in, with the rest of the run as its window.
// Reads pace the rate streams: the emulator serializes read-write
// transactions per runner (spanner/session), which would pace them instead.
func streamsSpec() *v1alpha1.WorkloadSpec {
	rows := int64(preloaded)
	stale := &v1alpha1.StalenessSpec{Max: &metav1.Duration{Duration: 10 * time.Second}}
	s := &v1alpha1.WorkloadSpec{
		Type:    v1alpha1.WorkloadTweet,
		Dataset: v1alpha1.DatasetSpec{Rows: &rows},
		Operations: []v1alpha1.OperationSpec{
			{Type: v1alpha1.OpRead, Weight: 1, Staleness: stale},
			{Name: "query", Type: v1alpha1.OpQueryBySort, Weight: 1, Staleness: stale},
			{Type: v1alpha1.OpUpdate, Weight: 1},
		},
		Duration: &metav1.Duration{Duration: streamsRun},
		Interval: &metav1.Duration{Duration: time.Second},
		Streams: []v1alpha1.StreamSpec{
			{Name: "online", Operations: []v1alpha1.StreamOperation{{Name: "read", Weight: 1}}, Load: v1alpha1.LoadSpec{Rate: ptr.To[int32](150)},
				Duration: &metav1.Duration{Duration: 4 * time.Second}},
			{Name: "reporting", Operations: []v1alpha1.StreamOperation{{Name: "query", Weight: 1}}, Load: v1alpha1.LoadSpec{Rate: ptr.To[int32](40)},
				StartOffset: &metav1.Duration{Duration: time.Second}, Duration: &metav1.Duration{Duration: 2 * time.Second}},
			{Name: "batch", Operations: []v1alpha1.StreamOperation{{Name: "update", Weight: 1}}, Load: v1alpha1.LoadSpec{Concurrency: ptr.To[int32](1)},
				Iterations: ptr.To[int64](30), StartOffset: &metav1.Duration{Duration: time.Second}, Runners: []int32{1}},
		},
	}
	*s = s.Resolved()
	return s
}

// runStreamShards runs n shards of a streams spec, each with its own
// client, each writing its one document (shardrun.Shard), and merges them
// as the controller does (checked against the run): each stream's section
// merged across the shards, keyed by stream, and each stream's shards'
// wall times.
func runStreamShards(t *testing.T, base *session.Session, spec *v1alpha1.WorkloadSpec, n int) (map[string]*result.Document, map[string][]time.Duration) {
	t.Helper()
	out, start := shardDocs(t, base, spec, "streams", n)
	e, err := protocol.ResultExpectation("streams", spec, start, time.Minute, -1, n)
	if err != nil {
		t.Fatal(err)
	}
	m := result.NewCheckedMerger(e)
	for i := range out {
		if err := m.Add(out[i]); err != nil {
			t.Fatalf("shard %d's document is refused: %v", i, err)
		}
	}
	doc, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	merged, walls := map[string]*result.Document{}, map[string][]time.Duration{}
	for i := range doc.Streams {
		sec := &doc.Streams[i]
		merged[sec.Name] = doc.StreamDocument(sec)
		for _, sh := range sec.Shards {
			// Rounded, not truncated: 0.064095351 s times 1e9 is
			// 64095350.99… in floating point, a nanosecond short.
			walls[sec.Name] = append(walls[sec.Name], time.Duration(math.Round(sh.WallTimeSeconds*float64(time.Second))))
		}
	}
	return merged, walls
}

// TestStreamsKeepTheirOwnRatesAndAreReportedApart runs three streams in two
// runners against the emulator: each open-loop stream completes its own
// target rate within 1 % over its own window, its result counts only its
// own operations, and the batch stream runs exactly its iterations on its
// one runner and records its wall time.
func TestStreamsKeepTheirOwnRatesAndAreReportedApart(t *testing.T) {
	spec := streamsSpec()
	s := sessiontest.Start(t, spec)
	docs, walls := runStreamShards(t, s, spec, 2)
	for _, c := range []struct {
		stream, op string
		rate       float64
		window     time.Duration
	}{{"online", "read", 150, 4 * time.Second}, {"reporting", "query", 40, 2 * time.Second}} {
		doc := docs[c.stream]
		if doc == nil {
			t.Fatalf("no result for stream %s", c.stream)
		}
		ops := map[string]result.Operation{}
		for _, op := range doc.Totals {
			ops[op.Name] = op
		}
		got := float64(ops[c.op].OK) / c.window.Seconds()
		if diff := got/c.rate - 1; diff < -0.01 || diff > 0.01 {
			t.Errorf("stream %s completed %.1f %s/s over its %v, want its own %.0f/s within 1 %%", c.stream, got, c.op, c.window, c.rate)
		}
		for name, op := range ops {
			if name != c.op && op.OK+op.ErrorCount() > 0 {
				t.Errorf("stream %s reports %d of %s, which only other streams run", c.stream, op.OK+op.ErrorCount(), name)
			}
		}
		if op := ops[c.op]; op.ErrorCount() > 0 {
			t.Errorf("stream %s: %d errors: %v", c.stream, op.ErrorCount(), op.Errors)
		}
	}
	batch := docs["batch"]
	if batch == nil || len(walls["batch"]) != 1 {
		t.Fatalf("the batch stream, pinned to runner 1, ran on %d runners; want exactly one", len(walls["batch"]))
	}
	var updates uint64
	for _, op := range batch.Totals {
		if op.Name == "update" {
			updates = op.OK
		}
	}
	if updates != 30 {
		t.Errorf("the batch stream made %d updates, want exactly its 30 iterations", updates)
	}
	if w := walls["batch"][0]; w <= 0 || w > streamsRun-time.Second {
		t.Errorf("the batch's wall time is %v, want a positive time within its %v window", w, streamsRun-time.Second)
	}
	for name, doc := range docs {
		if doc.Stream != name {
			t.Errorf("stream %s's merged document says it is of stream %q", name, doc.Stream)
		}
	}
	if sh := batch.Shards; len(sh) != 1 || sh[0].Index != 1 || sh[0].Count != 2 || sh[0].WallTimeSeconds != walls["batch"][0].Seconds() {
		t.Errorf("the batch's document describes shards %+v; want runner 1 of 2 with its wall time %v", sh, walls["batch"][0])
	}
	t.Logf("batch of 30 updates: wall time %v", walls["batch"][0])
}

// TestConfigRefusesStreams: a streams workload has no load of its own,
// so the single-stream configuration refuses it rather than run nothing.
func TestConfigRefusesStreams(t *testing.T) {
	spec := streamsSpec()
	// No session: a Config that went on to bind the workload would use
	// it, so say that rather than crash.
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Config of a streams workload went on to bind it (%v); want it refused first", r)
		}
	}()
	_, err := shardrun.Config("streams", spec, nil, 0, 1)
	if err == nil || !strings.Contains(err.Error(), "workload.streams") {
		t.Errorf("Config of a streams workload: %v; want it refused naming workload.streams", err)
	}
}

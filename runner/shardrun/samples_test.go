package shardrun_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/result"
)

// readSample reads a BenchmarkRun sample of config/samples.
func readSample(t *testing.T, name string) *v1alpha1.BenchmarkRun {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	var run v1alpha1.BenchmarkRun
	if err := yaml.UnmarshalStrict(data, &run); err != nil {
		t.Fatal(err)
	}
	return &run
}

// checkStreamsRan fails unless each stream of want ran each of its
// operations at least once, and no operation of any stream failed.
func checkStreamsRan(t *testing.T, docs map[string]*result.Document, want map[string][]string) {
	t.Helper()
	for stream, ops := range want {
		doc := docs[stream]
		if doc == nil {
			t.Fatalf("no result for stream %s", stream)
		}
		ok := map[string]uint64{}
		for _, op := range doc.Totals {
			ok[op.Name] = op.OK
			if op.ErrorCount() > 0 {
				t.Errorf("stream %s, operation %s: %d errors: %v", stream, op.Name, op.ErrorCount(), op.Errors)
			}
		}
		for _, name := range ops {
			if ok[name] == 0 {
				t.Errorf("stream %s ran no %s", stream, name)
			}
		}
	}
}

// TestWriteInterferenceSampleRunsOnTheEmulator runs the streams of
// config/samples/tweet-write-interference.yaml, windows shortened, against
// the emulator: the heavy queries (a 1000-row QueryBySort and the
// FullScan) run in their window beside the inserts, without an error.
func TestWriteInterferenceSampleRunsOnTheEmulator(t *testing.T) {
	spec := &readSample(t, "tweet-write-interference.yaml").Spec.Workload
	spec.Duration = &metav1.Duration{Duration: 4 * time.Second}
	spec.Interval = &metav1.Duration{Duration: time.Second}
	for i := range spec.Streams {
		if spec.Streams[i].Name == "heavy-query" {
			spec.Streams[i].StartOffset = &metav1.Duration{Duration: time.Second}
			spec.Streams[i].Duration = &metav1.Duration{Duration: 2 * time.Second}
		}
	}
	*spec = spec.Resolved()
	s := sessiontest.Start(t, spec)
	docs, _ := runStreamShards(t, s, spec, 1)
	checkStreamsRan(t, docs, map[string][]string{"writes": {"insert"}, "heavy-query": {"sort-range", "full-scan"}})
	for _, op := range docs["heavy-query"].Totals {
		if op.OK > 0 {
			t.Logf("heavy queries: %d of %s", op.OK, op.Name)
		}
	}
}

// TestBatchOnlineSampleRunsOnTheEmulator runs the streams of
// config/samples/custom-batch-online.yaml (its schema, dataset and
// statements as written, the online stream's window shortened to 4 s and
// the batch to 20 iterations) against the emulator: the batch's
// set-oriented UPDATE runs exactly its iterations without an error and
// records its wall time, and the online stream's statements run without
// an error. The sample tests elsewhere prove it is admitted; this proves
// its SQL runs.
//
// The batch keeps the sample's 60 s window (the run ends with its last
// stream, the online one's 4 s on an idle host, where the 20 updates take
// 0.35 s): with
// the test's processes held to 7 % of a core, harsher than the project's
// CI when it failed another batch's 3 s window, the batch made 4 of its 20
// updates in the 4 s window this test used to give it; given the 60 s
// it needed 9.2 s.
func TestBatchOnlineSampleRunsOnTheEmulator(t *testing.T) {
	spec := &readSample(t, "custom-batch-online.yaml").Spec.Workload
	spec.Interval = &metav1.Duration{Duration: time.Second}
	const iterations = 20
	for i := range spec.Streams {
		switch spec.Streams[i].Name {
		case "batch":
			spec.Streams[i].Iterations = ptr.To[int64](iterations)
		case "online":
			spec.Streams[i].Duration = &metav1.Duration{Duration: 4 * time.Second}
		}
	}
	*spec = spec.Resolved()
	s := sessiontest.Start(t, spec)
	docs, walls := runStreamShards(t, s, spec, 1)
	checkStreamsRan(t, docs, map[string][]string{"batch": {"cost-range"}, "online": {"take-stock", "lookup"}})
	for _, op := range docs["batch"].Totals {
		if op.Name == "cost-range" && op.OK != iterations {
			t.Errorf("the batch ran %d range updates, want exactly its %d iterations", op.OK, iterations)
		}
	}
	if w := walls["batch"]; len(w) != 1 || w[0] <= 0 {
		t.Errorf("the batch's wall times are %v, want one positive time (it finished within its window)", w)
	}
	t.Logf("batch of %d range updates beside the online stream: wall time %v", iterations, walls["batch"])
}

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
)

// TestBatchOnlineSampleRunsOnTheEmulator runs the streams of
// config/samples/custom-batch-online.yaml (its schema, dataset and
// statements as written, its window shortened) against the emulator: the
// batch's set-oriented UPDATE runs exactly its iterations without an error
// and records its wall time, and the online stream's statements run
// without an error. The sample tests elsewhere prove it is admitted; this
// proves its SQL runs.
func TestBatchOnlineSampleRunsOnTheEmulator(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "config", "samples", "custom-batch-online.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var run v1alpha1.BenchmarkRun
	if err := yaml.UnmarshalStrict(data, &run); err != nil {
		t.Fatal(err)
	}
	spec := &run.Spec.Workload
	spec.Duration = &metav1.Duration{Duration: 4 * time.Second}
	spec.Interval = &metav1.Duration{Duration: time.Second}
	const iterations = 20
	for i := range spec.Streams {
		if spec.Streams[i].Name == "batch" {
			spec.Streams[i].Iterations = ptr.To[int64](iterations)
		}
	}
	*spec = spec.Resolved()
	s := sessiontest.Start(t, spec)
	docs, walls := runStreamShards(t, s, spec, 1)
	want := map[string][]string{"batch": {"cost-range"}, "online": {"take-stock", "lookup"}}
	for stream, ops := range want {
		doc := docs[stream]
		if doc == nil {
			t.Fatalf("no result for stream %s", stream)
		}
		for _, op := range doc.Totals {
			if op.ErrorCount() > 0 {
				t.Errorf("stream %s, operation %s: %d errors: %v", stream, op.Name, op.ErrorCount(), op.Errors)
			}
		}
		for _, name := range ops {
			found := false
			for _, op := range doc.Totals {
				found = found || (op.Name == name && op.OK > 0)
			}
			if !found {
				t.Errorf("stream %s ran no %s", stream, name)
			}
		}
	}
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

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// searchSampleFile is the capacity search sample the README points at.
const searchSampleFile = "search-ycsb-sql.yaml"

// TestSearchRunFindsItsCapacity applies the capacity search sample as a
// BenchmarkRun on the demo cluster, as written (from 2 to 128 ops/s,
// resolution 8, 5 s warm-ups) but with 5 s steps instead of 10 s, split
// over two runners, so that each step's merge joins two shards'
// steps: the runners stay up across the steps the manager publishes, and
// the run succeeds with the step table in its status (each step offered,
// achieved and every SLO figure judged), its capacity once the search
// ended, the CAPACITY column of `kubectl get`, and the capacity as a
// Prometheus series scraped from the manager by a real Prometheus.
func TestSearchRunFindsItsCapacity(t *testing.T) {
	kustomizePassOnly(t)
	t.Parallel()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("no prometheus binary: install Debian's with `hack/install-deps.sh prometheus`")
	}
	ns := newNamespace(t, "e2e-search")
	prom := startPrometheus(t, bin, ns, metricsReaderToken(t, ns))

	raw, err := os.ReadFile(filepath.Join(suite.root, samplesDir, searchSampleFile))
	if err != nil {
		t.Fatal(err)
	}
	run := &v1alpha1.BenchmarkRun{}
	if err := yaml.UnmarshalStrict(raw, run); err != nil {
		t.Fatalf("%s: %v", searchSampleFile, err)
	}
	run.Namespace = ns
	run.Spec.Target.EmulatorHost = suite.emulatorHost
	run.Spec.Target.Database = strings.ReplaceAll(ns, "-", "_")
	run.Spec.Runners.Replicas = ptr.To(int32(2))
	s := run.Spec.Workload.Load.Search
	if s == nil {
		t.Fatalf("%s holds no load.search", searchSampleFile)
	}
	// The sample's latency bound (250 ms) is the emulator's knee on a quiet
	// host; CI shares its two cores with the cluster, and a loaded host
	// failed the first step at 2 ops/s (p99 554 ms) and left no capacity to
	// check. The mechanics under test do not depend on where the knee is:
	// the latency bound is loosened, so the search runs into the emulator's
	// throughput limit (achieved >= 95%) or its max.
	for i, c := range s.SLO {
		if strings.HasPrefix(c, "p99(") {
			s.SLO[i] = c[:strings.Index(c, "<=")] + "<= 30s"
		}
	}
	// Each step measures one interval (5 s) instead of the sample's two:
	// what this test checks — steps merged across two shards, published
	// and judged, the capacity in the status, kubectl and Prometheus —
	// does not depend on a step's length, and the sample runs as written
	// in cmd/spanbench (TestSearchSampleRunsAndEachStepMatchesItsHistograms).
	// A busy host's emulator falls behind below 128 ops/s and the search
	// confirms the failure and bisects (13 steps, 195 s at 15 s a step,
	// 130 s at 10 s); a quiet one's reached the max in 7 steps. A failed
	// step judged from two shards' merge is the manager's envtest
	// scenario's to prove (controllers/benchmarkrun,
	// TestSearchStepIsJudgedOnceEveryRunnerReportedItAndTheNextIsPublished).
	s.StepDuration = metav1.Duration{Duration: run.Spec.Workload.Interval.Duration}
	// Worst case 30 steps of 10 s, 5 min, within the sample's 10 min with
	// the steps' gaps; a search to the emulator's knee takes about half of
	// that.
	create(t, run)
	run = waitFinished(t, ns, run.Name, 13*time.Minute)
	requireSucceeded(t, run, v1alpha1.ReasonCompleted)

	st := run.Status.Search
	if st == nil {
		t.Fatal("status.search is empty after the search ran")
	}
	t.Logf("status.search: %d steps, reason %s, capacity %q, first failing %q (%v), summary %q",
		len(st.Steps), st.Reason, st.Capacity, st.FirstFailing, st.FailedConditions, st.Summary)
	if !st.Done || st.Summary == "" || len(st.Steps) == 0 || int32(len(st.Steps)) > st.MaxSteps {
		t.Fatalf("status.search = %+v; want a finished search of 1 to %d steps with its summary", st, st.MaxSteps)
	}
	if want := v1alpha1.FormatThroughput(float64(s.From)); st.Steps[0].Offered != want {
		t.Errorf("the first step offered %s ops/s; want from's %s", st.Steps[0].Offered, want)
	}
	for i, step := range st.Steps {
		t.Logf("step %d: offered %s, achieved %s, pass %v, figures %+v", i+1, step.Offered, step.Achieved, step.Pass, step.Figures)
		if step.Achieved == "" || len(step.Figures) != len(st.SLO) {
			t.Errorf("step %d: achieved %q, %d figures; want its achieved rate and one figure per SLO condition (%v)", i+1, step.Achieved, len(step.Figures), st.SLO)
		}
		for j, f := range step.Figures {
			if f.Condition != st.SLO[j] || (f.Value == "") != (f.BaseValue == "") || (f.Value == "") == (f.Note == "") {
				t.Errorf("step %d, figure %d: %+v; want condition %q with its value as text and as a decimal, or a note saying why it has none", i+1, j, f, st.SLO[j])
			}
		}
	}
	if st.Capacity == "" {
		t.Fatalf("the search found no capacity (first rate failed: %v); the series cannot be checked", st.FailedConditions)
	}
	if out := kubectl(t, "-n", ns, "get", "benchmarkrun", run.Name); !strings.Contains(out, "CAPACITY") || !strings.Contains(out, st.Summary) {
		t.Errorf("kubectl get shows no CAPACITY %q:\n%s", st.Summary, out)
	}

	q := fmt.Sprintf(`spanbench_run_capacity_ops_per_second{namespace=%q, run=%q, job="spanbench-manager"}`, ns, run.Name)
	want, err := v1alpha1.ParseThroughput(st.Capacity)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the capacity series in Prometheus", func(ctx context.Context) (bool, string) {
		res, err := prom.query(ctx, q)
		if err != nil {
			return false, err.Error()
		}
		if len(res) != 1 || res[0].value != want || res[0].labels["reason"] != st.Reason {
			return false, fmt.Sprintf("%s = %v; want one series of %v, reason %s", q, res, want, st.Reason)
		}
		return true, ""
	})
	steps := fmt.Sprintf(`spanbench_run_search_step_passed{namespace=%q, run=%q, job="spanbench-manager"}`, ns, run.Name)
	eventually(t, time.Minute, "the step series in Prometheus", func(ctx context.Context) (bool, string) {
		res, err := prom.query(ctx, steps)
		if err != nil {
			return false, err.Error()
		}
		if len(res) != len(st.Steps) {
			return false, fmt.Sprintf("%s: %d series; want one per step (%d)", steps, len(res), len(st.Steps))
		}
		return true, ""
	})
}

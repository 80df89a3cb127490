package pod

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/runner/protocol"
)

// searchSpec is a small capacity search, 20 then 40 ops/s, in steps of 1 s
// warm-up and 2 s measured, over 1 s intervals.
func searchSpec() v1alpha1.WorkloadSpec {
	w := ycsb(100, time.Minute, readOp)
	w.Load = v1alpha1.LoadSpec{Search: &v1alpha1.SearchSpec{From: 20, Max: 40, Resolution: 10,
		WarmUp: &metav1.Duration{Duration: time.Second}, StepDuration: metav1.Duration{Duration: 2 * time.Second},
		SLO: []string{"p99(read) <= 5s"}}}
	return w.Resolved()
}

// publishSearchStep writes step into the control map, as the controller
// does once it judged the step before.
func publishSearchStep(t *testing.T, ns, run string, step protocol.SearchStep) {
	t.Helper()
	data, err := protocol.EncodeSearchStep(step)
	if err != nil {
		t.Fatal(err)
	}
	patch, err := json.Marshal(protocol.Maps{Data: data})
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: protocol.ControlConfigMapName(run)}}
	if err := k8sClient.Patch(bounded(t), cm, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatalf("publishing search step %d: %v", step.Step, err)
	}
}

// waitSearchReports waits until every shard reported step, and returns
// their reports.
func waitSearchReports(t *testing.T, ns, run string, handles []*runnerHandle, step int) []protocol.SearchReport {
	t.Helper()
	reps := make([]protocol.SearchReport, len(handles))
	eventually(t, runWithin, "every shard's report of search step", func() (bool, string) {
		for i, h := range handles {
			if h.finished() {
				t.Fatalf("runner %d returned while its search ran: %v", i, h.err)
			}
			raw := shardReport(t, ns, run, i).Search
			if raw == "" {
				return false, fmt.Sprintf("no report from shard %d", i)
			}
			rep, _, err := protocol.DecodeSearchReport(raw)
			if err != nil {
				t.Fatalf("shard %d's search report does not decode: %v", i, err)
			}
			if rep.Step != step {
				return false, fmt.Sprintf("shard %d reported step %d", i, rep.Step)
			}
			reps[i] = rep
		}
		return true, ""
	})
	return reps
}

// TestSearchRunnersRunThePublishedStepsTogether: two runners stay up
// across a search's steps: step 0 at the search's first rate from the
// start time, then the step the controller publishes, from its instant;
// each reports its measurement of each step, and at the search's end
// stores one result whose intervals are the steps' back to back, each
// step's at its rate's share, numbered alike on both shards so that they
// merge step by step.
func TestSearchRunnersRunThePublishedStepsTogether(t *testing.T) {
	spec := searchSpec()
	s := sessiontest.Start(t, &spec)
	ns, run := newNamespace(t), "search"
	createControl(t, ns, protocol.Control{Run: run, Namespace: ns, Shards: 2, Target: s.Target, Workload: spec})
	createShardMaps(t, ns, run, 2)
	runners := startRunners(t, k8sClient, ns, run, 2, nil)
	waitReady(t, ns, run, runners, readyWithin)
	start := time.Now().Add(time.Second).Truncate(time.Millisecond)
	publishStart(t, ns, run, start)

	for i, rep := range waitSearchReports(t, ns, run, runners, 0) {
		if rep.Offered != 20 || rep.Seconds != 2 || !rep.Start.Equal(start) {
			t.Errorf("shard %d reported step 0 as %g ops/s over %gs of the run started %s; want 20 over 2s of %s", i, rep.Offered, rep.Seconds, rep.Start, start)
		}
	}
	publishSearchStep(t, ns, run, protocol.SearchStep{Start: start, Step: 1, Rate: 40, At: time.Now().Add(time.Second)})
	for i, rep := range waitSearchReports(t, ns, run, runners, 1) {
		if rep.Offered != 40 || len(rep.Operations) != 1 || rep.Operations[0].Counts.OK == 0 {
			t.Errorf("shard %d reported step 1 as %+v; want 40 ops/s with successful reads", i, rep)
		}
	}
	publishSearchStep(t, ns, run, protocol.SearchStep{Start: start, Step: 2, Done: true})
	for i, h := range runners {
		if err := h.wait(t, runWithin); err != nil {
			t.Fatalf("runner %d: %v", i, err)
		}
		d := succeededResult(t, ns, run, i)
		byIndex := map[int]float64{}
		for _, in := range d.Intervals {
			byIndex[in.Index] = in.TargetRate
		}
		for k, want := range []float64{10, 10, 10, 20, 20, 20} { // each shard's half of 20, then of 40
			if got, ok := byIndex[k]; !ok || got != want {
				t.Errorf("shard %d, interval %d: target rate %v (present %v); want %v: the steps back to back, at the published rates", i, k, got, ok, want)
			}
		}
	}
}

// TestSearchRunnerWithoutANextStepFails: a runner whose controller never
// publishes the next step fails, saying so, once
// Options.SearchDecisionTimeout has passed since the step's end: it
// never waits forever.
func TestSearchRunnerWithoutANextStepFails(t *testing.T) {
	spec := searchSpec()
	s := sessiontest.Start(t, &spec)
	ns, run := newNamespace(t), "search-stalled"
	createControl(t, ns, protocol.Control{Run: run, Namespace: ns, Shards: 1, Target: s.Target, Workload: spec})
	createShardMaps(t, ns, run, 1)
	runners := startRunners(t, k8sClient, ns, run, 1, func(_ int, o *Options) { o.SearchDecisionTimeout = 2 * time.Second })
	waitReady(t, ns, run, runners, readyWithin)
	publishStart(t, ns, run, time.Now().Add(time.Second))
	err := runners[0].wait(t, runWithin)
	if err == nil || !strings.Contains(err.Error(), "no search step 1") {
		t.Fatalf("runner returned %v; want it to fail for want of search step 1", err)
	}
	if rep := shardReport(t, ns, run, 0); rep.State != protocol.StateFailed || !strings.Contains(rep.Message, "no search step 1") {
		t.Errorf("shard map says %s: %q; want Failed with the reason", rep.State, rep.Message)
	}
}

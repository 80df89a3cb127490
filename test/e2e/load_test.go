//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
)

// loadRows is large enough that a loader is still writing after its
// second progress report (they come at about 1 s, then every 5 s): about
// 20 s per loader on the emulator's ~9,000 rows/s. At 80,000 rows a loader
// sometimes finished before reporting past the start of its slice.
const loadRows = 200_000

// loadKillTimeout bounds the wait for the killed load to finish and the
// run after it. Alone the emulator loads 6,000-10,000 rows/s; beside
// make test's unit stage 1,500-3,000, which put the 200,000 rows plus
// the retry at 90-110 s after the kill, too close to runTimeout. The
// test asserts the resume, not the speed.
const loadKillTimeout = 6 * time.Minute

// TestLoaderKilledMidLoadResumes kills one loader's process outright
// (SIGKILL, as an OOM kill or a node failure would) once it has reported
// progress. The documented outcome: the Job starts that index again, the
// new pod resumes where every row of the slice was written, and the run
// goes on to succeed with exactly the dataset in the table.
func TestLoaderKilledMidLoadResumes(t *testing.T) {
	kustomizePassOnly(t)
	t.Parallel()
	ns := newNamespace(t, "e2e-loadkill")
	run := demoRun(t, ns, "loadkill", withLoad(4*time.Second, 50), func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Workload.Dataset.Rows = ptr.To[int64](loadRows)
		r.Spec.Workload.Dataset.LoaderPods = ptr.To[int32](2)
		r.Spec.Workload.WarmUp = nil
		// The load deadline is the wait's own: beside the unit stage and
		// other work the emulator took 200,000 rows past the default
		// (199,000 loaded at 1,200 rows/s when it expired).
		r.Spec.Deadlines.Load = &metav1.Duration{Duration: loadKillTimeout}
	})
	create(t, run)

	// Loader 1 owns the upper half of the rows; kill it once it reported
	// that it is past its start.
	var id string
	eventually(t, runTimeout, "loader 1 to report progress", func(ctx context.Context) (bool, string) {
		cm := &corev1.ConfigMap{}
		if err := suite.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: protocol.LoaderConfigMapName(run.Name, 1)}, cm); err != nil {
			return false, err.Error()
		}
		rep, err := protocol.DecodeLoaderReport(cm.Data)
		if err != nil {
			t.Fatalf("loader 1's report does not decode: %v", err)
		}
		if rep.State == protocol.StateSucceeded {
			t.Fatalf("loader 1 finished before it could be killed; raise loadRows")
		}
		if rep.State != protocol.StateLoading || rep.ResumeFrom <= loadRows/2 {
			return false, fmt.Sprintf("loader 1: state %q, resumeFrom %d", rep.State, rep.ResumeFrom)
		}
		pods, err := loaderPods(ctx, ns, run.Name)
		if err != nil {
			return false, err.Error()
		}
		p := pods[1]
		if len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Running == nil {
			return false, "loader 1's container is not running"
		}
		id = strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://")
		return true, ""
	})
	if out, err := ctr(t.Context(), "task", "kill", "--signal", "SIGKILL", id); err != nil {
		t.Fatalf("killing loader 1's container %s: %v: %s", id, err, out)
	}
	t.Logf("killed loader 1 (container %s)", id)

	run = waitFinished(t, ns, run.Name, loadKillTimeout)
	requireSucceeded(t, run, v1alpha1.ReasonCompleted)
	if ds := run.Status.Dataset; ds == nil || ds.Loaded != loadRows || ds.Source != v1alpha1.DatasetLoaded {
		t.Errorf("status.dataset = %+v; want all %d rows loaded by the run", ds, loadRows)
	}
	if n := countRows(t, run); n != loadRows {
		t.Errorf("the table holds %d rows; want exactly %d", n, loadRows)
	}
	// The replacement resumed rather than starting the slice over. The
	// pods are gone with the loader Job by now; the run keeps the count
	// and an event says where the retry resumed.
	if ds := run.Status.Dataset; ds == nil || ds.Retries != 1 {
		t.Errorf("status.dataset = %+v; want retries 1", ds)
	}
	events := &corev1.EventList{}
	if err := suite.c.List(t.Context(), events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	resumed := false
	for _, e := range events.Items {
		if e.InvolvedObject.Name != run.Name || e.Reason != v1alpha1.ReasonLoaderRetried {
			continue
		}
		msgs = append(msgs, e.Message)
		var at int64
		if k := strings.LastIndex(e.Message, "at row "); k >= 0 {
			if _, err := fmt.Sscanf(e.Message[k:], "at row %d", &at); err == nil && at > loadRows/2 {
				resumed = true
			}
		}
	}
	if !resumed {
		t.Errorf("LoaderRetried events: %q; want one saying loader 1 resumed past the start of its slice (row %d)", msgs, loadRows/2)
	}
}

// countRows counts the rows of the run's YCSB table in the suite's
// emulator.
func countRows(t *testing.T, run *v1alpha1.BenchmarkRun) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := session.Open(ctx, endpoint.Emulator(run.Spec.Target.EmulatorHost), run.Spec.Target)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int64
	err = s.Client.Single().Query(ctx, spanner.Statement{SQL: "SELECT COUNT(*) FROM usertable"}).Do(func(r *spanner.Row) error { return r.Column(0, &n) })
	if err != nil {
		t.Fatalf("counting rows: %v", err)
	}
	return n
}

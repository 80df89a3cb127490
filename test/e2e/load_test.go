//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
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

// The killed load is held to a known pace by the product's own rate cap
// (dataset.maxRowsPerSecond), not made long by its size: each of the two
// loader pods writes at most loadRate/2 = 50 rows/s, so a 1,000-row slice
// takes at least 20 s however fast the host, and 2,000 rows cost a busy
// emulator little (it wrote 120-420 rows/s of a 200,000-row load at load
// average 20-50). Loader 1 is killed once its report says its slice is
// written up to killPast (10 %), which its second report (about 6 s in)
// does, about 14 s before its slice can end. (It used to take 200,000
// rows of 1 KiB to be still loading when killed on an idle host: 22 s
// there, 5-8 minutes on a busy one, where it missed its load deadline.)
const (
	loadRows  = 2_000
	loadRate  = 100
	loadBatch = 10
	killPast  = loadRows/2 + loadRows/20
)

// loadKillTimeout bounds the wait for the killed load to finish and the
// run after it: the load's about 25 s at its cap, the pod's restart and a
// 4 s run, with room for a busy host's slow pod starts.
const loadKillTimeout = 4 * time.Minute

// TestLoaderKilledMidLoadResumes kills one loader's process outright
// (SIGKILL, as an OOM kill or a node failure would) while it is loading,
// once it has reported its slice written up to killPast. The documented
// outcome: the Job starts that index again, the new pod resumes at the
// watermark the killed one reported (not at the start of its slice: the
// LoaderRetried event's row is at least the watermark seen before the
// kill), and the run goes on to succeed with exactly the dataset in the
// table and in its status, loaded no faster than its cap.
func TestLoaderKilledMidLoadResumes(t *testing.T) {
	kustomizePassOnly(t)
	t.Parallel()
	ns := newNamespace(t, "e2e-loadkill")
	run := demoRun(t, ns, "loadkill", withLoad(4*time.Second, 50), func(r *v1alpha1.BenchmarkRun) {
		r.Spec.Workload.Dataset.Rows = ptr.To[int64](loadRows)
		r.Spec.Workload.Dataset.LoaderPods = ptr.To[int32](2)
		r.Spec.Workload.Dataset.BatchRows = ptr.To[int32](loadBatch)
		r.Spec.Workload.Dataset.MaxRowsPerSecond = ptr.To[int64](loadRate)
		r.Spec.Workload.WarmUp = nil
		r.Spec.Deadlines.Load = &metav1.Duration{Duration: loadKillTimeout}
	})
	create(t, run)

	// Loader 1 owns the upper half of the rows, [loadRows/2, loadRows).
	var id string
	var seen int64 // loader 1's watermark when it was killed, at least
	eventually(t, runTimeout, "loader 1 to report its slice written past row "+strconv.Itoa(killPast), func(ctx context.Context) (bool, string) {
		cm := &corev1.ConfigMap{}
		if err := suite.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: protocol.LoaderConfigMapName(run.Name, 1)}, cm); err != nil {
			return false, err.Error()
		}
		rep, err := protocol.DecodeLoaderReport(cm.Data)
		if err != nil {
			t.Fatalf("loader 1's report does not decode: %v", err)
		}
		if rep.State == protocol.StateSucceeded {
			t.Fatalf("loader 1 finished its slice before it could be killed: dataset.maxRowsPerSecond %d did not hold it to %d rows/s", loadRate, loadRate/2)
		}
		if rep.State != protocol.StateLoading || rep.ResumeFrom < killPast {
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
		seen = rep.ResumeFrom
		return true, ""
	})
	if out, err := ctr(t.Context(), "task", "kill", "--signal", "SIGKILL", id); err != nil {
		t.Fatalf("killing loader 1's container %s: %v: %s", id, err, out)
	}
	t.Logf("killed loader 1 (container %s), its slice written up to row %d", id, seen)

	run = waitFinished(t, ns, run.Name, loadKillTimeout)
	requireSucceeded(t, run, v1alpha1.ReasonCompleted)
	if ds := run.Status.Dataset; ds == nil || ds.Loaded != loadRows || ds.Source != v1alpha1.DatasetLoaded {
		t.Errorf("status.dataset = %+v; want all %d rows loaded by the run", ds, loadRows)
	}
	if n := countRows(t, run); n != loadRows {
		t.Errorf("the table holds %d rows; want exactly %d", n, loadRows)
	}
	// The replacement resumed where the killed loader had reported its
	// slice written, not at the slice's start: only the rows written
	// after that report (batches in flight and up to 5 s of its cap) are
	// written twice, as the idempotent load allows. The pods are gone
	// with the loader Job by now; the run keeps the count and an event
	// says where the retry resumed.
	if ds := run.Status.Dataset; ds == nil || ds.Retries != 1 {
		t.Errorf("status.dataset = %+v; want retries 1", ds)
	}
	if ds := run.Status.Dataset; ds != nil {
		if r, err := strconv.ParseFloat(ds.RowsPerSecond, 64); err != nil || r > loadRate {
			t.Errorf("status.dataset.rowsPerSecond %q; want at most the cap, %d", ds.RowsPerSecond, loadRate)
		}
	}
	events := &corev1.EventList{}
	if err := suite.c.List(t.Context(), events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	var resumedAt []int64
	for _, e := range events.Items {
		if e.InvolvedObject.Name != run.Name || e.Reason != v1alpha1.ReasonLoaderRetried {
			continue
		}
		msgs = append(msgs, e.Message)
		var at int64
		if k := strings.LastIndex(e.Message, "at row "); k >= 0 {
			if _, err := fmt.Sscanf(e.Message[k:], "at row %d", &at); err == nil {
				resumedAt = append(resumedAt, at)
			}
		}
	}
	t.Logf("status.dataset %+v; LoaderRetried: %q", run.Status.Dataset, msgs)
	if len(resumedAt) != 1 || resumedAt[0] < seen || resumedAt[0] >= loadRows {
		t.Errorf("LoaderRetried events: %q; want one saying loader 1 resumed at or past row %d, the watermark it reported before the kill, inside its slice [%d, %d)",
			msgs, seen, loadRows/2, loadRows)
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

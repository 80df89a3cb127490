package scale_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/internal/emulatortest"
	"github.com/spanbench/spanbench/internal/heappeak"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/runner/protocol"
)

// wideRunners is the runner count of BenchmarkRunWith100Runners.
const wideRunners = 100

// BenchmarkRunWith100Runners is one run of 100 runners (200 strong point
// reads/s in all, 5 s) through the whole path: the manager prepares the
// database, the farm's loader loads it, the 100 runners report ready, the
// manager publishes one start time (production start grace, 3 s) and the
// runners send, report and are merged. It reports the start skew across
// the 100 (the spread of the shards' first sends), the time from apply to
// the first send with the phases in between, and the manager's work.
func BenchmarkRunWith100Runners(b *testing.B) {
	emulatortest.NoMetadataServer(b)
	emu := emulatortest.Start(b)
	c := adminClient(b)
	ns := newNamespace(b, c, "wide")
	mgr := newManager(b, ns)
	start(b, mgr)
	f := startFarm(b, ns)
	for i := range b.N {
		run := scaleRun(ns, fmt.Sprintf("wide-%d", i), emu.Host(), fmt.Sprintf("wide%d", i), wideRunners, 2*wideRunners, 5*time.Second)
		reconcilesBefore := reconcileTimes(b, "controller_runtime_reconcile_time_seconds", "controller")
		cpuBefore := processCPU(b)
		resetPeakRSS(b)
		heap := heappeak.Start()
		applied := time.Now()
		if err := c.Create(context.Background(), run); err != nil {
			b.Fatal(err)
		}
		got, phases := awaitFinished(b, c, run, applied, 10*time.Minute, f)
		heapMiB, rssMiB, cpu := heap.MiB(), peakRSS(b), processCPU(b)-cpuBefore
		rec := reconcileTimes(b, "controller_runtime_reconcile_time_seconds", "controller").since(reconcilesBefore)
		w := wideFigures(b, c, got, applied)
		b.ReportMetric(w.firstSend.Seconds(), "apply-to-first-send-s")
		b.ReportMetric(float64(got.Status.StartSkew.Milliseconds()), "start-skew-ms")
		b.ReportMetric(float64(w.lateP50)/1e6, "first-send-late-p50-ms")
		b.ReportMetric(float64(rec.count), "reconciles")
		b.ReportMetric(cpu.Seconds(), "manager-cpu-s")
		b.ReportMetric(heapMiB, "manager-heap-peak-MiB")
		b.ReportMetric(rssMiB, "process-rss-peak-MiB")
		b.Logf("run %s, %d runners: apply → phases first seen at %s; runners ready %s-%s after apply; start published for %s; "+
			"first send %s, last first-send %s after apply; first sends after the start time: min %s, p50 %s, p90 %s, max %s; status.startSkew %s; run ended %s after apply",
			run.Name, wideRunners, formatPhases(phases), w.firstReady.Round(time.Millisecond), w.lastReady.Round(time.Millisecond),
			w.start.Round(time.Millisecond), w.firstSend.Round(time.Millisecond), w.lastSend.Round(time.Millisecond),
			(w.firstSend - w.start).Round(time.Millisecond), w.lateP50.Round(time.Millisecond), w.lateP90.Round(time.Millisecond),
			(w.lastSend - w.start).Round(time.Millisecond), got.Status.StartSkew.Duration, phases[v1alpha1.PhaseSucceeded].Round(time.Millisecond))
		b.Logf("manager: %d reconciles (p50 %.1f ms, p99 %.1f ms, mean %.1f ms), %.2f s CPU, heap peak %.1f MiB, process RSS peak %.1f MiB",
			rec.count, rec.quantile(0.5)*1e3, rec.quantile(0.99)*1e3, rec.mean()*1e3, cpu.Seconds(), heapMiB, rssMiB)
	}
	u := f.stop()
	b.Logf("farm (100 runners' pod code and the loader, one process): %.1f s CPU, peak RSS %.0f MiB", u.cpu.Seconds(), float64(u.maxRSS)/(1<<20))
}

// wideTimes are a run's moments, as times since it was applied.
type wideTimes struct {
	firstReady, lastReady, start, firstSend, lastSend time.Duration
	// lateP50 and lateP90 are how late the shards' first sends were after
	// the start time (median, 90th percentile of the 100).
	lateP50, lateP90 time.Duration
}

// wideFigures reads the shards' ready times from their maps and their
// first sends from the merged report.
func wideFigures(b *testing.B, c client.Client, run *v1alpha1.BenchmarkRun, applied time.Time) wideTimes {
	b.Helper()
	ready := readyTimes(b, c, run)
	doc, err := runreport.ReadReport(context.Background(), c, client.ObjectKeyFromObject(run), pod.RunArrivals)
	if err != nil {
		b.Fatal(err)
	}
	if len(doc.Shards) != int(run.Replicas()) {
		b.Fatalf("the report merges %d shards, want %d", len(doc.Shards), run.Replicas())
	}
	var late []time.Duration
	for _, s := range doc.Shards {
		late = append(late, s.Started.Sub(doc.Start))
	}
	slices.Sort(late)
	since := func(t time.Time) time.Duration { return t.Sub(applied) }
	// The start time from the report, not status.startTime: a status time
	// is stored to the second.
	return wideTimes{firstReady: since(slices.MinFunc(ready, time.Time.Compare)), lastReady: since(slices.MaxFunc(ready, time.Time.Compare)),
		start: since(doc.Start), firstSend: since(doc.Start) + late[0], lastSend: since(doc.Start) + late[len(late)-1],
		lateP50: late[len(late)/2], lateP90: late[len(late)*9/10]}
}

// formatPhases lists the phases in the order they were seen.
func formatPhases(p phaseTimes) string {
	type seen struct {
		phase v1alpha1.BenchmarkRunPhase
		at    time.Duration
	}
	var all []seen
	for ph, at := range p {
		all = append(all, seen{ph, at})
	}
	slices.SortFunc(all, func(a, b seen) int { return int(a.at - b.at) })
	out := ""
	for _, s := range all {
		out += fmt.Sprintf("%s %s, ", s.phase, s.at.Round(100*time.Millisecond))
	}
	return out
}

// readyTimes are when each runner of run reported ready, from its shard
// map.
func readyTimes(b *testing.B, c client.Client, run *v1alpha1.BenchmarkRun) []time.Time {
	b.Helper()
	var ready []time.Time
	for i := range int(run.Replicas()) {
		cm := &corev1.ConfigMap{}
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: run.Namespace, Name: protocol.ShardConfigMapName(run.Name, i)}, cm); err != nil {
			b.Fatal(err)
		}
		rep, err := protocol.DecodeShardReport(cm.Data, cm.BinaryData)
		if err != nil {
			b.Fatalf("shard %d of run %s: %v", i, run.Name, err)
		}
		ready = append(ready, rep.Ready)
	}
	return ready
}

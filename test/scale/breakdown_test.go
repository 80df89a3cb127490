package scale_test

import (
	"fmt"
	"math"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
	"time"

	"maps"

	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// phaseHistograms are the run reconcile times by the run's phase
// (spanbench_run_reconcile_phase_seconds).
type phaseHistograms map[string]reconcileHistogram

// reconcilePhases reads every phase's histogram.
func reconcilePhases(tb testing.TB) phaseHistograms {
	tb.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	out := phaseHistograms{}
	for _, mf := range families {
		if mf.GetName() != "spanbench_run_reconcile_phase_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			phase := labelValue(m, "phase")
			out[phase] = histogramWith(tb, mf.GetName(), "phase", phase)
		}
	}
	return out
}

// since is what was observed after before.
func (p phaseHistograms) since(before phaseHistograms) phaseHistograms {
	out := phaseHistograms{}
	for k, h := range p {
		out[k] = h.since(before[k])
	}
	return out
}

// String lists the phases by their total time, longest first.
func (p phaseHistograms) String() string {
	keys := slices.SortedFunc(maps.Keys(p), func(x, y string) int { return int(math.Round(p[y].sum - p[x].sum)) })
	var b strings.Builder
	for _, k := range keys {
		h := p[k]
		if h.count == 0 {
			continue
		}
		var over uint64
		for i, ub := range h.bounds {
			if ub == 0.1 {
				over = h.count - h.cum[i]
			}
		}
		fmt.Fprintf(&b, "\n  %-20s %5d reconciles, total %7.2f s, p50 %6.1f ms, p99 %7.1f ms, mean %6.1f ms, %d over 100 ms",
			k, h.count, h.sum, h.quantile(0.5)*1e3, h.quantile(0.99)*1e3, h.mean()*1e3, over)
	}
	return b.String()
}

// runtimeFigures are this process's scheduling latencies (how long
// runnable goroutines waited for a core), mutex waits and GC CPU.
type runtimeFigures struct {
	sched       *metrics.Float64Histogram
	mutexWait   float64
	gcCPU, user float64
}

var runtimeNames = []string{"/sched/latencies:seconds", "/sync/mutex/wait/total:seconds", "/cpu/classes/gc/total:cpu-seconds", "/cpu/classes/user:cpu-seconds"}

func readRuntimeFigures() runtimeFigures {
	s := make([]metrics.Sample, len(runtimeNames))
	for i, n := range runtimeNames {
		s[i].Name = n
	}
	metrics.Read(s)
	return runtimeFigures{sched: s[0].Value.Float64Histogram(), mutexWait: s[1].Value.Float64(), gcCPU: s[2].Value.Float64(), user: s[3].Value.Float64()}
}

// since is the difference from before.
func (f runtimeFigures) since(before runtimeFigures) runtimeFigures {
	h := &metrics.Float64Histogram{Buckets: f.sched.Buckets, Counts: slices.Clone(f.sched.Counts)}
	for i := range h.Counts {
		h.Counts[i] -= before.sched.Counts[i]
	}
	return runtimeFigures{sched: h, mutexWait: f.mutexWait - before.mutexWait, gcCPU: f.gcCPU - before.gcCPU, user: f.user - before.user}
}

// schedQuantile is the upper bound of the bucket holding quantile q of
// the scheduling latencies.
func (f runtimeFigures) schedQuantile(q float64) time.Duration {
	var total uint64
	for _, c := range f.sched.Counts {
		total += c
	}
	var seen uint64
	for i, c := range f.sched.Counts {
		seen += c
		if float64(seen) >= q*float64(total) {
			return time.Duration(f.sched.Buckets[i+1] * 1e9)
		}
	}
	return 0
}

func (f runtimeFigures) String() string {
	var total, over10ms uint64
	for i, c := range f.sched.Counts {
		total += c
		if f.sched.Buckets[i] >= 0.01 {
			over10ms += c
		}
	}
	return fmt.Sprintf("goroutine scheduling latency p50 %s p99 %s p99.9 %s (%d of %d over 10 ms); mutex wait %.2f s; user CPU %.1f s of which GC %.1f s",
		f.schedQuantile(0.5), f.schedQuantile(0.99), f.schedQuantile(0.999), over10ms, total, f.mutexWait, f.user, f.gcCPU)
}

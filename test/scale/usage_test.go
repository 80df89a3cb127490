package scale_test

import (
	"bufio"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// processCPU is this process's user and system time so far.
func processCPU(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// resetPeakRSS makes /proc/self/status's VmHWM start again from the
// current RSS (Linux: "5" to clear_refs), so that peakRSS is the peak of
// the measured window, not of the benchmarks before it.
func resetPeakRSS(tb testing.TB) {
	tb.Helper()
	// What earlier benchmarks freed goes back to the OS first.
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		tb.Logf("cannot reset the peak RSS (%v); it includes what ran before", err)
	}
}

// peakRSS is this process's VmHWM in MiB.
func peakRSS(tb testing.TB) float64 {
	tb.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb / 1024
		}
	}
	tb.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// reconcileHistogram is controller-runtime's histogram of a controller's
// reconcile times (or its work queue's waits), cumulative counts by upper
// bound, read from its global registry.
type reconcileHistogram struct {
	count  uint64
	sum    float64
	bounds []float64
	cum    []uint64
}

// reconcileTimes reads metric (a histogram) for the benchmarkrun
// controller; label is "controller" or "name" (the work queue's).
func reconcileTimes(tb testing.TB, metric, label string) reconcileHistogram {
	tb.Helper()
	return histogramWith(tb, metric, label, "benchmarkrun")
}

// histogramWith reads the series of metric (a histogram) whose label is
// value, from controller-runtime's global registry.
func histogramWith(tb testing.TB, metric, label, value string) reconcileHistogram {
	tb.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != metric {
			continue
		}
		for _, m := range mf.GetMetric() {
			if labelValue(m, label) != value {
				continue
			}
			h := m.GetHistogram()
			out := reconcileHistogram{count: h.GetSampleCount(), sum: h.GetSampleSum()}
			for _, b := range h.GetBucket() {
				out.bounds = append(out.bounds, b.GetUpperBound())
				out.cum = append(out.cum, b.GetCumulativeCount())
			}
			return out
		}
	}
	return reconcileHistogram{}
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// since is the histogram of what was observed after before.
func (h reconcileHistogram) since(before reconcileHistogram) reconcileHistogram {
	out := reconcileHistogram{count: h.count - before.count, sum: h.sum - before.sum, bounds: h.bounds}
	for i := range h.cum {
		var b uint64
		if i < len(before.cum) {
			b = before.cum[i]
		}
		out.cum = append(out.cum, h.cum[i]-b)
	}
	return out
}

// quantile interpolates linearly within the bucket holding q, as
// PromQL's histogram_quantile does; +Inf beyond the last bound.
func (h reconcileHistogram) quantile(q float64) float64 {
	if h.count == 0 {
		return math.NaN()
	}
	rank := q * float64(h.count)
	lower, below := 0.0, uint64(0)
	for i, ub := range h.bounds {
		if float64(h.cum[i]) >= rank {
			in := h.cum[i] - below
			if in == 0 {
				return ub
			}
			return lower + (ub-lower)*(rank-float64(below))/float64(in)
		}
		lower, below = ub, h.cum[i]
	}
	return math.Inf(1)
}

// mean is the average observation.
func (h reconcileHistogram) mean() float64 {
	if h.count == 0 {
		return math.NaN()
	}
	return h.sum / float64(h.count)
}

// over counts the observations above bound, which must be one of the
// histogram's bucket bounds (to a relative 1e-9: controller-runtime's
// decades are products of floats); any other fails tb.
func (h reconcileHistogram) over(tb testing.TB, bound float64) uint64 {
	tb.Helper()
	for i, ub := range h.bounds {
		if math.Abs(ub-bound) <= 1e-9*bound {
			return h.count - h.cum[i]
		}
	}
	tb.Fatalf("%g is not a bucket bound of the histogram (bounds %v)", bound, h.bounds)
	return 0
}

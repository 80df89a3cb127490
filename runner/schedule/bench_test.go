package schedule

import (
	"context"
	"flag"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/spanbench/spanbench/runner/clock"
)

var (
	benchDuration = flag.Duration("schedule.benchtime", 3*time.Second,
		"length of the scheduled run in BenchmarkDispatch20k*")
	benchGranularity = flag.Duration("schedule.granularity", 0,
		"Config.Granularity in BenchmarkDispatch20k*")
)

// benchRate is the target rate of the dispatch benchmarks, in ops/s.
const benchRate = 20000.0

// BenchmarkDispatch20k runs the real clock at 20,000 ops/s with a no-op
// handler on one P (GOMAXPROCS=1) for -schedule.benchtime (3s) and reports
// the achieved rate over the target, the schedule lag (handler start minus
// Request.Intended) percentiles in µs, heap allocation per request, misses
// and the process CPU use. An idle process is the hard case for timers. Each
// invocation runs one scenario whatever b.N is.
func BenchmarkDispatch20k(b *testing.B) { benchDispatch(b, clock.Real{}, false) }

// BenchmarkDispatch20kGoTimer is BenchmarkDispatch20k with the clock wrapped
// so that Run falls back to Go timers, to show why it uses a timerfd.
func BenchmarkDispatch20kGoTimer(b *testing.B) { benchDispatch(b, wrappedClock{}, false) }

// BenchmarkDispatch20kBusy is BenchmarkDispatch20k with busyHandler, which
// keeps the P about half busy, as a real engine would.
func BenchmarkDispatch20kBusy(b *testing.B) { benchDispatch(b, clock.Real{}, true) }

// BenchmarkDispatch20kBusyGoTimer is BenchmarkDispatch20kBusy on Go timers.
func BenchmarkDispatch20kBusyGoTimer(b *testing.B) { benchDispatch(b, wrappedClock{}, true) }

// lagHandler records each request's schedule lag into a preallocated slice
// indexed by Seq. Every Seq is handled by exactly one worker, so no locks or
// per-worker slices are needed, and Run's return orders the writes before
// the reads. Entries of missed requests stay negative.
type lagHandler struct {
	lags   []time.Duration
	missed uint64 // only touched by the dispatcher goroutine
}

func newLagHandler(n int) *lagHandler {
	h := &lagHandler{lags: make([]time.Duration, n)}
	for i := range h.lags {
		h.lags[i] = -1
	}
	return h
}

func (h *lagHandler) Handle(_ context.Context, _ int, r Request) {
	if r.Seq < uint64(len(h.lags)) {
		h.lags[r.Seq] = time.Since(r.Intended)
	}
}

func (h *lagHandler) Missed(Request) { h.missed++ }

// busyHandler stands in for a real request: about 20µs of CPU (marshalling,
// bookkeeping), then a 1ms blocking wait (the RPC). At 20k ops/s that keeps
// the single P about half busy, so the dispatcher must wake on time while
// other goroutines are runnable, not only when the process is idle.
type busyHandler struct{ *lagHandler }

func (h busyHandler) Handle(ctx context.Context, w int, r Request) {
	h.lagHandler.Handle(ctx, w, r)
	for t := time.Now(); time.Since(t) < 20*time.Microsecond; {
	}
	time.Sleep(time.Millisecond)
}

func benchDispatch(b *testing.B, clk clock.Clock, busy bool) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	cfg := Config{
		Profile:     Profile{{From: benchRate, To: benchRate, Duration: *benchDuration}},
		MaxInFlight: 64,
		Granularity: *benchGranularity,
	}
	h := newLagHandler(int(cfg.Profile.Ops()) + 1)
	var handler Handler = h
	if busy {
		handler = busyHandler{h}
		cfg.MaxInFlight = 256 // about 20 requests sit in their 1ms wait at a time
	}

	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0, wall0 := cpuTime(), time.Now()
	b.ResetTimer()
	st, err := Run(context.Background(), cfg, clk, handler)
	b.StopTimer()
	cpu, wall := cpuTime()-cpu0, time.Since(wall0)
	runtime.ReadMemStats(&m1)

	if err != nil {
		b.Fatalf("Run: %v", err)
	}
	if st.Sent+st.Missed != st.Scheduled || h.missed != st.Missed {
		b.Fatalf("inconsistent stats %+v (handler saw %d misses)", st, h.missed)
	}
	reportLag(b, h.lags[:st.Scheduled])
	b.ReportMetric(float64(st.Missed), "missed")
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(st.Scheduled), "alloc-B/req")
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(st.Scheduled), "allocs/req")
	if cpu > 0 {
		b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu-%")
	}
}

// reportLag reports the achieved send rate over the target and the lag
// percentiles of the handled requests (lags[seq] >= 0).
func reportLag(b *testing.B, lags []time.Duration) {
	var sorted []time.Duration
	first, last := -1, -1
	for seq, l := range lags {
		if l >= 0 {
			sorted = append(sorted, l)
			if first < 0 {
				first = seq
			}
			last = seq
		}
	}
	if len(sorted) < 2 {
		b.Fatalf("only %d requests handled", len(sorted))
	}
	// Request seq was intended at seq/benchRate and handled lag later, so
	// the handled requests were spread over this span.
	span := time.Duration(float64(last-first)/benchRate*1e9) + lags[last] - lags[first]
	b.ReportMetric(float64(len(sorted)-1)/span.Seconds()/benchRate, "rate/target")
	slices.Sort(sorted)
	pct := func(p float64) float64 { return float64(sorted[int(p*float64(len(sorted)-1))]) / 1e3 }
	b.ReportMetric(pct(0.50), "lag-p50-µs")
	b.ReportMetric(pct(0.99), "lag-p99-µs")
	b.ReportMetric(pct(0.999), "lag-p99.9-µs")
	b.ReportMetric(pct(1), "lag-max-µs")
}

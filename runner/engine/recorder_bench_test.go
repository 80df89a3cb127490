package engine

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/spanbench/spanbench/result/operation"
)

// lognormalLatencies returns n latencies drawn from a lognormal
// distribution with median median and shape sigma, from a fixed seed.
func lognormalLatencies(n int, median time.Duration, sigma float64) []time.Duration {
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(float64(median) * math.Exp(sigma*rng.NormFloat64()))
	}
	return out
}

// BenchmarkRecorderRecord measures recording one successful operation, the
// engine's per-operation cost, with latencies around 5 ms.
func BenchmarkRecorderRecord(b *testing.B) {
	lats := lognormalLatencies(1<<16, 5*time.Millisecond, 0.5)
	r := newOpRecorder("read")
	out := operation.Outcome{Rows: 1}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		lat := lats[i&(len(lats)-1)]
		r.record(i&7, 0, codes.OK, lat, lat-lat/8, out)
		i++
	}
}

// BenchmarkRecorderInterval measures one interval of 20,000 operations
// over 8 workers: recording them and draining the interval.
func BenchmarkRecorderInterval(b *testing.B) {
	lats := lognormalLatencies(20_000, 5*time.Millisecond, 0.5)
	r := newOpRecorder("read")
	out := operation.Outcome{Rows: 1}
	b.ReportAllocs()
	for b.Loop() {
		for i, lat := range lats {
			r.record(i&7, 0, codes.OK, lat, lat-lat/8, out)
		}
		if _, err := r.drain(0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecorderHeld reports the live heap one operation's recorder
// holds after two intervals of 100,000 lognormal latencies around 5 ms
// recorded by 64 workers (so every stripe, the spare and the sum have
// seen them).
func BenchmarkRecorderHeld(b *testing.B) {
	lats := lognormalLatencies(100_000, 5*time.Millisecond, 0.5)
	for b.Loop() {
		held := recorderHeld(func(r *opRecorder) {
			for range 2 {
				for i, lat := range lats {
					r.record(i&63, 0, codes.OK, lat, lat-lat/8, operation.Outcome{Rows: 1})
				}
				if _, err := r.drain(0); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.ReportMetric(float64(held), "held-B")
		b.ReportMetric(float64(2*runtime.GOMAXPROCS(0)), "stripes")
	}
}

// recorderHeld returns the live heap a new recorder holds after fill.
func recorderHeld(fill func(r *opRecorder)) int64 {
	before := liveHeap()
	r := newOpRecorder("read")
	fill(r)
	held := liveHeap() - before
	runtime.KeepAlive(r)
	return held
}

// liveHeap is the heap in use after collecting garbage; twice, so that
// what sync.Pools held before the first is gone too.
func liveHeap() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/spanbench/spanbench/result/operation"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/runner/schedule"
)

// BenchmarkStreamsNoop compares one stream with two streams of half its
// rate each (the same total rate, the same no-op operation, one core),
// both through RunStreams: the engine's CPU per operation, each stream's
// achieved rate against its own target, and the lag (intended send to
// completion, here all scheduling and recording delay) of the worse
// stream. Two streams are two schedulers, each with its own workers
// claiming its arrivals and waking at most once per DispatchGranularity
// apart, and two sets of recorders; this measures
// what that costs at 20,000 ops/s (arrivals denser than the granularity)
// and at 2,000 ops/s (sparser, as the seeds' 800/s online streams).
func BenchmarkStreamsNoop(b *testing.B) {
	for _, total := range []float64{20_000, 2_000} {
		for _, n := range []int{1, 2} {
			b.Run(fmt.Sprintf("rate=%g/streams=%d", total, n), func(b *testing.B) { benchStreams(b, n, total) })
		}
	}
}

func benchStreams(b *testing.B, n int, total float64) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	noop := operation.Func(func(context.Context, *rand.Rand) (operation.Outcome, error) {
		return operation.Outcome{Rows: 1}, nil
	})
	d := *benchDuration
	cfg := engine.Config{Run: "bench", Spec: recordedSpec(b, "op0"), Interval: 10 * time.Second, Shards: 1}
	rate := total / float64(n)
	streams := make([]engine.Stream, n)
	for i := range streams {
		streams[i] = engine.Stream{Name: fmt.Sprint("s", i),
			Operations: []engine.Operation{{Name: "op0", Weight: 1, Op: noop}},
			Load:       engine.Load{Profile: schedule.Profile{{From: rate, To: rate, Duration: d}}, MaxInFlight: 512}}
	}
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		cpu0 := cpuTime()
		res, err := engine.RunStreams(context.Background(), cfg, streams)
		if err != nil {
			b.Fatal(err)
		}
		cpu := cpuTime() - cpu0
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		var ops, missed float64
		worstRate, p50, p99, p999 := 2.0, 0.0, 0.0, 0.0
		for _, r := range res {
			doc := r.Document
			ok := float64(doc.Overall.OK)
			ops += ok
			missed += float64(doc.Shards[0].Missed)
			worstRate = min(worstRate, ok/d.Seconds()/rate)
			p50 = max(p50, float64(doc.Overall.Latency.P50))
			p99 = max(p99, float64(doc.Overall.Latency.P99))
			p999 = max(p999, float64(doc.Overall.Latency.P999))
		}
		b.ReportMetric(ops/d.Seconds()/total, "achieved/target")
		b.ReportMetric(worstRate, "worst-stream-achieved/target")
		b.ReportMetric(p50, "lag-p50-µs")
		b.ReportMetric(p99, "lag-p99-µs")
		b.ReportMetric(p999, "lag-p99.9-µs")
		b.ReportMetric(missed, "missed")
		b.ReportMetric(float64(cpu)/float64(time.Second)/d.Seconds(), "cpu-cores")
		b.ReportMetric(float64(cpu.Nanoseconds())/1000/ops, "cpu-µs/op")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/ops, "alloc-B/op")
		b.ReportMetric(float64(after.HeapInuse)/(1<<20), "heap-MiB")
	}
}

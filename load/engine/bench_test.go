package engine_test

import (
	"context"
	"flag"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/spanbench/spanbench/load/engine"
	"github.com/spanbench/spanbench/load/operation"
)

var benchDuration = flag.Duration("engine.benchtime", 5*time.Second, "how long each engine benchmark runs its load")

// BenchmarkEngineNoop20k measures the engine itself (scheduler, recording,
// intervals) at 20,000 ops/s on one core against an operation that does
// nothing: achieved rate vs target, the lag from intended to completed time
// (here all scheduling and recording delay), and memory.
func BenchmarkEngineNoop20k(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const target = 20_000
	noop := operation.Func(func(context.Context, *rand.Rand) (operation.Outcome, error) {
		return operation.Outcome{Rows: 1}, nil
	})
	cfg := noopConfig(b, target, *benchDuration, noop)
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		cpu0 := cpuTime()
		doc, err := engine.Run(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		ops := float64(doc.Overall.OK)
		b.ReportMetric(ops/benchDuration.Seconds()/target, "achieved/target")
		b.ReportMetric(float64(doc.Overall.Latency.P50), "lag-p50-µs")
		b.ReportMetric(float64(doc.Overall.Latency.P99), "lag-p99-µs")
		b.ReportMetric(float64(doc.Overall.Latency.P999), "lag-p99.9-µs")
		b.ReportMetric(float64(doc.Shards[0].Missed), "missed")
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Second)/benchDuration.Seconds(), "cpu-cores")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/ops, "alloc-B/op")
		b.ReportMetric(float64(after.HeapInuse)/(1<<20), "heap-MiB")
		b.ReportMetric(float64(after.Sys)/(1<<20), "sys-MiB")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

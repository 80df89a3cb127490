package engine_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spanbench/spanbench/result/operation"
	"github.com/spanbench/spanbench/runner/engine"
)

var (
	benchDuration = flag.Duration("engine.benchtime", 5*time.Second, "how long each engine benchmark runs its load")
	waitRates     = flag.String("engine.waitrates", "1500,5000", "rates of BenchmarkEngineWaiting1ms, comma-separated")
)

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

// BenchmarkEngineWaiting1ms measures what the engine costs per operation
// in the open-loop mode users run, at 1,500 and 5,000 ops/s, against an
// operation that only waits 1 ms (a stand-in for an RPC's round trip that
// costs no CPU): the process's CPU and system time and its voluntary and
// involuntary context switches per operation. Everything counted is the
// engine's (scheduling, hand-offs, recording) plus the operation's one Go
// timer, so before/after comparisons of the scheduler show here without the
// client's and the emulator's noise of internal/openloop.
func BenchmarkEngineWaiting1ms(b *testing.B) {
	wait := operation.Func(func(context.Context, *rand.Rand) (operation.Outcome, error) {
		time.Sleep(time.Millisecond)
		return operation.Outcome{Rows: 1}, nil
	})
	for f := range strings.SplitSeq(*waitRates, ",") {
		rate, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || rate <= 0 {
			b.Fatalf("-engine.waitrates %q: want positive numbers", *waitRates)
		}
		b.Run(fmt.Sprintf("rate=%g", rate), func(b *testing.B) {
			cfg := noopConfig(b, rate, *benchDuration, wait)
			for b.Loop() {
				var r0, r1 syscall.Rusage
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
				doc, err := engine.Run(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
				ops := float64(doc.Overall.OK)
				sys := time.Duration(r1.Stime.Nano() - r0.Stime.Nano())
				cpu := time.Duration(r1.Utime.Nano()-r0.Utime.Nano()) + sys
				b.ReportMetric(float64(cpu)/float64(time.Microsecond)/ops, "cpu-µs/op")
				b.ReportMetric(float64(sys)/float64(time.Microsecond)/ops, "sys-µs/op")
				b.ReportMetric(float64(r1.Nvcsw-r0.Nvcsw)/ops, "vcsw/op")
				b.ReportMetric(float64(r1.Nivcsw-r0.Nivcsw)/ops, "ivcsw/op")
				b.ReportMetric(float64(doc.Overall.Latency.P50), "latency-p50-µs")
				b.ReportMetric(float64(doc.Shards[0].Missed), "missed")
			}
		})
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

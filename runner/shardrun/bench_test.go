package shardrun_test

import (
	"context"
	"flag"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/runner/shardrun"
	"github.com/spanbench/spanbench/spanner/workload"
)

var benchDuration = flag.Duration("engine.benchtime", 5*time.Second, "how long each engine benchmark runs its load")

// BenchmarkClientCPUPerRead compares the client CPU of one stale point read
// through the engine with a bare loop calling the same client method, both
// with 8 concurrent callers for the same time against one fresh emulator.
// The ratio is the engine's overhead (goal: at most 1.10).
func BenchmarkClientCPUPerRead(b *testing.B) {
	const workers = 8
	rows, conc := int64(1000), int32(workers)
	stale := &v1alpha1.StalenessSpec{Exact: &metav1.Duration{Duration: 15 * time.Second}}
	spec := &v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadYCSB, Dataset: v1alpha1.DatasetSpec{Rows: &rows},
		Operations: []v1alpha1.OperationSpec{{Type: v1alpha1.OpRead, Weight: 1, Staleness: stale}},
		Load:       v1alpha1.LoadSpec{Concurrency: &conc}, Duration: &metav1.Duration{Duration: *benchDuration}}
	*spec = spec.Resolved()
	s := sessiontest.Start(b, spec)
	cfg, err := shardrun.Config("bench", spec, s, 0, 1)
	if err != nil {
		b.Fatal(err)
	}
	// A read 15 s stale sees the dataset only 15 s after it was loaded:
	// sooner, both sides would read the empty snapshot before the load
	// (NotFound, cheaper than a row), as spanbench run waits for it too.
	time.Sleep(spec.StaleReadsSeeDataAfter() + v1alpha1.StalenessMargin)
	for b.Loop() {
		bare := measureCPU(func() uint64 { return bareReads(s.Client, workers, *benchDuration, rows) })
		eng := measureCPU(func() uint64 {
			// The caller sets the start (shardrun.Shard): without one the
			// engine's intervals count from the zero time and hold nothing.
			cfg.Start = time.Now()
			doc, err := engine.Run(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			return doc.Overall.OK + doc.Overall.NotFound + doc.Overall.ErrorCount() // every call, as bareReads counts
		})
		b.ReportMetric(bare.perOp.Seconds()*1e6, "bare-cpu-µs/op")
		b.ReportMetric(eng.perOp.Seconds()*1e6, "engine-cpu-µs/op")
		b.ReportMetric(eng.perOp.Seconds()/bare.perOp.Seconds(), "engine/bare")
		b.ReportMetric(float64(bare.ops)/benchDuration.Seconds(), "bare-ops/s")
		b.ReportMetric(float64(eng.ops)/benchDuration.Seconds(), "engine-ops/s")
	}
}

type cpuSample struct {
	ops   uint64
	perOp time.Duration
}

func measureCPU(run func() uint64) cpuSample {
	runtime.GC()
	c0 := cpuTime()
	ops := run()
	return cpuSample{ops: ops, perOp: (cpuTime() - c0) / time.Duration(max(ops, 1))}
}

// bareReads is the baseline: the same Read API call the engine's Read
// operation makes, with the same options, in a plain loop.
func bareReads(c *spanner.Client, workers int, d time.Duration, rows int64) uint64 {
	var n atomic.Uint64
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	cols := []string{"id", "field0", "field1", "field2", "field3", "field4", "field5", "field6", "field7", "field8", "field9"}
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 9))
			ctx := context.Background()
			for time.Now().Before(deadline) {
				key := spanner.Key{workload.YCSBKey(rng.Int64N(rows))}
				iter := c.Single().WithTimestampBound(spanner.ExactStaleness(15*time.Second)).
					ReadWithOptions(ctx, "usertable", key, cols, &spanner.ReadOptions{RequestTag: "spanbench/bench/read"})
				_ = iter.Do(func(*spanner.Row) error { return nil })
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	return n.Load()
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

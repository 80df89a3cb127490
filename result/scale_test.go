package result

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/internal/heappeak"
	"github.com/spanbench/spanbench/result/histogram"
)

// The seeds' scale (issue 11): a 30-minute run at the default 10 s interval
// with 10 operations, each interval histogram holding 50,000 samples
// lognormal around 5 ms (log-sd 0.5): a 30,000 req/s test over a few runners.
const (
	denseOps       = 10
	denseIntervals = 180
	denseSamples   = 50_000
)

// densePool is a pool of distinct dense encoded histograms; shards draw
// their histograms from it so that building 256 shards costs little while
// every decode and merge does the full work.
type densePool []string

func newDensePool(tb testing.TB, n int) densePool {
	tb.Helper()
	pool := make(densePool, n)
	for i := range pool {
		rng := rand.New(rand.NewPCG(uint64(i), 5))
		h := histogram.New()
		for range denseSamples {
			_ = h.RecordValue(histogram.Micros(time.Duration(5000 * math.Exp(0.5*rng.NormFloat64()) * float64(time.Microsecond))))
		}
		s, err := histogram.Encode(h)
		if err != nil {
			tb.Fatal(err)
		}
		pool[i] = s
	}
	return pool
}

// denseSpec is a resolved spec with denseOps read operations.
func denseSpec(tb testing.TB) Spec {
	tb.Helper()
	var ops []string
	for i := range denseOps {
		ops = append(ops, fmt.Sprintf(`{"name":"op%d","type":"Read","weight":1}`, i))
	}
	s, err := NewSpec([]byte(`{"type":"YCSB","operations":[` + strings.Join(ops, ",") +
		`],"load":{"rate":30000},"duration":"30m0s","warmUp":{"mode":"Fixed","duration":"1m0s"}}`))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// denseShard is shard i of count of a dense run of the given length, as a
// runner reports it (without its derived totals, which a merge ignores).
func (p densePool) shard(spec Spec, i, count, intervals int) *Document {
	d := &Document{SchemaVersion: SchemaVersion, Run: "dense", Spec: spec, Start: t0,
		End: t0.Add(time.Duration(intervals) * 10 * time.Second), IntervalSeconds: 10,
		Shards: []Shard{{Index: i, Count: count}}}
	for in := range intervals {
		interval := Interval{Index: in, TargetRate: 30_000 / float64(count)}
		for op := range denseOps {
			k := i*7919 + in*denseOps + op
			interval.Operations = append(interval.Operations, IntervalOperation{
				Name: fmt.Sprintf("op%d", op), Counts: Counts{OK: denseSamples},
				Histograms: Histograms{LatencyHistogram: p[k%len(p)], ServiceHistogram: p[(k+len(p)/2)%len(p)]},
			})
		}
		d.Intervals = append(d.Intervals, interval)
	}
	return d
}

// mergeDense merges shards dense shards of intervals intervals one at a
// time, each built just before it is added, as the controller decodes each
// shard's report just before adding it. checked merges them as the
// controller does (NewCheckedMerger: each shard checked against the run and
// its histograms checked as they are added, and taken back out if refused).
func mergeDense(tb testing.TB, pool densePool, spec Spec, shards, intervals int, checked bool) *Document {
	tb.Helper()
	m := NewMerger()
	if checked {
		m = NewCheckedMerger(Expect{Run: "dense", Spec: spec, Interval: 10 * time.Second, Duration: 30 * time.Minute,
			Overrun: time.Minute, Start: t0, Skew: time.Minute, Shard: -1, Shards: shards, HistogramMemory: 96 << 20})
	}
	for i := range shards {
		d := pool.shard(spec, i, shards, intervals)
		d.Shards[0].Started, d.Shards[0].Ended = d.Start, d.End
		if err := m.Add(d); err != nil {
			tb.Fatal(err)
		}
	}
	d, err := m.Result()
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// BenchmarkMerge256DenseShards merges 256 dense 30-minute 10-operation
// shards (issue 11's case) and reports the peak heap, with the default GC
// and under a 128 MiB memory limit (as with GOMEMLIMIT in a manager limited
// to 256 MiB), unchecked and checked as the controller merges.
func BenchmarkMerge256DenseShards(b *testing.B) {
	pool, spec := newDensePool(b, 64), denseSpec(b)
	for _, c := range []struct {
		name    string
		limit   int64
		checked bool
	}{{"gc=default", math.MaxInt64, false}, {"memlimit=128MiB", 128 << 20, false}, {"checked/memlimit=128MiB", 128 << 20, true}} {
		b.Run(c.name, func(b *testing.B) {
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(c.limit))
			b.ReportAllocs()
			for b.Loop() {
				peak := heappeak.Start()
				d := mergeDense(b, pool, spec, 256, denseIntervals, c.checked)
				b.ReportMetric(peak.MiB(), "peak-heap-MiB")
				if d.Overall.OK != 256*denseOps*(denseIntervals-6)*denseSamples {
					b.Fatalf("merged %d operations", d.Overall.OK)
				}
			}
		})
	}
}

// BenchmarkFinalizeDenseShard finalizes one dense 30-minute 10-operation
// shard and reports its encoded size, as JSON and gzipped.
func BenchmarkFinalizeDenseShard(b *testing.B) {
	pool, spec := newDensePool(b, 64), denseSpec(b)
	d := pool.shard(spec, 0, 1, denseIntervals)
	b.ReportAllocs()
	for b.Loop() {
		peak := heappeak.Start()
		if err := Finalize(d); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(peak.MiB(), "peak-heap-MiB")
	}
	js, err := json.Marshal(d)
	if err != nil {
		b.Fatal(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, _ = w.Write(js)
	_ = w.Close()
	b.ReportMetric(float64(len(js))/(1<<20), "json-MiB")
	b.ReportMetric(float64(gz.Len())/(1<<20), "gzip-MiB")
}

// TestMergeOfDenseShardsStaysUnderAMemoryCap: merging dense shards holds
// one compact histogram per interval, operation and kind, and one shard at
// a time. Holding every shard's intervals decoded at full geometry, as
// merges did, needs over a gigabyte for these 8 shards of 60 intervals.
func TestMergeOfDenseShardsStaysUnderAMemoryCap(t *testing.T) {
	const limit = 128 << 20
	pool, spec := newDensePool(t, 16), denseSpec(t)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(limit))
	peak := heappeak.Start()
	d := mergeDense(t, pool, spec, 8, 60, false)
	if got := peak.MiB(); got > limit>>20 {
		t.Errorf("merging 8 dense shards of 60 intervals peaked at %.0f MiB of heap; want under %d MiB", got, limit>>20)
	}
	if want := uint64(8 * denseOps * (60 - 6) * denseSamples); d.Overall.OK != want {
		t.Errorf("merged %d operations, want %d", d.Overall.OK, want)
	}
}

// TestCheckedMergeOfDenseShardsStaysUnderAMemoryCap: the checked merge the
// controller uses (each shard's histograms checked as they are added, and
// taken back out if it is refused, so that it changes nothing) stays under the
// same cap, and accepts every dense shard.
func TestCheckedMergeOfDenseShardsStaysUnderAMemoryCap(t *testing.T) {
	const limit = 128 << 20
	pool, spec := newDensePool(t, 16), denseSpec(t)
	e := Expect{Run: "dense", Spec: spec, Interval: 10 * time.Second, Duration: 30 * time.Minute, Overrun: time.Minute,
		Start: t0, Skew: time.Minute, Shard: -1, Shards: 8, HistogramMemory: 96 << 20}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(limit))
	peak := heappeak.Start()
	m := NewCheckedMerger(e)
	for i := range 8 {
		d := pool.shard(spec, i, 8, 60)
		d.Shards[0].Started, d.Shards[0].Ended = d.Start, d.End
		if err := m.Add(d); err != nil {
			t.Fatalf("dense shard %d refused: %v", i, err)
		}
	}
	d, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	if got := peak.MiB(); got > limit>>20 {
		t.Errorf("the checked merge of 8 dense shards of 60 intervals peaked at %.0f MiB of heap; want under %d MiB", got, limit>>20)
	} else {
		t.Logf("peak heap %.0f MiB", got)
	}
	if want := uint64(8 * denseOps * (60 - 6) * denseSamples); d.Overall.OK != want {
		t.Errorf("merged %d operations, want %d", d.Overall.OK, want)
	}
}

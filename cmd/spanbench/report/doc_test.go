package report

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
)

var t0 = time.Date(2026, 11, 21, 3, 0, 0, 0, time.UTC)

// testRun describes a generated result document.
type testRun struct {
	name string
	ops  []string
	// warmUp is the spec's warmUp JSON ("" for none).
	warmUp string
	// intervals of 5 s each; the first quarter ramps up (throughput
	// climbs, latency falls), the way a fresh database warms up.
	intervals int
	// rate is the settled operations per second of the first operation;
	// the k-th runs at rate/(k+1), with a median latency (1+k/2) times
	// baseMicros.
	rate int
	// baseMicros is the settled median latency.
	baseMicros int64
	seed       uint64
}

// document builds the result a runner would write for r: per interval
// and operation, histograms of generated latencies (log-normal-ish with a
// tail), then Finalize derives the warm-up and the totals.
func (r testRun) document(t *testing.T) *result.Document {
	t.Helper()
	ops := ""
	for i, o := range r.ops {
		if i > 0 {
			ops += ","
		}
		ops += fmt.Sprintf(`{"name":%q,"type":"Read","weight":1}`, o)
	}
	wu := r.warmUp
	if wu == "" {
		wu = `{"mode":"None"}`
	}
	spec, err := result.NewSpec(fmt.Appendf(nil, `{"type":"YCSB","operations":[%s],"load":{"rate":%d},"warmUp":%s}`, ops, r.target(), wu))
	if err != nil {
		t.Fatal(err)
	}
	const step = 5.0
	d := &result.Document{
		SchemaVersion: result.SchemaVersion, Run: r.name, Spec: spec,
		Target:          result.Target{Endpoint: "emulator", Project: "p", Instance: "i", Database: "d"},
		Environment:     result.Environment{SpanbenchVersion: "test", ClientVersion: "v1", GoVersion: "go1.26"},
		Start:           t0,
		End:             t0.Add(time.Duration(float64(r.intervals) * step * float64(time.Second))),
		IntervalSeconds: step,
		Shards:          []result.Shard{{Index: 0, Count: 1, Started: t0, Ended: t0.Add(time.Minute)}},
	}
	rng := rand.New(rand.NewPCG(r.seed, 1))
	ramp := max(1, r.intervals/4)
	for i := range r.intervals {
		in := result.Interval{Index: i, TargetRate: float64(r.target())}
		warm := min(1, float64(i+1)/float64(ramp))
		for k, name := range r.ops {
			lat, svc := histogram.New(), histogram.New()
			n := int(float64(r.rate/(k+1)) * step * warm)
			base := float64(r.baseMicros) * (1 + float64(k)/2) / warm
			for range n {
				v := base * (0.6 + rng.ExpFloat64()*0.4)
				if rng.IntN(200) == 0 {
					v *= 8 // a tail
				}
				record(t, svc, int64(v*0.9))
				record(t, lat, int64(v))
			}
			op, err := result.NewIntervalOperation(name, result.Counts{OK: uint64(n), Rows: uint64(n)}, lat, svc, histogram.New())
			if err != nil {
				t.Fatal(err)
			}
			in.Operations = append(in.Operations, op)
		}
		d.Intervals = append(d.Intervals, in)
	}
	if err := result.Finalize(d); err != nil {
		t.Fatal(err)
	}
	return d
}

// target is the run's target rate over all operations.
func (r testRun) target() int {
	sum := 0
	for k := range r.ops {
		sum += r.rate / (k + 1)
	}
	return sum
}

func record(t *testing.T, h *hdr.Histogram, micros int64) {
	t.Helper()
	if err := h.RecordValue(max(1, micros)); err != nil {
		t.Fatal(err)
	}
}

// warmingRun is a run whose Auto warm-up ends after the ramp.
func warmingRun(name string, ops ...string) testRun {
	return testRun{name: name, ops: ops, intervals: 24, rate: 200, baseMicros: 4000, seed: 7,
		warmUp: `{"mode":"Auto","window":3,"tolerancePercent":15,"max":"60s"}`}
}

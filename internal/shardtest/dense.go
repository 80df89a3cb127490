package shardtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/protocol"
)

// The seeds' scale (issue 11): a 30-minute run at the default 10 s interval
// with 10 operations, each interval's histograms holding DenseSamples
// latencies lognormal around 5 ms (log-sd 0.5): a 30,000 req/s test over a
// few runners. Such a shard result is about 21 MiB of JSON, 11 MiB gzipped.
const (
	DenseOperations = 10
	DenseDuration   = 30 * time.Minute
	DenseSamples    = 50_000
	denseInterval   = 10 * time.Second
	denseWarmUp     = time.Minute
)

// DensePool is a pool of distinct dense encoded histograms; shards draw
// their histograms from it, so that building a dense shard costs little
// while every decode and merge does the full work.
type DensePool []string

// NewDensePool makes n distinct dense histograms.
func NewDensePool(n int) DensePool {
	pool := make(DensePool, n)
	for i := range pool {
		rng := rand.New(rand.NewPCG(uint64(i), 5))
		h := histogram.New()
		for range DenseSamples {
			_ = h.RecordValue(histogram.Micros(time.Duration(5000 * math.Exp(0.5*rng.NormFloat64()) * float64(time.Microsecond))))
		}
		s, err := histogram.Encode(h)
		if err != nil {
			panic(fmt.Sprintf("encoding a histogram: %v", err))
		}
		pool[i] = s
	}
	return pool
}

// DenseWorkload is the resolved workload of a dense run: DenseOperations
// reads named op0, op1, ..., for duration (DenseDuration at the seeds'
// scale) in 10 s intervals, the first minute a Fixed warm-up. Its rate,
// 1,000,000/s, lets up to 20 runners each count a dense shard's 50,000
// operations a second (DenseSamples per operation and interval) without
// counting more than their schedules produced.
func DenseWorkload(duration time.Duration) v1alpha1.WorkloadSpec {
	rate, rows := int32(1_000_000), int64(1000)
	w := v1alpha1.WorkloadSpec{
		Type: v1alpha1.WorkloadYCSB, Dataset: v1alpha1.DatasetSpec{Rows: &rows},
		Load:     v1alpha1.LoadSpec{Rate: &rate},
		Duration: &metav1.Duration{Duration: duration},
		Interval: &metav1.Duration{Duration: denseInterval},
		WarmUp:   &v1alpha1.WarmUpSpec{Mode: v1alpha1.WarmUpFixed, Duration: &metav1.Duration{Duration: denseWarmUp}},
	}
	for i := range DenseOperations {
		w.Operations = append(w.Operations, v1alpha1.OperationSpec{Name: fmt.Sprintf("op%d", i), Type: v1alpha1.OpRead, Weight: 1})
	}
	return w.Resolved()
}

// latency and service are the pool's histograms of shard i's interval in,
// operation op.
func (p DensePool) latency(i, in, op int) string { return p[(i*7919+in*DenseOperations+op)%len(p)] }
func (p DensePool) service(i, in, op int) string {
	return p[(i*7919+in*DenseOperations+op+len(p)/2)%len(p)]
}

// Shard is shard i of n of a dense run of w from start, as its runner
// writes it: every interval, every operation with DenseSamples OK
// latencies, finalized.
func (p DensePool) Shard(run string, w v1alpha1.WorkloadSpec, start time.Time, i, n int) *result.Document {
	spec, err := protocol.RecordedSpec(&w)
	if err != nil {
		panic(err) // a resolved workload always marshals
	}
	intervals := int(w.TotalDuration() / w.Interval.Duration)
	end := start.Add(w.TotalDuration())
	rate := float64(*w.Load.Rate) / float64(n)
	d := &result.Document{
		SchemaVersion: result.SchemaVersion, Run: run, Spec: spec, Start: start, End: end,
		IntervalSeconds: w.Interval.Seconds(),
		Target:          result.Target{Endpoint: "emulator", Project: "p", Instance: "i", Database: "d"},
		Environment:     result.Environment{SpanbenchVersion: "test", GoVersion: "go1.25"},
		Shards:          []result.Shard{{Index: i, Count: n, Started: start, Ended: end, TargetRate: rate}},
	}
	for in := range intervals {
		interval := result.Interval{Index: in, TargetRate: rate}
		for op := range DenseOperations {
			interval.Operations = append(interval.Operations, result.IntervalOperation{
				Name: fmt.Sprintf("op%d", op), Counts: result.Counts{OK: DenseSamples, Rows: DenseSamples},
				Histograms: result.Histograms{LatencyHistogram: p.latency(i, in, op), ServiceHistogram: p.service(i, in, op)},
			})
		}
		d.Intervals = append(d.Intervals, interval)
	}
	if err := result.Finalize(d); err != nil {
		panic(fmt.Sprintf("finalizing a dense shard: %v", err))
	}
	return d
}

// Truth is, per operation name and "overall", one histogram fed every
// latency of shards 0 to n-1 of a dense run after its warm-up: what their
// merge must report, computed by the HDR library's own merge.
func (p DensePool) Truth(w v1alpha1.WorkloadSpec, n int) map[string]*hdr.Histogram {
	decoded := make([]*hdr.Histogram, len(p))
	for k, s := range p {
		h, err := histogram.Decode(s)
		if err != nil {
			panic(fmt.Sprintf("decoding the pool: %v", err))
		}
		decoded[k] = h
	}
	at := func(s string) *hdr.Histogram {
		for k := range p {
			if p[k] == s {
				return decoded[k]
			}
		}
		panic("not a pool histogram")
	}
	truth := map[string]*hdr.Histogram{"overall": histogram.New()}
	warm := int(w.WarmUp.Duration.Duration / w.Interval.Duration)
	for i := range n {
		for in := warm; in < int(w.TotalDuration()/w.Interval.Duration); in++ {
			for op := range DenseOperations {
				name := fmt.Sprintf("op%d", op)
				if truth[name] == nil {
					truth[name] = histogram.New()
				}
				h := at(p.latency(i, in, op))
				truth[name].Merge(h)
				truth["overall"].Merge(h)
			}
		}
	}
	return truth
}

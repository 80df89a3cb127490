// Package shardtest builds shard results as a spanbench runner writes them
// (valid against their run), and hostile variants of them, for the tests
// and fuzzers of the decode and merge paths. It is linked into tests only.
package shardtest

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/protocol"
)

// Rate is Workload's rate: enough for up to 50 runners' shards (Shard
// counts at most 16 operations an interval) within their schedules.
const Rate = 1000

// Workload is a small resolved YCSB workload: reads and updates at Rate
// for the given duration, in 1 s intervals.
func Workload(duration time.Duration) v1alpha1.WorkloadSpec {
	rate := int32(Rate)
	w := v1alpha1.WorkloadSpec{
		Type: v1alpha1.WorkloadYCSB,
		Operations: []v1alpha1.OperationSpec{
			{Type: v1alpha1.OpRead, Weight: 3}, {Type: v1alpha1.OpUpdate, Weight: 1},
		},
		Load:     v1alpha1.LoadSpec{Rate: &rate},
		Duration: &metav1.Duration{Duration: duration},
		Interval: &metav1.Duration{Duration: time.Second},
	}
	return w.Resolved()
}

// Shard is shard i of n of run, as its runner writes it: every interval of
// w from start, each operation with a few latencies and an error, its
// histograms holding exactly its counts.
func Shard(run string, w v1alpha1.WorkloadSpec, start time.Time, i, n int) *result.Document {
	spec, err := protocol.RecordedSpec(&w)
	if err != nil {
		panic(err) // a resolved workload always marshals
	}
	interval := w.Interval.Duration
	// The last interval is partial when the duration is not a multiple.
	intervals := int((w.TotalDuration() + interval - 1) / interval)
	end := start.Add(w.TotalDuration())
	d := &result.Document{
		SchemaVersion: result.SchemaVersion, Run: run, Spec: spec, Start: start, End: end,
		IntervalSeconds: interval.Seconds(),
		Target:          result.Target{Endpoint: "emulator", Project: "p", Instance: "i", Database: "d"},
		Environment:     result.Environment{SpanbenchVersion: "test", GoVersion: "go1.25"},
		Shards:          []result.Shard{{Index: i, Count: n, Started: start, Ended: end, TargetRate: Rate / float64(n)}},
	}
	for in := range intervals {
		interval := result.Interval{Index: in, TargetRate: Rate / float64(n)}
		for k, op := range w.Operations {
			lat, svc, errs := histogram.New(), histogram.New(), histogram.New()
			for s := range 5 + in%3 {
				v := int64(1000 * (1 + s + k + i))
				_ = lat.RecordValue(v)
				_ = svc.RecordValue(v / 2)
			}
			_ = errs.RecordValue(50_000)
			c := result.Counts{OK: uint64(lat.TotalCount()), Rows: uint64(lat.TotalCount()), Errors: map[string]uint64{"Unavailable": 1}}
			o, err := result.NewIntervalOperation(op.Name, c, lat, svc, errs)
			if err != nil {
				panic(fmt.Sprintf("encoding a histogram: %v", err))
			}
			interval.Operations = append(interval.Operations, o)
		}
		d.Intervals = append(d.Intervals, interval)
	}
	if err := result.Finalize(d); err != nil {
		panic(fmt.Sprintf("finalizing a shard: %v", err))
	}
	return d
}

// Truncate keeps the first n intervals of d, as a runner whose load ended
// after them would write it.
func Truncate(d *result.Document, n int) {
	d.Intervals = d.Intervals[:n]
	if end := d.Start.Add(time.Duration(float64(n) * d.IntervalSeconds * float64(time.Second))); end.Before(d.End) {
		d.End = end
	}
	d.Shards[0].Ended = d.End
	if err := result.Finalize(d); err != nil {
		panic(fmt.Sprintf("finalizing a shard: %v", err))
	}
}

// Operation is one interval's entry of operation name with counts c and
// histograms that hold them: c.OK latencies of 1 ms, and c.NotFound plus
// c's errors error latencies of 2 ms.
func Operation(name string, c result.Counts) result.IntervalOperation {
	lat, errs := histogram.New(), histogram.New()
	if c.OK > 0 {
		_ = lat.RecordValues(1000, int64(c.OK))
	}
	if n := c.NotFound + c.ErrorCount(); n > 0 {
		_ = errs.RecordValues(2000, int64(n))
	}
	o, err := result.NewIntervalOperation(name, c, lat, lat, errs)
	if err != nil {
		panic(fmt.Sprintf("encoding a histogram: %v", err))
	}
	return o
}

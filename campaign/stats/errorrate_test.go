package stats

import "testing"

func TestErrorRate(t *testing.T) {
	for _, c := range []struct {
		ok, failed int64
		want       float64
	}{{0, 0, 0}, {90, 10, 10}, {0, 5, 100}, {100, 0, 0}} {
		if got := ErrorRate(c.ok, c.failed); got != c.want {
			t.Errorf("ErrorRate(%d ok, %d failed) = %g %%, want %g %%", c.ok, c.failed, got, c.want)
		}
	}
}

// The throughput statistic over the recast intervals is the error rate of
// their sums, and intervals without operations are left out.
func TestErrorRateIntervalsReadAsThroughput(t *testing.T) {
	in := []Interval{{Ops: 90, Seconds: 1}, {Ops: 0, Seconds: 1}, {Ops: 50, Seconds: 1}}
	out := ErrorRateIntervals(in, []int64{10, 0, 50})
	if len(out) != 2 {
		t.Fatalf("%d intervals kept, want 2 (the empty one left out): %+v", len(out), out)
	}
	var ops int64
	var secs float64
	for _, o := range out {
		ops += o.Ops
		secs += o.Seconds
	}
	if got, want := 100*float64(ops)/secs, ErrorRate(140, 60); got != want {
		t.Errorf("throughput statistic of the recast intervals reads %g %%, the error rate is %g %%", got, want)
	}
}

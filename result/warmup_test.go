package result

import (
	"fmt"
	"testing"
	"time"
)

// docWithIntervals builds a one-shard document whose interval i holds
// counts[i] reads of latencies[i] µs each.
func docWithIntervals(t *testing.T, wu string, counts []int, latencies []int64) *Document {
	t.Helper()
	var samples []sample
	for i := range counts {
		for range counts[i] {
			samples = append(samples, sample{0, i, "read", latencies[i], 0})
		}
	}
	return shardDocs(t, testSpec(wu), 1, len(counts), samples)[0]
}

func auto(window, tol int32, max time.Duration) string {
	return fmt.Sprintf(`{"mode":"Auto","window":%d,"tolerancePercent":%d,"max":%q}`, window, tol, max.String())
}

func TestAutoWarmUpEndsWhereThroughputAndP99Settle(t *testing.T) {
	// A fresh database: throughput climbs and p99 falls until interval 3.
	counts := []int{100, 300, 600, 1000, 1010, 990, 1000, 1005}
	lat := []int64{90_000, 40_000, 12_000, 5_000, 5_100, 4_950, 5_000, 5_050}
	d := docWithIntervals(t, auto(3, 10, 60*time.Second), counts, lat)
	if d.WarmUp.Intervals != 3 || !d.WarmUp.Stable {
		t.Fatalf("warm-up = %d intervals (stable %v), want 3 (stable)", d.WarmUp.Intervals, d.WarmUp.Stable)
	}
	if want := t0.Add(30 * time.Second); !d.WarmUp.End.Equal(want) {
		t.Errorf("warm-up end = %v, want %v", d.WarmUp.End, want)
	}
	var total uint64
	for _, c := range counts[3:] {
		total += uint64(c)
	}
	if d.Overall.OK != total {
		t.Errorf("totals count %d operations, want the %d after the warm-up", d.Overall.OK, total)
	}
	for _, in := range d.Intervals {
		if in.WarmUp != (in.Index < 3) {
			t.Errorf("interval %d marked warmUp=%v", in.Index, in.WarmUp)
		}
	}
}

func TestAutoWarmUpThatNeverSettlesStopsAtMaxAndSaysSo(t *testing.T) {
	counts := []int{100, 200, 400, 800, 1600, 3200, 6400, 12800}
	lat := []int64{1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000}
	d := docWithIntervals(t, auto(3, 10, 40*time.Second), counts, lat)
	if d.WarmUp.Intervals != 4 || d.WarmUp.Stable {
		t.Fatalf("warm-up = %d intervals (stable %v), want max 4 intervals, not stable", d.WarmUp.Intervals, d.WarmUp.Stable)
	}
}

func TestFixedWarmUpRoundsUpToWholeIntervals(t *testing.T) {
	d := docWithIntervals(t, fixedWarmUp(11*time.Second),
		[]int{5, 5, 5}, []int64{10, 10, 10})
	if d.WarmUp.Intervals != 2 || d.Overall.OK != 5 {
		t.Fatalf("an 11 s warm-up over 10 s intervals excluded %d intervals and kept %d ops; want 2 and 5", d.WarmUp.Intervals, d.Overall.OK)
	}
}

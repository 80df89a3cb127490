package engine_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/spanbench/spanbench/result/operation"
	"github.com/spanbench/spanbench/runner/engine"
)

// TestLatencyUnderStallsIsTheSchedulesTruth stalls a run twice, the way a
// real one is stalled: the runner itself (its first second of sends was due
// before it ran, as after a pause of the process) and the backend (every
// operation started in a half-second window waits for its end). The
// reported percentiles must be those of the schedule's truth, each
// request's completion minus its intended send time, within 10 %: a
// recorder that measured from the actual send, or a dispatcher that waited
// for stalled operations, would report a fraction of them (coordinated
// omission).
func TestLatencyUnderStallsIsTheSchedulesTruth(t *testing.T) {
	const rate = 400
	const d = 3 * time.Second
	begin := time.Now()
	start := begin.Add(-time.Second)
	stallFrom, stallTo := start.Add(1500*time.Millisecond), start.Add(2000*time.Millisecond)
	stalling := operation.Func(func(ctx context.Context, _ *rand.Rand) (operation.Outcome, error) {
		if now := time.Now(); !now.Before(stallFrom) && now.Before(stallTo) {
			time.Sleep(time.Until(stallTo))
		}
		return operation.Outcome{Rows: 1}, nil
	})
	cfg := noopConfig(t, rate, d, stalling)
	cfg.Start, cfg.Interval = start, time.Second
	doc, err := engine.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	truth := stalledTruth(start, begin, stallFrom, stallTo, rate, d)
	got := doc.Overall.Latency
	if got.Count != int64(len(truth)) || doc.Shards[0].Missed != 0 {
		t.Fatalf("recorded %d operations and missed %d, want all %d of the schedule recorded", got.Count, doc.Shards[0].Missed, len(truth))
	}
	for _, q := range []struct {
		name string
		p    float64
		got  int64
	}{{"p90", 0.90, got.P90}, {"p99", 0.99, got.P99}} {
		want := truth[int(q.p*float64(len(truth)))-1]
		if g := time.Duration(q.got) * time.Microsecond; g < want*9/10 || g > want*11/10 {
			t.Errorf("latency %s under stalls: reported %v, the schedule's truth is %v (allowed ±10 %%)", q.name, g, want)
		}
	}
}

// stalledTruth is every request's latency, sorted, had each been sent at
// its intended time or, if that was before the run began, when it began,
// and taken no time unless sent in [stallFrom, stallTo), which ends at
// stallTo.
func stalledTruth(start, begin, stallFrom, stallTo time.Time, rate int, d time.Duration) []time.Duration {
	n := int(d.Seconds()) * rate
	out := make([]time.Duration, 0, n)
	for k := range n {
		intended := start.Add(time.Duration(k) * time.Second / time.Duration(rate))
		sent := intended
		if sent.Before(begin) {
			sent = begin
		}
		done := sent
		if !sent.Before(stallFrom) && sent.Before(stallTo) {
			done = stallTo
		}
		out = append(out, done.Sub(intended))
	}
	slices.Sort(out)
	return out
}

package result

import "testing"

func TestMeasuredMissedLeavesTheWarmUpOut(t *testing.T) {
	d := &Document{
		Shards: []Shard{{Index: 0, Missed: 12}},
		Intervals: []Interval{
			{Index: 0, WarmUp: true, Missed: 10},
			{Index: 1, Missed: 2},
			{Index: 2},
		},
	}
	if got := d.MeasuredMissed(); got != 2 {
		t.Errorf("MeasuredMissed = %d, want 2: the 10 missed in the warm-up are not in the window Overall describes", got)
	}
	s := &Document{Streams: []StreamSection{
		{Name: "batch", Intervals: []Interval{{Index: 0, WarmUp: true, Missed: 7}, {Index: 1, Missed: 1}}},
		{Name: "online", Intervals: []Interval{{Index: 0, Missed: 3}}},
	}}
	if got := s.MeasuredMissed(); got != 4 {
		t.Errorf("streams MeasuredMissed = %d, want 1 + 3 from each stream's own window", got)
	}
}

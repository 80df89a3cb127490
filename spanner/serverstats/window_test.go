package serverstats_test

import (
	"testing"
	"time"

	"github.com/spanbench/spanbench/spanner/serverstats"
)

func at(h, m, s int) time.Time { return time.Date(2026, 11, 24, h, m, s, 0, time.UTC) }

// TestWindowReadsOnlyWholeMinutes: a statistics minute that began before
// the window holds traffic from before the run (a warm-up, another run),
// one that closes after it traffic the client did not count.
func TestWindowReadsOnlyWholeMinutes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		start, end time.Time
		minutes    []time.Time
	}{
		{"on boundaries", at(12, 0, 0), at(12, 2, 0), []time.Time{at(12, 1, 0), at(12, 2, 0)}},
		{"partial minutes at both ends", at(11, 59, 30), at(12, 2, 10), []time.Time{at(12, 1, 0), at(12, 2, 0)}},
		{"one second past a boundary", at(12, 0, 1), at(12, 2, 0), []time.Time{at(12, 2, 0)}},
		{"shorter than a whole minute", at(12, 0, 30), at(12, 1, 30), nil},
		{"non-UTC zone", at(12, 0, 0).In(time.FixedZone("JST", 9*3600)), at(12, 1, 0), []time.Time{at(12, 1, 0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := serverstats.Window{Start: tc.start, End: tc.end}.Minutes()
			if len(got) != len(tc.minutes) {
				t.Fatalf("minutes of [%s, %s) = %v, want %v", tc.start, tc.end, got, tc.minutes)
			}
			for i := range got {
				if !got[i].Equal(tc.minutes[i]) {
					t.Fatalf("minutes of [%s, %s) = %v, want %v", tc.start, tc.end, got, tc.minutes)
				}
			}
		})
	}
}

func TestWindowRefusesAnEmptyWindow(t *testing.T) {
	if err := (serverstats.Window{Start: at(12, 0, 0), End: at(12, 0, 0)}).Validate(); err == nil {
		t.Fatal("an empty window was accepted")
	}
}

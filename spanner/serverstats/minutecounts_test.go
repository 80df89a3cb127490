package serverstats_test

import (
	"maps"
	"testing"
	"time"

	"github.com/spanbench/spanbench/spanner/serverstats"
)

// TestMinuteCountsJoinsIntervalsToStatisticsMinutes: intervals on minute
// boundaries are exact; one straddling a boundary is split by overlap and
// counted as apportioned; no operation is lost or invented.
func TestMinuteCountsJoinsIntervalsToStatisticsMinutes(t *testing.T) {
	tens := func(n int) []int64 {
		c := make([]int64, n)
		for i := range c {
			c[i] = 10
		}
		return c
	}
	for _, tc := range []struct {
		name        string
		start       time.Time
		interval    time.Duration
		counts      []int64
		want        map[time.Time]int64
		apportioned int64
	}{
		{"on minute boundaries", at(12, 0, 0), 10 * time.Second, tens(12),
			map[time.Time]int64{at(12, 1, 0): 60, at(12, 2, 0): 60}, 0},
		{"offset by 5s", at(12, 0, 5), 10 * time.Second, tens(12),
			// [12:00:55, 12:01:05) is half in each minute; [12:01:55, 12:02:05) too.
			map[time.Time]int64{at(12, 1, 0): 55, at(12, 2, 0): 60, at(12, 3, 0): 5}, 20},
		{"intervals longer than a minute", at(12, 0, 30), 2 * time.Minute, []int64{120},
			map[time.Time]int64{at(12, 1, 0): 30, at(12, 2, 0): 60, at(12, 3, 0): 30}, 120},
		{"rounding keeps every operation", at(12, 0, 50), 20 * time.Second, []int64{7},
			map[time.Time]int64{at(12, 1, 0): 3, at(12, 2, 0): 4}, 7},
		{"counts too large for count × nanoseconds", at(12, 0, 30), time.Minute, []int64{1 << 40},
			map[time.Time]int64{at(12, 1, 0): 1 << 39, at(12, 2, 0): 1 << 39}, 1 << 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, apportioned, err := serverstats.MinuteCounts(tc.start, tc.interval, tc.counts)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) || apportioned != tc.apportioned {
				t.Errorf("MinuteCounts = %v, %d apportioned; want %v, %d", got, apportioned, tc.want, tc.apportioned)
			}
		})
	}
}

func TestMinuteCountsRefusesBadInput(t *testing.T) {
	if _, _, err := serverstats.MinuteCounts(at(12, 0, 0), 0, []int64{1}); err == nil {
		t.Error("a zero interval was accepted")
	}
	if _, _, err := serverstats.MinuteCounts(at(12, 0, 0), time.Second, []int64{-1}); err == nil {
		t.Error("a negative count was accepted")
	}
}

package serverstats

import "time"

// Granularity is one of the statistics tables' interval lengths: each
// table comes in a _MINUTE, _10MINUTE and _HOUR variant, which Spanner
// keeps for different times.
type Granularity struct {
	// Suffix ends the table names: MINUTE, 10MINUTE or HOUR.
	Suffix string
	// Length is the length of one interval.
	Length time.Duration
	// Retention is how long Spanner keeps the intervals at least.
	Retention time.Duration
}

// The tables' retentions, as Spanner's documentation states them: the
// minute tables cover the previous 6 hours, the 10-minute tables the
// previous 4 days, the hour tables the previous 30 days.
var (
	Minute    = Granularity{Suffix: "MINUTE", Length: time.Minute, Retention: 6 * time.Hour}
	TenMinute = Granularity{Suffix: "10MINUTE", Length: 10 * time.Minute, Retention: 4 * 24 * time.Hour}
	Hour      = Granularity{Suffix: "HOUR", Length: time.Hour, Retention: 30 * 24 * time.Hour}
)

// granularities are the tables from the finest.
var granularities = []Granularity{Minute, TenMinute, Hour}

// ChooseGranularity is the finest table that still holds the oldest
// interval of w read at now: the minute tables for a run collected within
// 6 hours of its start, then the 10-minute and the hour tables. When the
// next coarser table holds no whole interval of w (a run shorter than its
// intervals), the finer one is kept: what it still holds is read, and the
// result says how many intervals are past retention. A window older than
// every table's retention is read from the hour tables.
func ChooseGranularity(w Window, now time.Time) Granularity {
	for i, g := range granularities {
		ends := w.IntervalEnds(g.Length)
		if len(ends) == 0 || ends[0].After(now.Add(-g.Retention)) {
			return g
		}
		if i+1 < len(granularities) && len(w.IntervalEnds(granularities[i+1].Length)) == 0 {
			return g
		}
	}
	return Hour
}

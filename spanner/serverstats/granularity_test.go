package serverstats_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/statstest"
	"github.com/spanbench/spanbench/spanner/serverstats"
)

// TestChooseGranularityTakesTheFinestTableStillHoldingTheRun: the minute
// tables keep 6 hours, the 10-minute ones 4 days, the hour ones 30 days.
func TestChooseGranularityTakesTheFinestTableStillHoldingTheRun(t *testing.T) {
	start := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	long := serverstats.Window{Start: start, End: start.Add(2*time.Hour + 30*time.Second)}
	short := serverstats.Window{Start: start.Add(3 * time.Minute), End: start.Add(7 * time.Minute)}
	for _, tc := range []struct {
		name string
		w    serverstats.Window
		at   time.Duration // after the window's start
		want serverstats.Granularity
	}{
		{"an hour later: minutes", long, time.Hour, serverstats.Minute},
		{"first minute 1 s inside the 6 hours: minutes", long, 6*time.Hour + time.Minute - time.Second, serverstats.Minute},
		{"7 hours later: 10 minutes", long, 7 * time.Hour, serverstats.TenMinute},
		{"5 days later: hours", long, 5 * 24 * time.Hour, serverstats.Hour},
		{"40 days later: hours, past retention", long, 40 * 24 * time.Hour, serverstats.Hour},
		{"a 4-minute run 7 hours later holds no whole 10 minutes: minutes", short, 7 * time.Hour, serverstats.Minute},
	} {
		if got := serverstats.ChooseGranularity(tc.w, tc.w.Start.Add(tc.at)); got != tc.want {
			t.Errorf("%s: got the %s tables, want %s", tc.name, got.Suffix, tc.want.Suffix)
		}
	}
}

// TestCollectReadsTheTenMinuteTablesAfterSixHours runs the collector on
// the real emulator 7 hours after a 20-minute run: the minute tables have
// dropped it, so it reads the 10-minute stand-ins, joins them to the
// client's counts per 10 minutes and says which tables it read.
func TestCollectReadsTheTenMinuteTablesAfterSixHours(t *testing.T) {
	client := startStandin(t, v1alpha1.DialectGoogleSQL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tag := v1alpha1.RequestTag("late", "readkeys-read")
	start := time.Date(2026, 11, 24, 11, 59, 40, 0, time.UTC)
	w := serverstats.Window{Start: start, End: start.Add(20*time.Minute + 30*time.Second)}
	ten1, ten2 := minute(10), minute(20)
	var ms []*spanner.Mutation
	for _, end := range []time.Time{ten1, ten2} {
		ms = append(ms, statstest.ReadRow{Suffix: "10MINUTE", End: end, Tag: tag, Fprint: 1, Executions: 10 * splits * readOpsPerMinute,
			CPU: readCPU, Rows: 2.5, Bytes: 2607.25}.Mutation())
	}
	// A minute row the minute tables would no longer hold: it must not be read.
	ms = append(ms, statstest.ReadRow{End: minute(5), Tag: tag, Fprint: 1, Executions: 1, CPU: 9, Rows: 1, Bytes: 1}.Mutation())
	if _, err := client.Apply(ctx, ms); err != nil {
		t.Fatalf("filling the stand-in tables: %v", err)
	}
	now := start.Add(7 * time.Hour)
	g := serverstats.ChooseGranularity(w, now)
	ends := w.IntervalEnds(g.Length)
	ops, _, err := serverstats.IntervalCounts(start, 10*time.Second, perInterval(10*readOpsPerMinute/60, 124), g.Length)
	if err != nil {
		t.Fatal(err)
	}
	c := serverstats.Collector{Prefix: standinPrefix, Clock: clocktesting.NewFakePassiveClock(now), Granularity: g}
	res, err := c.Collect(ctx, client, w, []serverstats.Operation{{Name: "readkeys-read", RequestTag: tag, Ops: ops}})
	if err != nil {
		t.Fatalf("collecting: %v", err)
	}
	if res.Granularity != serverstats.TenMinute || len(ends) != 2 || len(res.Minutes) != 2 || !res.Minutes[1].Equal(ten2) {
		t.Fatalf("read the %s tables over %v, want the 10MINUTE tables over the intervals ending 12:10 and 12:20",
			res.Granularity.Suffix, res.Minutes)
	}
	if len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "read from the 10MINUTE tables") {
		t.Errorf("notes = %q, want one saying the 10-minute tables were read", res.Notes)
	}
	s := res.Operations[0].Statements
	if s == nil {
		t.Fatalf("not captured: %+v", res.Operations[0])
	}
	near(t, "executions per operation from the 10-minute rows", s.ExecutionsPerOp, splits)
	near(t, "CPU per operation from the 10-minute rows", s.CPUSecondsPerOp, splits*readCPU)
}

// perInterval is n operations in each of k intervals.
func perInterval(n int64, k int) []int64 {
	out := make([]int64, k)
	for i := range out {
		out[i] = n
	}
	return out
}

package result

import (
	"strings"
	"testing"
	"time"
)

// TestTheServersLaterWarmUpEndCutsTheIntervalsBeforeIt: a Fixed 20 s
// warm-up of 10 s intervals, and a monitoring section saying the server
// settled at 45 s: the totals start at interval 5 (45 s rounded up to
// whole intervals), the document says the Server ended it and that 3
// intervals were cut beyond the client's, and deriving the document again
// (a report read back) keeps the cut. A server that settled before the
// client, an end past the last interval, or a section saying Client cut
// nothing more.
func TestTheServersLaterWarmUpEndCutsTheIntervalsBeforeIt(t *testing.T) {
	counts := []int{10, 20, 30, 40, 50, 60, 70, 80}
	lat := []int64{9000, 8000, 7000, 6000, 5000, 1000, 1000, 1000}
	server := func(at time.Duration, by string) *Monitoring {
		return &Monitoring{Version: MonitoringSchemaVersion, WarmUp: &MonitoringWarmUp{Settled: true, SettledAt: t0.Add(at), EndedBy: by}}
	}
	for _, tc := range []struct {
		name      string
		m         *Monitoring
		intervals int
		endedBy   string
		cut       int
	}{
		{"no monitoring section", nil, 2, "", 0},
		{"server settled later", server(45*time.Second, WarmUpEndedByServer), 5, WarmUpEndedByServer, 3},
		{"server settled earlier", server(10*time.Second, WarmUpEndedByServer), 2, "", 0},
		{"client ended it", server(45*time.Second, WarmUpEndedByClient), 2, "", 0},
		{"server end past the run", server(80*time.Second, WarmUpEndedByServer), 2, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := docWithIntervals(t, `{"mode":"Fixed","duration":"20s"}`, counts, lat)
			d.Monitoring = tc.m
			if err := Finalize(d); err != nil {
				t.Fatal(err)
			}
			if err := Finalize(d); err != nil { // derived again, as a report read back
				t.Fatal(err)
			}
			w := d.WarmUp
			if w.Intervals != tc.intervals || w.EndedBy != tc.endedBy || w.ServerIntervals != tc.cut {
				t.Fatalf("warm-up %d intervals ended by %q, %d cut by the server; want %d by %q, %d cut",
					w.Intervals, w.EndedBy, w.ServerIntervals, tc.intervals, tc.endedBy, tc.cut)
			}
			if want := t0.Add(time.Duration(tc.intervals) * 10 * time.Second); !w.End.Equal(want) {
				t.Errorf("warm-up end %s, want %s", w.End, want)
			}
			var ok uint64
			for _, c := range counts[tc.intervals:] {
				ok += uint64(c)
			}
			if d.Overall.OK != ok || d.Totals[0].Latency.P99 > 1100 && tc.cut > 0 {
				t.Errorf("totals: %d operations p99 %dµs; want the %d after interval %d", d.Overall.OK, d.Totals[0].Latency.P99, ok, tc.intervals)
			}
			for _, in := range d.Intervals {
				if in.WarmUp != (in.Index < tc.intervals) {
					t.Errorf("interval %d marked warmUp=%v", in.Index, in.WarmUp)
				}
			}
			var b strings.Builder
			if err := WriteTable(&b, d); err != nil {
				t.Fatal(err)
			}
			if said := strings.Contains(b.String(), "ended by the server's signal: intervals 2-4 cut"); said != (tc.cut > 0) {
				t.Errorf("the table says the server's cut: %v, want %v:\n%s", said, tc.cut > 0, b.String())
			}
			if said := strings.Contains(b.String(), "the Server signal ended the warm-up (the figures start there)"); said != (tc.cut > 0) {
				t.Errorf("the cloud monitoring table says the figures start at the server's end: %v, want %v:\n%s", said, tc.cut > 0, b.String())
			}
		})
	}
}

// TestTheServersWarmUpEndCutsEachStreamFromItsOwnStart: the server's end
// is the instance's, so in a streams document it cuts each stream's
// intervals before it, counted from the stream's own start: a stream
// started with the run (Fixed 20 s warm-up, server settled at 45 s) loses
// intervals 2 to 4; one started 30 s later loses its interval 1 only
// (45 s is 15 s into it, rounded up to 2 intervals, its client warm-up
// being 2); the document says the server ended the warm-up.
func TestTheServersWarmUpEndCutsEachStreamFromItsOwnStart(t *testing.T) {
	counts := []int{10, 20, 30, 40, 50, 60, 70, 80}
	lat := []int64{9000, 8000, 7000, 6000, 5000, 1000, 1000, 1000}
	first := docWithIntervals(t, `{"mode":"Fixed","duration":"20s"}`, counts, lat)
	late := docWithIntervals(t, `{"mode":"Fixed","duration":"20s"}`, counts, lat)
	first.Stream, late.Stream = "first", "late"
	shift(late, 30*time.Second)
	d := *first
	d.Stream, d.Intervals = "", nil
	d.Streams = []StreamSection{section(first), section(late)}
	d.Monitoring = &Monitoring{Version: MonitoringSchemaVersion,
		WarmUp: &MonitoringWarmUp{Settled: true, SettledAt: t0.Add(45 * time.Second), EndedBy: WarmUpEndedByServer}}
	if err := Finalize(&d); err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct{ intervals, cut int }{{5, 3}, {2, 0}} {
		w := d.Streams[i].WarmUp
		if w.Intervals != want.intervals || w.ServerIntervals != want.cut {
			t.Errorf("stream %s: warm-up of %d intervals, %d cut by the server; want %d, %d cut",
				d.Streams[i].Name, w.Intervals, w.ServerIntervals, want.intervals, want.cut)
		}
	}
	if d.WarmUp.EndedBy != WarmUpEndedByServer || d.WarmUp.ServerIntervals != 3 {
		t.Errorf("the document's warm-up is ended by %q with %d intervals cut; want Server, 3", d.WarmUp.EndedBy, d.WarmUp.ServerIntervals)
	}
	var ok uint64
	for _, c := range counts[5:] {
		ok += uint64(c)
	}
	for _, c := range counts[2:] {
		ok += uint64(c)
	}
	if d.Overall.OK != ok {
		t.Errorf("the document's totals count %d operations, want %d (each stream after its own cut)", d.Overall.OK, ok)
	}
}

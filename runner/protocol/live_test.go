package protocol

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLivePeriodIsAnIntervalOrTenSecondsWhicheverIsLonger: the live period
// bounds the status write rate; it is a whole number of intervals, so that
// every runner reports the same ones.
func TestLivePeriodIsAnIntervalOrTenSecondsWhicheverIsLonger(t *testing.T) {
	for _, tc := range []struct {
		interval, want time.Duration
		due            []int // the first due interval indexes
	}{
		{time.Second, 10 * time.Second, []int{9, 19, 29}},
		{2 * time.Second, 10 * time.Second, []int{4, 9, 14}},
		{3 * time.Second, 12 * time.Second, []int{3, 7, 11}},
		{10 * time.Second, 10 * time.Second, []int{0, 1, 2}},
		{time.Minute, time.Minute, []int{0, 1, 2}},
		{0, MinLivePeriod, nil},
	} {
		if got := LivePeriod(tc.interval); got != tc.want {
			t.Errorf("LivePeriod(%v) = %v; want %v", tc.interval, got, tc.want)
		}
		var due []int
		for k := range 40 {
			if LiveDue(k, tc.interval) && len(due) < 3 {
				due = append(due, k)
			}
		}
		if !cmp.Equal(due, tc.due) {
			t.Errorf("interval %v: due intervals %v; want %v (those ending at a multiple of %v)", tc.interval, due, tc.due, tc.want)
		}
	}
}

func TestLiveReportRoundTrip(t *testing.T) {
	want := LiveReport{Start: time.Date(2026, 11, 24, 1, 2, 3, 4, time.UTC), Interval: 19, Operations: 2000, Errors: 3,
		IntervalOperations: 100, Latency: "HISTFAAAA"}
	m, err := EncodeLiveReport(want)
	if err != nil {
		t.Fatal(err)
	}
	if keys := slices.Collect(maps.Keys(m.Data)); !cmp.Equal(keys, []string{KeyLive}) {
		t.Errorf("EncodeLiveReport wrote keys %v; want only %s, leaving the map's others as they are", m.Data, KeyLive)
	}
	got, err := DecodeLiveReport(m.Data[KeyLive])
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("DecodeLiveReport(EncodeLiveReport(%+v)) = %+v, %v; want it back", want, got, err)
	}
	if _, err := EncodeLiveReport(LiveReport{Start: want.Start, Latency: strings.Repeat("x", MaxLiveBytes)}); err == nil {
		t.Error("a live report over MaxLiveBytes was encoded")
	}
}

// TestDecodeLiveReportRefusesWhatNoRunnerWrites names the key and the
// problem of each report a runner could not have written.
func TestDecodeLiveReportRefusesWhatNoRunnerWrites(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"not JSON", "live", "is not a live report"},
		{"an unknown field", `{"Start":"2026-11-24T01:02:03Z","Bonus":1}`, "is not a live report"},
		{"a duplicate field", `{"Start":"2026-11-24T01:02:03Z","Interval":1,"Interval":2}`, "is not a live report"},
		{"no start", `{"Interval":9}`, "names no start time"},
		{"a negative interval", `{"Start":"2026-11-24T01:02:03Z","Interval":-1}`, "names interval -1"},
		{"more errors than operations", `{"Start":"2026-11-24T01:02:03Z","Operations":1,"Errors":2}`, "more than its 1 operations"},
		{"an interval counting more than the run", `{"Start":"2026-11-24T01:02:03Z","Operations":1,"IntervalOperations":2}`, "more than its 1 operations"},
		{"too long", strings.Repeat(" ", MaxLiveBytes+1), "more than"},
	} {
		_, err := DecodeLiveReport(tc.in)
		if err == nil || !strings.Contains(err.Error(), KeyLive) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: DecodeLiveReport = %v; want an error naming %s and saying %q", tc.name, err, KeyLive, tc.want)
		}
	}
}

// TestABadLiveReportCostsOnlyTheLiveFigures: the shard report decodes
// whatever its live key holds, within its size; only an oversized one is
// refused, as a map no runner writes.
func TestABadLiveReportCostsOnlyTheLiveFigures(t *testing.T) {
	r, err := DecodeShardReport(map[string]string{KeyLive: "garbage"}, nil)
	if err != nil || r.Live != "garbage" {
		t.Errorf("DecodeShardReport with a bad live key = %+v, %v; want the report, the key kept for the manager to judge", r, err)
	}
	if _, err := DecodeShardReport(map[string]string{KeyLive: strings.Repeat("x", MaxLiveBytes+1)}, nil); err == nil || !strings.Contains(err.Error(), KeyLive) {
		t.Errorf("an oversized live key decoded: %v", err)
	}
}

// TestAFullShardMapFitsAConfigMap: the live report shares the shard map
// with the largest inline result; both, with the longest message, stay
// within the API server's 1 MiB of data and binaryData per ConfigMap.
func TestAFullShardMapFitsAConfigMap(t *testing.T) {
	m := EncodeShardReport(ShardReport{Ready: time.Now(), State: StateSucceeded, Message: strings.Repeat("m", MaxMessageBytes),
		Result: make([]byte, MaxResultBytes)})
	m.Data[KeyLive] = strings.Repeat("l", MaxLiveBytes)
	size := 0
	for k, v := range m.Data {
		size += len(k) + len(v)
	}
	for k, v := range m.BinaryData {
		size += len(k) + len(v)
	}
	const limit = 1 << 20
	if size > limit {
		t.Errorf("a shard map with the largest result and live report holds %d bytes, more than a ConfigMap's %d", size, limit)
	}
}

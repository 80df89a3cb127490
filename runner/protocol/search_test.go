package protocol

import (
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/capacity"
	"github.com/spanbench/spanbench/result/histogram"
)

// TestSearchReportRoundTripsAndRefusesWhatNoRunnerWrites: a runner's
// measurement of a step decodes to the same counts and histogram; a
// report from a pod that is not a runner's (unknown fields, counts out of
// range, a histogram that does not decode, an operation twice, too
// large) is refused with the key named, never merged.
func TestSearchReportRoundTripsAndRefusesWhatNoRunnerWrites(t *testing.T) {
	h := histogram.NewCompact()
	h.RecordValues(2_000, 50)
	start := time.Date(2026, 1, 2, 3, 4, 5, 46e6, time.UTC)
	rep, err := NewSearchReport(start, 3, capacity.Measurement{Offered: 20, Seconds: 10, Missed: 1,
		Operations: map[string]*capacity.OperationMeasurement{"read": {Counts: result.Counts{OK: 50}, Latency: h}}})
	if err != nil {
		t.Fatal(err)
	}
	maps, err := EncodeSearchReport(rep)
	if err != nil {
		t.Fatal(err)
	}
	good := maps.Data[KeySearchReport]
	got, m, err := DecodeSearchReport(good)
	if err != nil {
		t.Fatalf("a runner's report does not decode: %v", err)
	}
	if !got.Start.Equal(start) || got.Step != 3 || m.Offered != 20 || m.Missed != 1 || m.Operations["read"].Counts.OK != 50 ||
		m.Operations["read"].Latency.TotalCount() != 50 {
		t.Errorf("decoded %+v / %+v; want step 3 at 20 ops/s, 50 reads of 2ms", got, m)
	}
	for name, bad := range map[string]string{
		"unknown field":       strings.Replace(good, `"Step"`, `"Stepp"`, 1),
		"negative seconds":    strings.Replace(good, `"Seconds":10`, `"Seconds":-1`, 1),
		"bad histogram":       strings.Replace(good, `"Latency":"`, `"Latency":"x`, 1),
		"operation twice":     strings.Replace(good, `"Operations":[`, `"Operations":[{"Name":"read","Counts":{"ok":1}},`, 1),
		"more than the limit": good + strings.Repeat(" ", MaxSearchReportBytes),
	} {
		if _, _, err := DecodeSearchReport(bad); err == nil || !strings.Contains(err.Error(), KeySearchReport) {
			t.Errorf("%s: decoded with %v; want a refusal naming %s", name, err, KeySearchReport)
		}
	}
}

// TestSearchStepNeedsAnInstantAndARate: a published step names its
// instant and a positive rate, unless it ends the search.
func TestSearchStepNeedsAnInstantAndARate(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		step SearchStep
		ok   bool
	}{
		{SearchStep{Start: start, Step: 1, Rate: 20, At: start.Add(time.Minute)}, true},
		{SearchStep{Start: start, Step: 4, Done: true}, true},
		{SearchStep{Start: start, Step: 1, At: start.Add(time.Minute)}, false},
		{SearchStep{Start: start, Step: 1, Rate: 20}, false},
		{SearchStep{Step: 1, Rate: 20, At: start}, false},
	} {
		data, err := EncodeSearchStep(tc.step)
		if err != nil {
			t.Fatal(err)
		}
		_, ok, err := DecodeSearchStep(data)
		if (err == nil && ok) != tc.ok {
			t.Errorf("%+v: decoded %v, %v; want accepted %v", tc.step, ok, err, tc.ok)
		}
	}
}

package benchmarkrun

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	searchcap "github.com/spanbench/spanbench/result/capacity"
	"github.com/spanbench/spanbench/result/histogram"
)

// TestSearchStepStatusKeepsEachFigureAndItsNote: a step judged as the
// manager judges it (capacity.Evaluate on the step's measurement) reaches
// status.search with each figure's text, its unrounded value in base
// units (a p99 of 1.25 ms as 0.00125 s; one error in 100,000 operations as
// 0.00001, which the text shows as 0.00 %), and the note of the cpu
// condition the target did not report (the emulator), which has no value.
func TestSearchStepStatusKeepsEachFigureAndItsNote(t *testing.T) {
	lat := histogram.NewCompact()
	lat.RecordValues(1_250, 99_999)
	m := searchcap.Measurement{Offered: 10_000, Seconds: 10, Operations: map[string]*searchcap.OperationMeasurement{
		"read": {Counts: result.Counts{OK: 99_999, Errors: map[string]uint64{"Unavailable": 1}}, Latency: lat}}}
	slo, err := searchcap.ParseSLO([]string{"p99(read) <= 20ms", "errors <= 1%", "cpu <= 65%"})
	if err != nil {
		t.Fatal(err)
	}
	step, err := searchcap.Evaluate(slo, m)
	if err != nil {
		t.Fatal(err)
	}
	want := []v1alpha1.SearchFigureStatus{
		{Condition: "p99(read) <= 20ms", Value: "1.25ms", BaseValue: "0.00125", Pass: true, Measured: true},
		{Condition: "errors <= 1%", Value: "0.00%", BaseValue: "0.00001", Pass: true, Measured: true},
		{Condition: "cpu <= 65%", Note: "not reported by the target"},
	}
	got := searchStepStatus(step)
	if diff := cmp.Diff(want, got.Figures); diff != "" {
		t.Errorf("status.search's figures (-want +got):\n%s", diff)
	}
	if got.Offered != "10000.0" || got.Achieved != "9999.9" || !got.Pass || got.CPU != "" {
		t.Errorf("step %+v; want offered 10000.0, achieved 9999.9, passed, no CPU", got)
	}
}

// TestSearchStepStatusNotesAFigureWithoutOperations: a figure that failed
// for want of operations has its note and no value, neither as text nor
// as a number (a 0 would read as a perfect figure).
func TestSearchStepStatusNotesAFigureWithoutOperations(t *testing.T) {
	m := searchcap.Measurement{Offered: 10, Seconds: 10, Operations: map[string]*searchcap.OperationMeasurement{
		"read": {Counts: result.Counts{Errors: map[string]uint64{"DeadlineExceeded": 100}}, Latency: histogram.NewCompact()}}}
	slo, err := searchcap.ParseSLO([]string{"p99(read) <= 20ms"})
	if err != nil {
		t.Fatal(err)
	}
	step, err := searchcap.Evaluate(slo, m)
	if err != nil {
		t.Fatal(err)
	}
	want := []v1alpha1.SearchFigureStatus{{Condition: "p99(read) <= 20ms", Note: "no successful operation", Measured: true}}
	if diff := cmp.Diff(want, searchStepStatus(step).Figures); diff != "" {
		t.Errorf("status.search's figures (-want +got):\n%s", diff)
	}
}

package stats

import (
	"strings"
	"testing"
)

func TestWriteTable(t *testing.T) {
	regressed, err := CompareRuns([]float64{100, 102, 98, 101, 99}, []float64{110, 112.2, 107.8, 111.1, 108.9}, Options{MinEffect: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	tooFew, err := CompareRuns([]float64{100, 101}, []float64{120, 121}, Options{MinEffect: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteTable(&b, []Row{
		{Variant: "asia1", Metric: "commit p99 (µs)", Baseline: 100, Value: 110, Comparison: regressed},
		{Variant: "sql", Metric: "read p99 (µs)", Baseline: 100.5, Value: 120.5, Comparison: tooFew},
	}); err != nil {
		t.Fatal(err)
	}
	// By hand: the 3rd smallest run ratio is 99/102, so the lower bound is
	// 1.1·99/102 = 1.068; the 2+2 estimate is exp of the mean of the middle
	// log ratios, 121/101 and 120/100, = 1.199; and 2+2 has no interval.
	want := `VARIANT  METRIC           BASELINE  VALUE  RATIO  CI                   N    P        VERDICT
asia1    commit p99 (µs)  100       110    1.100  [1.068, 1.133] @97%  5+5  0.00794  Regressed
sql      read p99 (µs)    100.5     120.5  1.199  -                    2+2  0.333    Inconclusive
`
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

package comparison

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/campaign/stats"
)

// reportTable has a Regressed row with an interval, a Neutral one, and an
// Inconclusive one whose figures are not numbers.
func reportTable() Table {
	return Table{Baseline: "read", Verdict: stats.Regressed, Rows: []stats.Row{
		{Variant: "sql", Metric: "point p50 µs", Baseline: 2001, Value: 9759, Comparison: stats.Comparison{Ratio: 5.104, Lo: 2.963, Hi: 8.106,
			HasInterval: true, Confidence: 0.971, PValue: 0.0286, NBaseline: 4, NVariant: 4, Method: stats.MethodExact, Verdict: stats.Regressed}},
		{Variant: "sql", Metric: "point ops/s", Baseline: 30, Value: 30, Comparison: stats.Comparison{Ratio: 1, PValue: 1, NBaseline: 4,
			NVariant: 4, Method: stats.MethodExact, Verdict: stats.Neutral}},
		{Variant: "sql", Metric: "keys p99 µs", Baseline: math.NaN(), Value: math.Inf(1), Comparison: stats.Comparison{Ratio: math.NaN(),
			PValue: math.NaN(), NBaseline: 4, NVariant: 4, Verdict: stats.Inconclusive, Reason: "no successful keys requests"}},
	}}
}

func TestEncodeHoldsEveryRowAsTextAndJSON(t *testing.T) {
	js, text, err := reportTable().Encode("rvs-1795485600", "abc", 3)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatalf("the report's JSON does not decode: %v\n%s", err, js)
	}
	if rep.Iteration != "rvs-1795485600" || rep.TemplateHash != "abc" || rep.Baseline != "read" || rep.Verdict != stats.Regressed ||
		len(rep.Rows) != 3 || rep.OmittedRows != 0 {
		t.Fatalf("report %+v, want all 3 rows of iteration rvs-1795485600 against read", rep)
	}
	r0 := rep.Rows[0]
	if r0.Metric != "point p50 µs" || *r0.Ratio != 5.104 || *r0.Low != 2.963 || *r0.High != 8.106 || *r0.Confidence != 0.971 ||
		*r0.PValue != 0.0286 || r0.NBaseline != 4 || r0.Verdict != stats.Regressed {
		t.Errorf("first row %+v, want the Regressed p50 row with its interval, in the table's order", r0)
	}
	if r2 := rep.Rows[2]; r2.Baseline != nil || r2.Value != nil || r2.Ratio != nil || r2.PValue != nil || r2.Reason == "" {
		t.Errorf("row without figures %+v: NaN and Inf must be absent, the reason kept", r2)
	}
	for _, want := range []string{"iteration rvs-1795485600: baseline read; verdict Regressed; 3 rows", "VARIANT", "[2.963, 8.106] @97%",
		"point ops/s", "keys p99 µs"} {
		if !strings.Contains(string(text), want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}

func TestEncodeLeavesOutTheLeastImportantRows(t *testing.T) {
	js, text, err := reportTable().Encode("it", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 1 || rep.Rows[0].Verdict != stats.Regressed || rep.OmittedRows != 2 {
		t.Errorf("kept %+v, omitted %d; want the Regressed row and 2 omitted", rep.Rows, rep.OmittedRows)
	}
	if !strings.Contains(string(text), "2 least important left out") || strings.Contains(string(text), "ops/s") {
		t.Errorf("text does not say what it left out, or kept a Neutral row:\n%s", text)
	}
}

func TestReportDataIsPlainWhenSmallAndBoundedWhenHuge(t *testing.T) {
	data, binary, err := reportTable().ReportData("it", "h")
	if err != nil {
		t.Fatal(err)
	}
	if binary != nil || !strings.Contains(data[ReportTextKey], "point p50 µs") || !strings.Contains(data[ReportJSONKey], `"rows"`) {
		t.Fatalf("a small report: data %v, binary keys %d; want plain text and JSON", data, len(binary))
	}

	// The largest table a campaign can ask for: 63 variants × 16 metrics ×
	// 16 operations, with long names and figures that do not repeat.
	rng := rand.New(rand.NewPCG(1, 2))
	var huge Table
	for v := range 63 {
		for m := range 16 * 16 {
			verdict := stats.Neutral
			if m%50 == 0 {
				verdict = stats.Regressed
			}
			huge.Rows = append(huge.Rows, stats.Row{Variant: fmt.Sprintf("variant-%02d-%s", v, strings.Repeat("x", 40)),
				Metric: fmt.Sprintf("operation-%03d-%s p99.9 µs", m, strings.Repeat("y", 30)), Baseline: rng.Float64() * 1e4, Value: rng.Float64() * 1e4,
				Comparison: stats.Comparison{Ratio: rng.Float64() * 2, Lo: rng.Float64(), Hi: 1 + rng.Float64(), HasInterval: true,
					Confidence: 0.95, PValue: rng.Float64(), NBaseline: 30, NVariant: 30, Method: stats.MethodExact, Verdict: verdict}})
		}
	}
	data, binary, err = huge.ReportData("it", "h")
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	for _, b := range binary {
		size += len(b)
	}
	if data != nil || size > MaxReportBytes || size == 0 {
		t.Fatalf("a %d-row report: %d plain keys, %d compressed bytes; want compressed, at most %d", len(huge.Rows), len(data), size, MaxReportBytes)
	}
	zr, err := gzip.NewReader(bytes.NewReader(binary[ReportJSONKey+GzipSuffix]))
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.NewDecoder(zr).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	regressed := 0
	for _, r := range rep.Rows {
		if r.Verdict == stats.Regressed {
			regressed++
		}
	}
	if len(rep.Rows)+rep.OmittedRows != len(huge.Rows) || regressed != 63*6 {
		t.Errorf("report of %d rows holds %d, omits %d, keeps %d of %d Regressed rows", len(huge.Rows), len(rep.Rows), rep.OmittedRows, regressed, 63*6)
	}
	t.Logf("%d rows: %d bytes compressed, %d rows kept", len(huge.Rows), size, len(rep.Rows))
}

package comparison

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math"

	"github.com/spanbench/spanbench/campaign/stats"
)

// Keys of an iteration's report ConfigMap: the whole table as
// benchstat-style text for people and as JSON (a Report) for programs.
// A report too large to hold as text is gzip-compressed under the same
// keys with GzipSuffix appended, in binaryData.
const (
	ReportTextKey = "comparison.txt"
	ReportJSONKey = "comparison.json"
	GzipSuffix    = ".gz"
)

// Bounds of a report's data: plain text while it fits in
// PlainReportBytes, gzip-compressed beyond, and at most MaxReportBytes
// (well under a ConfigMap's 1 MiB) whatever the table's size, the least
// important rows left out first.
const (
	PlainReportBytes = 256 << 10
	MaxReportBytes   = 768 << 10
)

// Report is an iteration's whole comparison table, as its report
// ConfigMap holds it under ReportJSONKey.
type Report struct {
	// Iteration names the iteration compared.
	Iteration string `json:"iteration"`
	// TemplateHash identifies the spec the iteration ran.
	TemplateHash string `json:"templateHash,omitempty"`
	// Baseline names the baseline cell.
	Baseline string `json:"baseline"`
	// Verdict is the table's verdict (Overall of all its rows).
	Verdict stats.Verdict `json:"verdict"`
	// Rows are every row of the table, in its order (variants, then
	// metrics, then operations), unless OmittedRows says some were left out.
	Rows []ReportRow `json:"rows"`
	// OmittedRows counts the rows left out so that the report fits in a
	// ConfigMap; the least important (Neutral) go first.
	OmittedRows int `json:"omittedRows,omitempty"`
}

// ReportRow is one row: variant | metric | baseline | value | ratio | CI |
// n | p | verdict. A figure that is not a finite number is absent.
type ReportRow struct {
	Variant  string   `json:"variant"`
	Metric   string   `json:"metric"`
	Baseline *float64 `json:"baseline,omitempty"`
	Value    *float64 `json:"value,omitempty"`
	Ratio    *float64 `json:"ratio,omitempty"`
	// Low and High bound the ratio's interval; absent without one.
	Low  *float64 `json:"low,omitempty"`
	High *float64 `json:"high,omitempty"`
	// Confidence is the interval's actual confidence, 0–1.
	Confidence *float64      `json:"confidence,omitempty"`
	NBaseline  int           `json:"nBaseline"`
	NVariant   int           `json:"nVariant"`
	PValue     *float64      `json:"pValue,omitempty"`
	Method     string        `json:"method,omitempty"`
	Verdict    stats.Verdict `json:"verdict"`
	// Reason says why the verdict is what it is.
	Reason string `json:"reason,omitempty"`
}

func reportRow(r stats.Row) ReportRow {
	c := r.Comparison
	out := ReportRow{Variant: r.Variant, Metric: r.Metric, Baseline: finite(r.Baseline), Value: finite(r.Value),
		Ratio: finite(c.Ratio), NBaseline: c.NBaseline, NVariant: c.NVariant, Method: c.Method, Verdict: c.Verdict, Reason: c.Reason}
	if c.HasInterval {
		out.Low, out.High, out.Confidence = finite(c.Lo), finite(c.Hi), finite(c.Confidence)
	}
	if c.Method != "" {
		out.PValue = finite(c.PValue)
	}
	return out
}

// finite is v, or nil for NaN and infinities, which JSON cannot hold.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// Encode is the table of iteration as a Report in JSON and as text (a
// heading line, then the rows as stats.WriteTable prints them, the CLI's
// table). All rows, in the table's order, when keep ≥ len(t.Rows); else
// the keep most important (see Status) and the number left out.
func (t Table) Encode(iteration, templateHash string, keep int) (jsonData, text []byte, err error) {
	rows := t.Rows
	if keep < len(rows) {
		rows = byImportance(rows)[:max(keep, 0)]
	}
	rep := Report{Iteration: iteration, TemplateHash: templateHash, Baseline: t.Baseline, Verdict: t.Verdict,
		Rows: make([]ReportRow, 0, len(rows)), OmittedRows: len(t.Rows) - len(rows)}
	for _, r := range rows {
		rep.Rows = append(rep.Rows, reportRow(r))
	}
	if jsonData, err = json.Marshal(rep); err != nil {
		return nil, nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "iteration %s: baseline %s; verdict %s; %d rows", iteration, t.Baseline, t.Verdict, len(t.Rows))
	if rep.OmittedRows > 0 {
		fmt.Fprintf(&b, ", %d least important left out to fit", rep.OmittedRows)
	}
	b.WriteString("\n\n")
	if err := stats.WriteTable(&b, rows); err != nil {
		return nil, nil, err
	}
	return jsonData, b.Bytes(), nil
}

// ReportData is the report of iteration as a ConfigMap's data: plain
// (ReportTextKey, ReportJSONKey) when it fits in PlainReportBytes, else
// gzip-compressed in binary (the keys with GzipSuffix), with rows left out
// until it fits in MaxReportBytes.
func (t Table) ReportData(iteration, templateHash string) (data map[string]string, binary map[string][]byte, err error) {
	for keep := len(t.Rows); ; keep /= 2 {
		js, text, err := t.Encode(iteration, templateHash, keep)
		if err != nil {
			return nil, nil, err
		}
		if len(js)+len(text) <= PlainReportBytes {
			return map[string]string{ReportTextKey: string(text), ReportJSONKey: string(js)}, nil, nil
		}
		gzJSON, gzText := gzipped(js), gzipped(text)
		if len(gzJSON)+len(gzText) <= MaxReportBytes || keep == 0 {
			return nil, map[string][]byte{ReportTextKey + GzipSuffix: gzText, ReportJSONKey + GzipSuffix: gzJSON}, nil
		}
	}
}

func gzipped(data []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write(data) // writing to a bytes.Buffer does not fail
	_ = w.Close()
	return b.Bytes()
}

package history

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/result"
)

func f64(v float64) *float64 { return &v }

// withServer gives d a server section: cpuSeconds of Spanner CPU per
// operation over 4 executions (the seed's 4-split key-list read).
func withServer(d *result.Document, cpuSeconds float64) *result.Document {
	d.Server = &result.Server{Version: result.ServerSchemaVersion, Source: "SPANNER_SYS.", Operations: []result.ServerOperation{{Name: "read",
		ClientOps: 3600, Statements: &result.ServerStatements{Minutes: 1, Coverage: 0.9, ClientOps: 3600, Executions: 14400,
			ExecutionsPerOp: f64(4), CPUSecondsPerOp: f64(cpuSeconds)}}}}
	return d
}

// TestSummaryKeepsTheServerFiguresOfACellWhoseRunsAllHaveThem: the
// entry holds the mean of the runs' server CPU per operation (µs, as the
// comparison compares it), their executions per operation and coverage,
// and survives encoding; a cell with a run lacking them has none, rather
// than the mean of the others.
func TestSummaryKeepsTheServerFiguresOfACellWhoseRunsAllHaveThem(t *testing.T) {
	cells := []comparison.Cell{
		{Name: "base", Runs: []*result.Document{withServer(runDoc(t, "b1", 1, 1), 0.000500), withServer(runDoc(t, "b2", 2, 1), 0.000600)}},
		{Name: "half", Runs: []*result.Document{withServer(runDoc(t, "h1", 3, 1), 0.000500), runDoc(t, "h2", 4, 1)}},
	}
	back := summarized(t, cells)
	base, _ := back.Find("base", "read")
	if s := base.Server; s == nil || s.CPUMicrosPerOp < 549.999 || s.CPUMicrosPerOp > 550.001 || s.ExecutionsPerOp == nil || *s.ExecutionsPerOp != 4 || s.Coverage != 0.9 {
		t.Errorf("base's server figures %+v; want 550 µs/op (the mean of 500 and 600), 4 executions/op, coverage 0.9", s)
	}
	if half, _ := back.Find("half", "read"); half.Server != nil {
		t.Errorf("a cell with a run without server statistics has server figures %+v; want none", *half.Server)
	}
}

// TestSummaryKeepsTheServerQueryP99OfACellWhoseRunsAllHaveIt: the entry
// holds the mean of the runs' server query p99 (µs, as the comparison
// compares it), and none when a run has none (a read: no histogram).
func TestSummaryKeepsTheServerQueryP99OfACellWhoseRunsAllHaveIt(t *testing.T) {
	withP99 := func(d *result.Document, seconds float64) *result.Document {
		d.Server.Operations[0].Statements.LatencyP99Seconds = f64(seconds)
		return d
	}
	cells := []comparison.Cell{
		{Name: "base", Runs: []*result.Document{withP99(withServer(runDoc(t, "b1", 1, 1), 0.0015), 0.0466), withP99(withServer(runDoc(t, "b2", 2, 1), 0.0015), 0.0434)}},
		{Name: "half", Runs: []*result.Document{withP99(withServer(runDoc(t, "h1", 3, 1), 0.0015), 0.0466), withServer(runDoc(t, "h2", 4, 1), 0.0015)}},
	}
	back := summarized(t, cells)
	base, _ := back.Find("base", "read")
	if s := base.Server; s == nil || s.QueryP99Micros == nil || *s.QueryP99Micros < 44999.99 || *s.QueryP99Micros > 45000.01 {
		t.Errorf("base's server figures %+v; want a query p99 of 45000 µs (the mean of 46.6 and 43.4 ms)", s)
	}
	if half, _ := back.Find("half", "read"); half.Server == nil || half.Server.QueryP99Micros != nil {
		t.Errorf("a cell with a run without a server query p99 has server figures %+v; want its CPU but no p99", half.Server)
	}
}

// TestEntriesWithoutServerFiguresStillDecode: an entry written before the
// server figures (no "server" key) decodes, with none.
func TestEntriesWithoutServerFiguresStillDecode(t *testing.T) {
	old := `{"schemaVersion":"spanbench.io/campaign-history/v1","iteration":"it-0","scheduledTime":"2026-11-23T02:00:00Z",` +
		`"cells":[{"name":"base","runs":1,"operations":[{"name":"read","ok":10,"seconds":1,"throughput":10,"latency":{"count":0}}]}]}`
	e, err := Decode(gzipped(t, old))
	if err != nil {
		t.Fatalf("an entry of before the server figures does not decode: %v", err)
	}
	if op, ok := e.Find("base", "read"); !ok || op.Server != nil {
		t.Errorf("the old entry's operation %+v; want it, without server figures", op)
	}
}

func TestDecodeRefusesServerFiguresNoSummaryWrites(t *testing.T) {
	for name, server := range map[string]string{
		"negative cpu":   `{"cpuMicrosPerOp":-1,"coverage":1}`,
		"coverage above": `{"cpuMicrosPerOp":1,"coverage":2}`,
		"negative execs": `{"cpuMicrosPerOp":1,"coverage":1,"executionsPerOp":-4}`,
		"negative p99":   `{"cpuMicrosPerOp":1,"coverage":1,"queryP99Micros":-46600}`,
	} {
		doc := `{"schemaVersion":"spanbench.io/campaign-history/v1","iteration":"it-0","scheduledTime":"2026-11-23T02:00:00Z",` +
			`"cells":[{"name":"base","runs":1,"operations":[{"name":"read","ok":10,"seconds":1,"throughput":10,"latency":{"count":0},"server":` + server + `}]}]}`
		if _, err := Decode(gzipped(t, doc)); err == nil || !strings.Contains(err.Error(), "server figures") {
			t.Errorf("%s: decoded (err %v); want an error naming the server figures", name, err)
		}
	}
}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

package report

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/spanbench/spanbench/result"
)

func f64(v float64) *float64 { return &v }

// withServerFigures gives d the seed's 4-split key-list read as Spanner's
// statistics, an update the TOP tables did not keep, and Cloud
// Monitoring's figures of a warm-up the server ended.
func withServerFigures(d *result.Document) *result.Document {
	at := d.Start.Truncate(time.Minute)
	d.Server = &result.Server{Version: result.ServerSchemaVersion, Source: "SPANNER_SYS.", Minutes: []time.Time{at.Add(time.Minute)},
		Operations: []result.ServerOperation{
			{Name: "read", ClientOps: 111474, Statements: &result.ServerStatements{Minutes: 1, Coverage: 1, ClientOps: 111474, Executions: 445896,
				ExecutionsPerOp: f64(4), CPUSecondsPerExecution: f64(0.000141), CPUSecondsPerOp: f64(0.000564), RowsPerOp: f64(10)}},
			{Name: "update", ClientOps: 1000, NotCaptured: []string{"no row"}},
		}}
	d.Monitoring = &result.Monitoring{Version: result.MonitoringSchemaVersion, WindowStart: at, WindowEnd: at.Add(5 * time.Minute),
		MeasuredFrom: at.Add(2 * time.Minute), AlignmentSeconds: 60,
		CPU:      []result.MonitoringCPU{{Priority: "high", Location: "asia-northeast1", MeanRatio: 0.523, MaxRatio: 0.61}},
		Latency:  []result.MonitoringLatency{{Method: "Commit", Count: 600, P50Seconds: 0.004, P99Seconds: 0.0125}},
		Requests: []result.MonitoringRequests{{Status: "OK", Count: 1200}},
		WarmUp:   &result.MonitoringWarmUp{Settled: true, SettledAt: at.Add(2 * time.Minute), EndedBy: result.WarmUpEndedByServer}}
	return d
}

// tableCells are the cells of every table.summary whose data-section is
// section, row by row.
func tableCells(doc *html.Node, section string) [][]string {
	var rows [][]string
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode || n.Data != "table" || attr(n, "data-section") != section {
			return
		}
		walk(n, func(tr *html.Node) {
			if tr.Type != html.ElementNode || tr.Data != "tr" {
				return
			}
			var row []string
			for td := tr.FirstChild; td != nil; td = td.NextSibling {
				if td.Type == html.ElementNode && (td.Data == "td" || td.Data == "th") {
					row = append(row, textOf(td))
				}
			}
			rows = append(rows, row)
		})
	})
	return rows
}

func textOf(n *html.Node) string {
	var b strings.Builder
	walk(n, func(m *html.Node) {
		if m.Type == html.TextNode {
			b.WriteString(m.Data)
		}
	})
	return b.String()
}

// TestServerFiguresAreShownOnlyWhenTheDocumentHasThem: a document without
// server figures has no server or Cloud Monitoring table; with them, the
// page shows CPU/op, executions/op and coverage per operation, "not
// captured" rather than zeros, CPU by priority and region, server p99 per
// method, and which signal ended the warm-up.
func TestServerFiguresAreShownOnlyWhenTheDocumentHasThem(t *testing.T) {
	plain, _ := render(t, docRun(t, warmingRun("plain", "read", "update")))
	for _, absent := range []string{`data-section="server"`, `data-section="cpu"`, "Cloud Monitoring", "Spanner statistics"} {
		if strings.Contains(plain, absent) {
			t.Errorf("a document without server figures shows %q", absent)
		}
	}
	run := docRun(t, warmingRun("served", "read", "update"))
	withServerFigures(run.Doc)
	page, doc := render(t, run)
	server := tableCells(doc, "server")
	if len(server) != 3 || strings.Join(server[1][:3], " ") != "read 564µs 4" || server[1][9] != "1.000" {
		t.Errorf("the server table is %q; want a header, read at 564µs/op over 4 executions with coverage 1.000, and the update", server)
	}
	if len(server) == 3 && !strings.Contains(server[2][1], "not captured") {
		t.Errorf("the update's row is %q; want it said not captured", server[2])
	}
	if len(server) == 3 && (server[1][5] != "not captured" || server[1][6] != "not captured") {
		t.Errorf("the read's p50 and p99 are %q and %q; want not captured (reads have no latency histogram)", server[1][5], server[1][6])
	}
	if cpu := tableCells(doc, "cpu"); len(cpu) != 2 || strings.Join(cpu[1], " ") != "high asia-northeast1 52.3 % 61.0 %" {
		t.Errorf("the CPU table is %q; want high in asia-northeast1 at 52.3 %% mean, 61.0 %% max", cpu)
	}
	if lat := tableCells(doc, "latency"); len(lat) != 2 || strings.Join(lat[1], " ") != "Commit 600 4ms 12.5ms" {
		t.Errorf("the latency table is %q; want Commit p99 12.5ms", lat)
	}
	if !strings.Contains(page, "the Server signal ended the warm-up") {
		t.Error("the page does not say the Server signal ended the warm-up")
	}
}

// TestServerPercentilesLockWaitAndTablesAreShown: a query's server p50
// and p99, a transaction's p99 and lock wait, the contended row ranges
// and the coarser tables read are on the page.
func TestServerPercentilesLockWaitAndTablesAreShown(t *testing.T) {
	run := docRun(t, warmingRun("locks", "read", "update"))
	d := withServerFigures(run.Doc)
	d.Server.Granularity = "10MINUTE"
	d.Server.Operations[0].Statements.LatencyP50Seconds, d.Server.Operations[0].Statements.LatencyP99Seconds = f64(0.003), f64(0.0466)
	d.Server.Operations[1] = result.ServerOperation{Name: "update", ClientOps: 1000,
		Transactions: &result.ServerTransactions{Minutes: 1, Coverage: 1, ClientOps: 1000, Attempts: 1000, TotalLatencyP99Seconds: f64(0.01592)},
		Locks:        &result.ServerLocks{Samples: 6, Ranges: 3, WaitSecondsInvolved: 3.5, WaitSecondsShare: 3}}
	d.Server.LockRanges = []result.ServerLockRange{{Key: "usertable(user42)", WaitSeconds: 3, Intervals: 2, Operations: []string{"update"}}}
	page, doc := render(t, run)
	server := tableCells(doc, "server")
	if len(server) != 3 || server[1][5] != "3ms" || server[1][6] != "46.6ms" || server[2][12] != "15.9ms" || server[2][13] != "3s" {
		t.Errorf("the server table is %q; want the read's p50 3ms and p99 46.6ms, the update's txn p99 15.9ms and lock wait 3s", server)
	}
	for _, want := range []string{"1 whole 10MINUTE interval(s), from the 10MINUTE tables", "lock contention: usertable(user42): 3s lock wait over 2 interval(s)"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestTheServersWarmUpEndIsToldAsACutOnlyWhenItCutTheFigures: a document
// whose warm-up the server's end cut says the figures start where the
// server settled, without a warning; one whose server ended it without
// a cut (a report stored before the cut existed) warns that the figures
// include server warm-up minutes.
func TestTheServersWarmUpEndIsToldAsACutOnlyWhenItCutTheFigures(t *testing.T) {
	for _, cut := range []bool{true, false} {
		run := docRun(t, warmingRun("served", "read", "update"))
		withServerFigures(run.Doc)
		if cut {
			run.Doc.WarmUp.EndedBy, run.Doc.WarmUp.ServerIntervals = result.WarmUpEndedByServer, 1
		}
		page, _ := render(t, run)
		says := strings.Contains(page, "after the client, and the figures start there")
		warns := strings.Contains(page, "the figures include server warm-up minutes")
		if says != cut || warns == cut {
			t.Errorf("cut %v: the page says the figures start at the server's end: %v, warns they include its warm-up: %v", cut, says, warns)
		}
	}
}

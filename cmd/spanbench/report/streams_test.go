package report

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/spanbench/spanbench/result"
)

// streamsRun is a streams run's document of two streams of testRun's
// operations: "online" from the start and "batch", 30 s in, with a wall
// time.
func streamsRun(t *testing.T) Run {
	t.Helper()
	online := testRun{name: "mixed", ops: []string{"read", "update"}, intervals: 12, rate: 100, baseMicros: 2000, seed: 3}.document(t)
	batch := testRun{name: "mixed", ops: []string{"read", "update"}, intervals: 6, rate: 40, baseMicros: 9000, seed: 4}.document(t)
	online.Stream, batch.Stream = "online", "batch"
	batch.Start, batch.End = batch.Start.Add(30*time.Second), batch.End.Add(30*time.Second)
	batch.Shards[0].Started, batch.Shards[0].Ended = batch.Start, batch.End
	batch.Shards[0].WallTimeSeconds = 12.5
	base := &result.Document{SchemaVersion: result.SchemaVersion, Run: "mixed", Spec: online.Spec, Target: online.Target,
		Environment: online.Environment, Start: t0, IntervalSeconds: online.IntervalSeconds, Shards: []result.Shard{{Index: 0, Count: 1}}}
	d, err := result.StreamsDocument(base, []*result.Document{online, batch})
	if err != nil {
		t.Fatal(err)
	}
	return Run{Label: "mixed", Doc: d}
}

// TestPageShowsEachStream: a streams run's page has the merged table, then
// a section per stream with its table, its batch wall time and its own
// time plots, marked with the stream's name.
func TestPageShowsEachStream(t *testing.T) {
	page, doc := render(t, streamsRun(t))
	sections := map[string]*html.Node{}
	walk(doc, func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "section" && attr(n, "class") == "stream" {
			sections[attr(n, "data-stream")] = n
		}
	})
	if len(sections) != 2 || sections["online"] == nil || sections["batch"] == nil {
		t.Fatalf("the page has stream sections %v; want online and batch", sections)
	}
	for name, sec := range sections {
		var tables, plots int
		walk(sec, func(n *html.Node) {
			switch {
			case n.Type == html.ElementNode && n.Data == "table" && attr(n, "data-section") == "stream":
				tables++
			case n.Type == html.ElementNode && n.Data == "figure" && attr(n, "data-stream") == name:
				plots++
			}
		})
		if tables != 1 || plots < 2 {
			t.Errorf("stream %s's section has %d tables and %d of its plots; want its table and its throughput and latency plots", name, tables, plots)
		}
	}
	if !strings.Contains(page, "batch wall time 12.5s") || !strings.Contains(page, "Started 30s after the run") {
		t.Errorf("the batch's section lacks its wall time or its start offset")
	}
	if strings.Contains(page, "The result holds no intervals") {
		t.Errorf("the page says a streams run has no time series; each stream has its own")
	}
}

// TestPageSaysABatchWasCutShort: a batch stream (iterations in the spec)
// whose window ended first has, in its own section only, a warning that
// says so in place of a wall time.
func TestPageSaysABatchWasCutShort(t *testing.T) {
	run := streamsRun(t)
	spec, err := result.NewSpec([]byte(`{"type":"YCSB","operations":[{"name":"read","type":"Read","weight":1},{"name":"update","type":"Update","weight":1}],` +
		`"streams":[{"name":"online","operations":[{"name":"read","weight":1}]},{"name":"batch","operations":[{"name":"update","weight":1}],"iterations":800}]}`))
	if err != nil {
		t.Fatal(err)
	}
	run.Doc.Spec = spec
	for i := range run.Doc.Streams {
		run.Doc.Streams[i].WallTimeSeconds = 0
	}
	_, doc := render(t, run)
	warned := map[string]string{}
	walk(doc, func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "section" && attr(n, "class") == "stream" {
			walk(n, func(m *html.Node) {
				if m.Type == html.ElementNode && m.Data == "span" && hasAttr(m, "data-cut-short") && m.FirstChild != nil {
					warned[attr(n, "data-stream")] = m.FirstChild.Data
				}
			})
		}
	})
	if len(warned) != 1 || !strings.Contains(warned["batch"], "before its 800 iterations did") {
		t.Errorf("cut-short warnings by stream: %q; want the batch's alone, naming its 800 iterations", warned)
	}
}

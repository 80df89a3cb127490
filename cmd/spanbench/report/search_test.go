package report

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/capacity"
	"github.com/spanbench/spanbench/result/histogram"
)

// searchSLO is the test search's SLO: a p99 bound on read, a p99.9 bound
// on update (a percentile the curve does not draw by default), errors
// and CPU.
var searchSLO = []string{"p99(read) <= 20ms", "p99.9(update) <= 400ms", "errors <= 1%", "cpu <= 65%"}

// searchDocument is what `spanbench run` writes for a capacity search
// against a system that completes at most 60 operations/s: the search
// (capacity.Search, the real one) picks each rate, each step's intervals
// are generated from a queue whose latency rises as the rate nears 60/s
// and explodes past it (the excess becomes missed sends), and each step
// is judged from its own measured intervals (capacity.Measure, Evaluate),
// as the CLI does. read runs twice as often as update, whose latency is
// twice read's; the CPU rises with the rate to 70 % at 60/s.
func searchDocument(t *testing.T, name string) *result.Document {
	t.Helper()
	const (
		interval = 1.0 // seconds
		warm     = 1   // warm-up intervals a step
		measured = 3   // measured intervals a step
		ceiling  = 60.0
	)
	slo, err := capacity.ParseSLO(searchSLO)
	if err != nil {
		t.Fatal(err)
	}
	slo = slo.Resolve("regional-asia-northeast1")
	p := capacity.Params{From: 10, Max: 160, Resolution: 5}
	search, err := capacity.New(p)
	if err != nil {
		t.Fatal(err)
	}
	sec := &result.Search{From: p.From, Max: p.Max, Resolution: p.Resolution, Confirm: string(capacity.ConfirmMajority),
		WarmUpSeconds: warm * interval, StepSeconds: measured * interval, MaxSteps: search.MaxSteps()}
	for _, c := range slo {
		sec.SLO = append(sec.SLO, c.String())
	}
	sloJSON, err := json.Marshal(searchSLO)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := result.NewSpec(fmt.Appendf(nil, `{"type":"YCSB","operations":[{"name":"read","type":"Read","weight":2},{"name":"update","type":"Update","weight":1}],"load":{"search":{"from":10,"max":160,"resolution":5,"warmUp":"1s","stepDuration":"3s","slo":%s}},"warmUp":{"mode":"None"},"interval":"1s"}`, sloJSON))
	if err != nil {
		t.Fatal(err)
	}
	d := &result.Document{SchemaVersion: result.SchemaVersion, Run: name, Spec: spec,
		Target:          result.Target{Endpoint: "spanner.googleapis.com:443", Project: "p", Instance: "i", Database: "d", InstanceConfig: "regional-asia-northeast1", ProcessingUnits: 3000},
		Environment:     result.Environment{SpanbenchVersion: "test", ClientVersion: "v1", GoVersion: "go1.26"},
		Start:           t0,
		IntervalSeconds: interval,
		Shards:          []result.Shard{{Index: 0, Count: 1, Started: t0}},
	}
	rng := rand.New(rand.NewPCG(27, 3))
	for k := 0; ; k++ {
		rate, due := search.Next()
		if !due {
			break
		}
		for i := range warm + measured {
			in := result.Interval{Index: k*(warm+measured) + i, TargetRate: rate}
			done := math.Min(rate, ceiling)
			in.Missed = uint64(math.Round((rate - done) * interval))
			for j, op := range []string{"read", "update"} {
				share := 2.0 / 3
				if j == 1 {
					share = 1.0 / 3
				}
				median := 2000 * float64(j+1) / (1 - math.Min(rate/ceiling, 0.95)) // µs
				if rate > ceiling {
					median *= 10 * rate / ceiling // a backlog that grows with the excess
				}
				lat, svc := histogram.New(), histogram.New()
				n := int(math.Round(done * share * interval))
				for range n {
					v := median * (0.6 + rng.ExpFloat64()*0.4)
					record(t, lat, int64(v))
					record(t, svc, int64(v*0.8))
				}
				o, err := result.NewIntervalOperation(op, result.Counts{OK: uint64(n), Rows: uint64(n)}, lat, svc, histogram.New())
				if err != nil {
					t.Fatal(err)
				}
				in.Operations = append(in.Operations, o)
			}
			d.Intervals = append(d.Intervals, in)
			d.Shards[0].Missed += in.Missed
		}
		first, end := k*(warm+measured)+warm, (k+1)*(warm+measured)
		m, err := capacity.Measure(d.Intervals, first, end, interval, rate)
		if err != nil {
			t.Fatal(err)
		}
		m.CPU = []result.MonitoringCPU{{Priority: "high", Location: "asia-northeast1", MeanRatio: 0.7 * math.Min(rate, ceiling) / ceiling}}
		r, err := capacity.Evaluate(slo, m)
		if err != nil {
			t.Fatal(err)
		}
		r.FirstInterval, r.EndInterval = first, end
		if err := search.Record(r); err != nil {
			t.Fatal(err)
		}
	}
	sec.Outcome = search.Outcome(d.Target.ProcessingUnits)
	d.Search = sec
	d.End = t0.Add(time.Duration(float64(len(d.Intervals))*interval) * time.Second)
	d.Shards[0].Ended = d.End
	if err := result.Finalize(d); err != nil {
		t.Fatal(err)
	}
	if !sec.Outcome.Done || sec.Outcome.Capacity == 0 || sec.Outcome.FirstFailing == 0 {
		t.Fatalf("the test search did not find a capacity between two rates: %+v", sec.Outcome)
	}
	return d
}

// TestSearchSectionShowsTheStepsAndTheOutcome: a search document's page
// has the step table as the text report has it (one row per step, each
// SLO condition a column, a failing figure and a failing step marked),
// the capacity line, and a curve; a document of another load has no
// search section.
func TestSearchSectionShowsTheStepsAndTheOutcome(t *testing.T) {
	d := searchDocument(t, "search-1")
	page, doc := render(t, Run{Label: d.Run, Doc: d})
	rows := tableCells(doc, "steps")
	s := d.Search
	if len(rows) != len(s.Outcome.Steps)+1 {
		t.Fatalf("the step table has %d rows, want a heading and %d steps", len(rows), len(s.Outcome.Steps))
	}
	wantHead := append([]string{"step", "offered/s", "achieved/s", "cpu"}, append(slices.Clone(s.SLO), "verdict")...)
	if !slices.Equal(rows[0], wantHead) {
		t.Errorf("the step table's heading is %q, want %q", rows[0], wantHead)
	}
	for i, st := range s.Outcome.Steps {
		row := rows[i+1]
		verdict := map[bool]string{true: "pass", false: "FAIL"}[st.Pass]
		if row[1] != result.FormatRate(st.Offered) || row[2] != strconv.FormatFloat(st.Achieved, 'f', 1, 64) || row[len(row)-1] != verdict {
			t.Errorf("step %d shows %q; want offered %g, achieved %.1f, %s", i+1, row, st.Offered, st.Achieved, verdict)
		}
		for j, f := range st.Figures {
			if row[4+j] != f.Text() {
				t.Errorf("step %d, %s shows %q, want %q", i+1, f.Condition, row[4+j], f.Text())
			}
		}
	}
	want := fmt.Sprintf("capacity: %s ops/s; first failing rate %s ops/s", result.FormatRate(s.Outcome.Capacity), result.FormatRate(s.Outcome.FirstFailing))
	if !strings.Contains(page, want) || !strings.Contains(page, "capacity per node (1,000 processing units)") {
		t.Errorf("the page lacks the outcome %q and the capacity per node", want)
	}
	if figs := figures(doc); len(figs["curve"]) != 1 {
		t.Errorf("the page has %d curve figures, want 1", len(figs["curve"]))
	}

	plain, doc := render(t, docRun(t, warmingRun("plain", "read")))
	if strings.Contains(plain, "Capacity search") || len(figures(doc)["curve"]) != 0 || len(tableCells(doc, "steps")) != 0 {
		t.Error("a run without a search shows a search section")
	}
}

// TestCurvePointsAreEachStepsOwnPercentiles: each point of an operation's
// curve is the step's achieved throughput and the percentile of that
// operation's latencies in the step's measured intervals only, merged
// from their histograms; steps come in order of offered rate.
func TestCurvePointsAreEachStepsOwnPercentiles(t *testing.T) {
	d := searchDocument(t, "search-1")
	curves, err := stepCurves(d)
	if err != nil {
		t.Fatal(err)
	}
	steps := slices.Clone(d.Search.Outcome.Steps)
	slices.SortStableFunc(steps, func(a, b result.SearchStep) int { return cmpFloat(a.Offered, b.Offered) })
	for _, c := range curves {
		if len(c.points) != len(steps) {
			t.Fatalf("%s: %d points, want one per step (%d)", c.name, len(c.points), len(steps))
		}
		for k, st := range steps {
			h := histogram.New()
			for _, in := range d.Intervals {
				if in.Index < st.FirstInterval || in.Index >= st.EndInterval {
					continue
				}
				for _, op := range in.Operations {
					if op.Name == c.name {
						part, err := histogram.Decode(op.LatencyHistogram)
						if err != nil {
							t.Fatal(err)
						}
						h.Merge(part)
					}
				}
			}
			pt := c.points[k]
			if pt.achieved != st.Achieved || pt.pass != st.Pass {
				t.Errorf("%s point %d at %g ops/s (pass %v); want step at offered %g: achieved %g, pass %v", c.name, k, pt.achieved, pt.pass, st.Offered, st.Achieved, st.Pass)
			}
			for _, q := range []float64{50, 99} {
				if want := millis(h.ValueAtQuantile(q)); pt.latency[q] != want {
					t.Errorf("%s point %d (offered %g): p%g %g ms, want %g ms from the step's own intervals", c.name, k, st.Offered, q, pt.latency[q], want)
				}
			}
		}
	}
	// The SLO's p99.9 on update is drawn on update's panel only.
	if !slices.Contains(curves[1].percentiles, 99.9) || slices.Contains(curves[0].percentiles, 99.9) {
		t.Errorf("percentiles drawn: read %v, update %v; want p99.9 on update only", curves[0].percentiles, curves[1].percentiles)
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestCurveDrawsTheSLOBoundAndTheCapacity: each operation's panel draws
// the SLO's latency bounds that read it as horizontal lines at the bound,
// and the capacity as a vertical line at the achieved throughput of the
// step that passed at the capacity's rate; the legend names both. A
// search where no step passed has no capacity line.
func TestCurveDrawsTheSLOBoundAndTheCapacity(t *testing.T) {
	d := searchDocument(t, "search-1")
	_, doc := render(t, Run{Label: d.Run, Doc: d})
	fig := figures(doc)["curve"][0]
	if got := panelOperations(fig); !slices.Equal(got, []string{"read", "update"}) {
		t.Errorf("curve panels %q, want read and update", got)
	}
	capX, _ := capacityAchieved(d.Search.Outcome)
	legend := legendLabels(fig)
	for _, want := range []string{"SLO p99(read) <= 20ms", "SLO p99.9(update) <= 400ms", "p99.9 (the SLO's)",
		fmt.Sprintf("capacity %s ops/s (achieved %.1f/s)", result.FormatRate(d.Search.Outcome.Capacity), capX)} {
		if !slices.Contains(legend, want) {
			t.Errorf("the curve's legend %q lacks %q", legend, want)
		}
	}
	if h, v := straightLines(fig, hexColor(sloColor)); h != 2 || v != 0 {
		t.Errorf("%d horizontal and %d vertical lines in the SLO's colour; want 2 horizontal (one bound per panel)", h, v)
	}
	if _, v := straightLines(fig, "#000000"); v != 2 {
		t.Errorf("%d vertical black lines; want the capacity in each of the 2 panels", v)
	}

	// Nothing passed: no capacity to mark.
	for i := range d.Search.Outcome.Steps {
		d.Search.Outcome.Steps[i].Pass = false
	}
	d.Search.Outcome.Capacity = 0
	_, doc = render(t, Run{Label: d.Run, Doc: d})
	fig = figures(doc)["curve"][0]
	if _, v := straightLines(fig, "#000000"); v != 0 {
		t.Errorf("a search where no step passed draws %d capacity lines", v)
	}
}

// straightLines counts the two-point data lines (1.5 pt wide: not an
// axis or a tick) stroked in colour c (#rrggbb) that are horizontal and
// vertical.
func straightLines(n *html.Node, c string) (horizontal, vertical int) {
	walk(n, func(m *html.Node) {
		style := strings.ToLower(attr(m, "style"))
		if m.Type != html.ElementNode || m.Data != "path" || !strings.Contains(style, "stroke:"+c+";stroke-width:1.5") {
			return
		}
		var xs, ys []string
		for _, part := range strings.FieldsFunc(attr(m, "d"), func(r rune) bool { return r == 'M' || r == 'L' }) {
			xy := strings.Fields(strings.ReplaceAll(part, ",", " "))
			if len(xy) == 2 {
				xs, ys = append(xs, xy[0]), append(ys, xy[1])
			}
		}
		if len(xs) != 2 {
			return
		}
		switch {
		case ys[0] == ys[1] && xs[0] != xs[1]:
			horizontal++
		case xs[0] == xs[1] && ys[0] != ys[1]:
			vertical++
		}
	})
	return horizontal, vertical
}

// TestAStepOutsideTheResultIsNotDrawn: a result file is untrusted; a step
// whose window lies outside the document's intervals (here one that would
// make the measurement size its work by two billion intervals) leaves the
// curve out with a note naming the step, rather than measuring it.
func TestAStepOutsideTheResultIsNotDrawn(t *testing.T) {
	d := searchDocument(t, "search-1")
	d.Search.Outcome.Steps[2].EndInterval = 1 << 31
	page, doc := render(t, Run{Label: d.Run, Doc: d})
	if len(figures(doc)["curve"]) != 0 || !strings.Contains(page, "The latency-throughput curve is not drawn: step 3 measures intervals") {
		t.Error("a step outside the result's intervals was drawn, or its note does not name it")
	}
	if rows := tableCells(doc, "steps"); len(rows) != len(d.Search.Outcome.Steps)+1 {
		t.Errorf("the step table has %d rows; want every step still listed", len(rows))
	}
}

// TestStepTablesShowAFiguresNoteInItsPlaceUnmarked: a step whose cpu
// condition was not measured (Cloud Monitoring published none of its
// minutes) shows the condition's note in the figure's cell, in the HTML
// step table and in the text table `spanbench report` prints, with no
// verdict mark. It pins what result.SearchFigure.ValueText and
// figureText already did when status.search gained its notes; it fails if
// the note gives way to "-" or gets the failed mark " x".
func TestStepTablesShowAFiguresNoteInItsPlaceUnmarked(t *testing.T) {
	d := searchDocument(t, "search-note")
	const note = "not measured: Cloud Monitoring published none of the step's minutes in time"
	st := &d.Search.Outcome.Steps[0]
	cpu := slices.IndexFunc(st.Figures, func(f result.SearchFigure) bool { return strings.HasPrefix(f.Condition, "cpu") })
	if cpu < 0 {
		t.Fatalf("the test search's step has no cpu figure: %+v", st.Figures)
	}
	st.CPU, st.Figures[cpu] = nil, result.SearchFigure{Condition: st.Figures[cpu].Condition, Note: note}
	_, doc := render(t, Run{Label: d.Run, Doc: d})
	if row := tableCells(doc, "steps")[1]; row[4+cpu] != note || row[3] != "not measured" {
		t.Errorf("the HTML step table's first step shows %q; want cpu %q and the %s figure's note %q", row, "not measured", st.Figures[cpu].Condition, note)
	}
	var text strings.Builder
	if err := result.WriteTable(&text, d); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text.String(), "\n")
	first := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "1  ") })
	if first < 0 || !strings.Contains(lines[first], note) || strings.Contains(lines[first], note+" x") {
		t.Errorf("the text step table's first step does not show the note %q unmarked:\n%s", note, text.String())
	}
}

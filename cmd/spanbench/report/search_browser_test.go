package report

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestSearchAndCostInChromium opens a page of two runs in headless
// Chromium: a capacity search priced by an override catalog, and a run
// its catalog has no price for. No console message, no request; the
// search's step table and both cost tables laid out with the document's
// figures; the latency-throughput curve drawn, a panel per operation,
// each with a line through every step, a mark per step, its legend beside
// it, the SLO's bound and the capacity in the colours the legend names.
// The screenshot (search-cost.png) is an artefact.
func TestSearchAndCostInChromium(t *testing.T) {
	d := searchDocument(t, "search-1")
	d.Cost = pricedCost()
	plain := docRun(t, warmingRun("unpriced", "read"))
	plain.Doc.Cost = unknownCost()
	var page bytes.Buffer
	if err := WriteHTML(&page, Run{Label: d.Run, Doc: d}, plain); err != nil {
		t.Fatal(err)
	}
	p := browsePage(t, page.Bytes(), "search-cost")

	steps := d.Search.Outcome.Steps
	var costs [][][]string
	for _, tb := range p.tables {
		if tb.Width < 100 || tb.Height < 20 {
			t.Errorf("table %s is %.0fx%.0f px; want it laid out", tb.Section, tb.Width, tb.Height)
		}
		switch tb.Section {
		case "steps":
			if len(tb.Rows) != len(steps) {
				t.Errorf("the step table shows %d rows, want %d", len(tb.Rows), len(steps))
			}
			for i, row := range tb.Rows {
				if want := map[bool]string{true: "pass", false: "FAIL"}[steps[i].Pass]; row[len(row)-1] != want {
					t.Errorf("step %d shows %q, want %s", i+1, row, want)
				}
			}
		case "cost":
			costs = append(costs, tb.Rows)
		}
	}
	if len(costs) != 2 || costs[0][4][1] != "0.067512 USD" || !strings.HasPrefix(costs[1][4][1], "unknown: the catalog has no compute price") {
		t.Errorf("cost tables %q; want the priced run's total 0.067512 USD, then the unpriced run's total unknown with its reason", costs)
	}

	var curve *figureLayout
	for i := range p.figures {
		if p.figures[i].Kind == "curve" {
			if curve != nil {
				t.Fatal("two curve figures; want the search's one")
			}
			curve = &p.figures[i]
		}
	}
	if curve == nil || curve.Run != "0" {
		t.Fatalf("the page has no curve in the search's section: %+v", curve)
	}
	checkLegendBeside(t, *curve)
	var panels []string
	for _, a := range curve.Areas {
		panels = append(panels, a.Operation)
		if a.W < 150 || a.H < 60 {
			t.Errorf("the curve panel of %s is %.0fx%.0f px; want it laid out", a.Operation, a.W, a.H)
		}
	}
	if !slices.Equal(panels, []string{"read", "update"}) {
		t.Errorf("curve panels %q, want read and update", panels)
	}
	// Each panel's p50 and p99 (and update's p99.9) run through every step.
	through := 0
	for _, l := range curve.Lines {
		if l.Points == len(steps) {
			through++
		}
	}
	if through != 5 {
		t.Errorf("%d lines through the %d steps; want read's p50 and p99 and update's p50, p99 and p99.9 (5)", through, len(steps))
	}
	legend := map[string]string{}
	for _, e := range curve.Entries {
		legend[e.Label] = e.Color
	}
	for _, ref := range []string{"SLO p99(read) <= 20ms", "step passed the SLO", "step failed the SLO"} {
		c, ok := legend[ref]
		if !ok {
			t.Errorf("the curve's legend lacks %q: %v", ref, legend)
			continue
		}
		if strings.HasPrefix(ref, "SLO") && !slices.Contains(curve.Painted, c) {
			t.Errorf("the legend's %q colour %s is not painted in the chart (%v)", ref, c, curve.Painted)
		}
	}
}

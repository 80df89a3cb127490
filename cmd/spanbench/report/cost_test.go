package report

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/result"
)

// pricedCost is a run priced by an override catalog: every line known
// but the runners', which the admin did not price.
func pricedCost() *result.Cost {
	return &result.Cost{Currency: "USD", Catalog: "override prices.yaml (taken 2026-11-01)", Holding: "Existing",
		HeldFrom: t0, HeldTo: t0.Add(90 * time.Second), ProcessingUnits: 3000,
		Estimate: result.CostFigure{Amount: "0.10"}, Instance: result.CostFigure{Amount: "0.0675"},
		Storage: result.CostFigure{Amount: "0.000012"}, Runners: result.CostFigure{Unknown: "no price per vCPU-hour for runner pods"},
		Total: result.CostFigure{Amount: "0.067512"}, PerMillionOperations: result.CostFigure{Amount: "12.50"},
		Notes: []string{"runners are left out of the total: unpriced"}}
}

// unknownCost is a run whose configuration the catalog has no price for:
// the common case, as the embedded catalog holds no prices.
func unknownCost() *result.Cost {
	why := "the catalog has no compute price for regional-asia-northeast1"
	return &result.Cost{Currency: "USD", Catalog: "embedded catalog taken 2026-11-20", Holding: "Ephemeral",
		HeldFrom: t0, HeldTo: t0.Add(2 * time.Minute), ProcessingUnits: 1000,
		Estimate: result.CostFigure{Unknown: why}, Instance: result.CostFigure{Unknown: why},
		Storage: result.CostFigure{Unknown: "the catalog has no storage price for regional-asia-northeast1"},
		Runners: result.CostFigure{Unknown: "no price per vCPU-hour for runner pods"},
		Total:   result.CostFigure{Unknown: why}, PerMillionOperations: result.CostFigure{Unknown: why}}
}

// TestCostIsShownWithEveryLineAndUnknownsSaidWithTheirReason: a priced
// run shows each line's amount in its currency; an unpriced one says
// "unknown" with the reason, never an amount of zero; a document without
// a cost has no cost table.
func TestCostIsShownWithEveryLineAndUnknownsSaidWithTheirReason(t *testing.T) {
	lines := []string{"estimate", "instance", "storage", "runners", "total", "per million operations"}
	for _, tc := range []struct {
		name string
		cost *result.Cost
		want []string
	}{
		{"priced", pricedCost(), []string{"0.10 USD", "0.0675 USD", "0.000012 USD", "unknown: no price per vCPU-hour for runner pods", "0.067512 USD", "12.50 USD"}},
		{"unknown", unknownCost(), []string{"unknown: the catalog has no compute price for regional-asia-northeast1",
			"unknown: the catalog has no compute price for regional-asia-northeast1",
			"unknown: the catalog has no storage price for regional-asia-northeast1",
			"unknown: no price per vCPU-hour for runner pods",
			"unknown: the catalog has no compute price for regional-asia-northeast1",
			"unknown: the catalog has no compute price for regional-asia-northeast1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := docRun(t, warmingRun(tc.name, "read"))
			r.Doc.Cost = tc.cost
			page, doc := render(t, r)
			rows := tableCells(doc, "cost")
			if len(rows) != len(lines)+1 {
				t.Fatalf("the cost table has rows %q; want a heading and %v", rows, lines)
			}
			for i, line := range lines {
				if got := rows[i+1][:2]; got[0] != line || got[1] != tc.want[i] {
					t.Errorf("cost line %d shows %q, want %s: %q", i, got, line, tc.want[i])
				}
			}
			if !strings.Contains(page, tc.cost.Catalog) || !strings.Contains(page, "held "+tc.cost.Holding) {
				t.Errorf("the page does not say the prices' catalog %q and the holding %s", tc.cost.Catalog, tc.cost.Holding)
			}
			for _, n := range tc.cost.Notes {
				if !strings.Contains(page, "cost note: "+n) {
					t.Errorf("the page lacks the cost note %q", n)
				}
			}
			if slices.ContainsFunc(rows[1:], func(r []string) bool { return strings.HasPrefix(r[1], "0.00 ") || r[1] == "0 USD" }) {
				t.Errorf("an amount of zero is shown: %q", rows)
			}
		})
	}
	_, doc := render(t, docRun(t, warmingRun("free", "read")))
	if rows := tableCells(doc, "cost"); len(rows) != 0 {
		t.Errorf("a run without a cost section shows a cost table: %q", rows)
	}
}

package result

import (
	"strings"
	"testing"
)

// TestCostSectionIsCheckedAndKeptForOneDocumentOnly: a report's cost
// section read back survives the checked merge of that one document, is
// dropped (with a note) from a merge of several, and one no manager
// writes is refused.
func TestCostSectionIsCheckedAndKeptForOneDocumentOnly(t *testing.T) {
	good := &Cost{Currency: "USD", Total: CostFigure{Amount: "1.116667"}, Runners: CostFigure{Unknown: "no price"}}
	if err := good.Check(); err != nil {
		t.Fatalf("a written cost section is refused: %v", err)
	}
	for name, bad := range map[string]*Cost{
		"amount in exponent form": {Total: CostFigure{Amount: "1e9"}},
		"amount without cents":    {Total: CostFigure{Amount: "12"}},
		"too many notes":          {Notes: make([]string, 9)},
		"a long reason":           {Storage: CostFigure{Unknown: strings.Repeat("x", 513)}},
	} {
		if err := bad.Check(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}

	m := &Merger{out: &Document{}}
	m.keepCost(&Document{Cost: good}, true)
	if m.out.Cost != good {
		t.Errorf("one document's cost not kept: %+v", m.out.Cost)
	}
	m.keepCost(&Document{}, false)
	if m.out.Cost != nil || len(m.out.Notes) != 1 {
		t.Errorf("a merge of two documents kept the cost %+v (notes %v)", m.out.Cost, m.out.Notes)
	}
}

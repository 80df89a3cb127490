package result

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestTPCCFiguresComeFromTheTotals(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := &Document{WarmUp: WarmUp{End: start}, End: start.Add(2 * time.Minute),
		Totals: []Operation{
			{Name: "new-order", Type: "NewOrder", Counts: Counts{OK: 450, Rollbacks: 4}},
			{Name: "payment", Type: "Payment", Counts: Counts{OK: 430}},
			{Name: "order-status", Type: "OrderStatus", Counts: Counts{OK: 40}},
			{Name: "delivery", Type: "Delivery", Counts: Counts{OK: 40}},
			{Name: "stock-level", Type: "StockLevel", Counts: Counts{OK: 40}},
		},
		TPCC: &TPCC{Checks: []Check{{Name: "W_YTD = sum(D_YTD)", Passed: false, Detail: "warehouse 1"}}}}
	deriveTPCC(d)
	if d.TPCC == nil || d.TPCC.TpmC != 225 {
		t.Fatalf("450 New-Orders in 2 minutes: tpmC %+v, want 225", d.TPCC)
	}
	if len(d.TPCC.Mix) != 5 || d.TPCC.Mix[0].Type != "NewOrder" || d.TPCC.Mix[0].Percent != 45 || d.TPCC.Mix[1].Percent != 43 {
		t.Errorf("executed mix %+v, want NewOrder 45 %%, Payment 43 %% first", d.TPCC.Mix)
	}
	if len(d.TPCC.Checks) != 1 {
		t.Errorf("deriving dropped the recorded checks: %+v", d.TPCC.Checks)
	}
	var b bytes.Buffer
	writeTPCC(&b, d.TPCC)
	for _, want := range []string{"tpmC: 225.0", "NewOrder 45.0 %", "consistency W_YTD = sum(D_YTD): FAILED: warehouse 1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, b.String())
		}
	}
	d.Totals = []Operation{{Name: "read", Type: "Read", Counts: Counts{OK: 5}}}
	if deriveTPCC(d); d.TPCC != nil {
		t.Errorf("a YCSB result has TPC-C figures: %+v", d.TPCC)
	}
}

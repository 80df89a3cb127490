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
	// TPC-C clause 5.4.2: the rolled-back New-Orders count in tpmC.
	if d.TPCC == nil || d.TPCC.TpmC != 225 || d.TPCC.CommittedTpmC != 223 {
		t.Fatalf("450 New-Orders in 2 minutes, 4 rolled back: tpmC %+v, want 225 (clause 5.4.2 counts the rolled-back ones) and 223 committed", d.TPCC)
	}
	if len(d.TPCC.Mix) != 5 || d.TPCC.Mix[0].Type != "NewOrder" || d.TPCC.Mix[0].Percent != 45 || d.TPCC.Mix[1].Percent != 43 {
		t.Errorf("executed mix %+v, want NewOrder 45 %%, Payment 43 %% first", d.TPCC.Mix)
	}
	if len(d.TPCC.Checks) != 1 {
		t.Errorf("deriving dropped the recorded checks: %+v", d.TPCC.Checks)
	}
	var b bytes.Buffer
	writeTPCC(&b, d.TPCC)
	for _, want := range []string{"tpmC: 225.0", "rolled-back ones included, as TPC-C clause 5.4.2 requires; 223.0 committed", "NewOrder 45.0 %", "consistency W_YTD = sum(D_YTD): FAILED: warehouse 1"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, b.String())
		}
	}
	d.Totals = []Operation{{Name: "read", Type: "Read", Counts: Counts{OK: 5}}}
	if deriveTPCC(d); d.TPCC != nil {
		t.Errorf("a YCSB result has TPC-C figures: %+v", d.TPCC)
	}
}

// TestTPCCChecksSurviveReadingBackButNotAMerge: the manager adds the
// checks to a run's merged report; read back through a merger (as every
// reader does) they stay; merged with another document they are dropped,
// with a note, since they were checked after one document's run.
func TestTPCCChecksSurviveReadingBackButNotAMerge(t *testing.T) {
	spec, err := NewSpec([]byte(`{"type":"TPCC","tpcc":{"warehouses":1,"population":"Test"},` +
		`"operations":[{"name":"new-order","type":"NewOrder","weight":1}],"load":{"rate":100},"duration":"1m0s","warmUp":{"mode":"None"}}`))
	if err != nil {
		t.Fatal(err)
	}
	docs := shardDocs(t, spec, 2, 2, []sample{{0, 0, "new-order", 1000, 0}, {1, 0, "new-order", 1000, 0}})
	docs[0].TPCC.Checks = []Check{{Name: "W_YTD = sum(D_YTD)", Detail: "warehouse 1: W_YTD 1, sum(D_YTD) 0"}}
	one, err := Merge(docs[0])
	if err != nil || one.TPCC == nil || len(one.TPCC.Checks) != 1 || one.TPCC.Checks[0].Passed || one.TPCC.TpmC == 0 {
		t.Fatalf("a report read back lost its checks or tpmC (err %v): %+v", err, one.TPCC)
	}
	docs[1].TPCC.NotChecked = "not checked: the checks took longer than 2m0s"
	unchecked, err := Merge(docs[1])
	if err != nil || unchecked.TPCC == nil || unchecked.TPCC.NotChecked != docs[1].TPCC.NotChecked {
		t.Fatalf("a report read back lost why its checks did not run (err %v): %+v", err, unchecked.TPCC)
	}
	var b bytes.Buffer
	writeTPCC(&b, unchecked.TPCC)
	if !strings.Contains(b.String(), "consistency NOT CHECKED: not checked: the checks took longer than 2m0s") {
		t.Errorf("the report of an unchecked run does not say so:\n%s", b.String())
	}
	two, err := Merge(docs...)
	if err != nil || two.TPCC == nil || len(two.TPCC.Checks) != 0 || two.TPCC.NotChecked != "" || !strings.Contains(strings.Join(two.Notes, ";"), "consistency checks left out") {
		t.Fatalf("a merge of two documents kept one's checks (%+v, err %v) or did not say it left them out: %q", two.TPCC, err, two.Notes)
	}
}

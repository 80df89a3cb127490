package tpcc

import (
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// TestUnitsFollowThePopulationRules enumerates a Test population's units
// and counts rows per table against clause 4.3.3.1's rules, scaled.
func TestUnitsFollowThePopulationRules(t *testing.T) {
	s := (&v1alpha1.TPCCSpec{Population: v1alpha1.TPCCTest, Warehouses: ptr(int32(2))}).Scale()
	counts := map[string]int64{}
	customersOf := map[[3]int64]int{}
	var lines, olCnt int64
	for k := range s.Units() {
		for _, r := range Unit(s, k) {
			counts[r.Table]++
			if len(r.Values) != len(Columns[r.Table]) {
				t.Fatalf("unit %d: %s row has %d values for %d columns", k, r.Table, len(r.Values), len(Columns[r.Table]))
			}
			switch r.Table {
			case TableOrders:
				customersOf[[3]int64{r.Values[0].(int64), r.Values[1].(int64), r.Values[3].(int64)}]++
				olCnt += r.Values[6].(int64)
			case TableOrderLine:
				lines++
			}
		}
	}
	want := map[string]int64{TableItem: 1000, TableWarehouse: 2, TableDistrict: 20, TableStock: 2000, TableCustomer: 600,
		TableHistory: 600, TableOrders: 600, TableNewOrder: 2 * 10 * 9}
	for table, n := range want {
		if counts[table] != n {
			t.Errorf("%s: %d rows, want %d", table, counts[table], n)
		}
	}
	if len(customersOf) != 600 {
		t.Errorf("loaded orders belong to %d distinct customers, want each of the 600 once (a permutation per district)", len(customersOf))
	}
	if lines != olCnt {
		t.Errorf("%d order lines for a sum of O_OL_CNT %d", lines, olCnt)
	}
	if first, again := Unit(s, 1500), Unit(s, 1500); first[0].Values[3] != again[0].Values[3] {
		t.Error("a unit is not a pure function of its index")
	}
}

func ptr[T any](v T) *T { return &v }

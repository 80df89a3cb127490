package v1alpha1

import (
	"testing"

	"k8s.io/utils/ptr"
)

func TestTPCCResolvedHasTheStandardMixAndItsLoadUnits(t *testing.T) {
	w := WorkloadSpec{Type: WorkloadTPCC, TPCC: &TPCCSpec{Warehouses: ptr.To[int32](3)}, Load: LoadSpec{Rate: ptr.To[int32](10)}}
	w.Duration = nil
	r := w.Resolved()
	want := map[OperationType]int32{OpNewOrder: 45, OpPayment: 43, OpOrderStatus: 4, OpDelivery: 4, OpStockLevel: 4}
	if len(r.Operations) != len(want) {
		t.Fatalf("the default TPCC mix has %d operations, want the standard five: %+v", len(r.Operations), r.Operations)
	}
	for _, o := range r.Operations {
		if want[o.Type] != o.Weight {
			t.Errorf("default weight of %s = %d, want %d (TPC-C's 45/43/4/4/4)", o.Type, o.Weight, want[o.Type])
		}
	}
	if got, wantUnits := *r.Dataset.Rows, int64(100_000+3*(1+100_000+10*3_000)); got != wantUnits {
		t.Errorf("3 full warehouses are %d load units, want %d", got, wantUnits)
	}
	if *r.Dataset.BatchRows != DefaultTPCCBatchRows || r.TPCC.Population != TPCCFull {
		t.Errorf("resolved TPCC defaults: batchRows %d, population %q", *r.Dataset.BatchRows, r.TPCC.Population)
	}
	if r.Operations[0].WritePath != WriteMutation || r.Operations[2].WritePath != "" {
		t.Errorf("NewOrder defaults to mutations, OrderStatus has no write path: %+v", r.Operations)
	}
	if again := r.Resolved(); *again.Dataset.Rows != *r.Dataset.Rows || len(again.Operations) != 5 {
		t.Errorf("resolving a resolved TPCC workload changed it: %+v", again)
	}
}

func TestTPCCTestPopulationIsSmallAndMarked(t *testing.T) {
	s := (&TPCCSpec{Population: TPCCTest}).Scale()
	if !s.Test || s.Items != 1_000 || s.Customers != 30 || s.NewOrders != 9 || s.Units() != 1_000+1+1_000+300 {
		t.Errorf("test population = %+v (%d units)", s, s.Units())
	}
	if full := (*TPCCSpec)(nil).Scale(); full.Test || full.Items != 100_000 || full.Customers != 3_000 || full.NewOrders != 900 {
		t.Errorf("default population = %+v, want the specification's", full)
	}
}

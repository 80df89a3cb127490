package v1alpha1

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TPCC defaults and bounds, as the schema sets them.
const (
	DefaultTPCCWarehouses int32 = 1
	MaxTPCCWarehouses     int32 = 10_000
	// DefaultTPCCBatchRows is TPCC's default dataset.batchRows: a load
	// unit is up to 19 rows (see TPCCUnitMutations).
	DefaultTPCCBatchRows int32 = 100
	// TPCCUnitMutations bounds the mutations of one TPCC load unit: a
	// customer (21 columns) with its history row (8), order (8), up to 15
	// order lines (10 each) and new-order row (3) is 190; 220 leaves room.
	TPCCUnitMutations = 220
	// TPCCDistricts is the number of districts per warehouse, in every
	// population.
	TPCCDistricts = 10
	// TPCCFullItems is the Full population's item count, the most any
	// population has.
	TPCCFullItems = 100_000
)

// TPCCStandardMix is the TPC-C specification's transaction mix, the default
// operations of a TPCC workload.
func TPCCStandardMix() []OperationSpec {
	return []OperationSpec{
		{Type: OpNewOrder, Weight: 45},
		{Type: OpPayment, Weight: 43},
		{Type: OpOrderStatus, Weight: 4},
		{Type: OpDelivery, Weight: 4},
		{Type: OpStockLevel, Weight: 4},
	}
}

// TPCCScale is a TPC-C population: its row counts. It is derived from a
// TPCCSpec for code and never serialized.
type TPCCScale struct {
	// Warehouses is the number of warehouses.
	Warehouses int64 `json:"-"`
	// Items is the number of items, and of stock rows per warehouse.
	Items int64 `json:"-"`
	// Customers is the number of customers per district, and of the orders
	// loaded per district.
	Customers int64 `json:"-"`
	// NewOrders is the number of undelivered orders loaded per district:
	// the last ones of the district's orders.
	NewOrders int64 `json:"-"`
	// Test says the population is the reduced one (TPCCTest).
	Test bool `json:"-"`
}

// Scale is the population of a TPCC spec, defaults applied.
func (t *TPCCSpec) Scale() TPCCScale {
	w := int64(DefaultTPCCWarehouses)
	if t != nil && t.Warehouses != nil {
		w = int64(*t.Warehouses)
	}
	if t != nil && t.Population == TPCCTest {
		return TPCCScale{Warehouses: w, Items: 1_000, Customers: 30, NewOrders: 9, Test: true}
	}
	return TPCCScale{Warehouses: w, Items: TPCCFullItems, Customers: 3_000, NewOrders: 900}
}

// UnitsPerWarehouse is the number of load units of one warehouse: the
// warehouse with its districts, its stock rows one each, and its customers
// one each (a customer with its history row and the order of the same
// number, its order lines and new-order row).
func (s TPCCScale) UnitsPerWarehouse() int64 {
	return 1 + s.Items + TPCCDistricts*s.Customers
}

// Units is the number of load units of the dataset: the items one each,
// then each warehouse's units. It is a TPCC workload's dataset.rows.
func (s TPCCScale) Units() int64 {
	return s.Items + s.Warehouses*s.UnitsPerWarehouse()
}

// defaultTPCC fills a TPCC workload's scale, mix and load-unit count.
func (w *WorkloadSpec) defaultTPCC() {
	if w.TPCC == nil {
		w.TPCC = &TPCCSpec{}
	}
	w.TPCC.Warehouses = defaulted(w.TPCC.Warehouses, DefaultTPCCWarehouses)
	if w.TPCC.Population == "" {
		w.TPCC.Population = TPCCFull
	}
	if len(w.Operations) == 0 {
		w.Operations = TPCCStandardMix()
	}
	w.Dataset.Rows = defaulted(w.Dataset.Rows, w.TPCC.Scale().Units())
	w.Dataset.BatchRows = defaulted(w.Dataset.BatchRows, DefaultTPCCBatchRows)
}

// validateTPCC checks what only a TPCC workload has, or must leave out.
func (w *WorkloadSpec) validateTPCC(path *field.Path) field.ErrorList {
	if w.Type != WorkloadTPCC {
		if w.TPCC != nil {
			return field.ErrorList{field.Forbidden(path.Child("tpcc"), "applies only to type TPCC")}
		}
		return nil
	}
	var errs field.ErrorList
	if t := w.TPCC; t != nil {
		errs = append(errs, InRange(path.Child("tpcc", "warehouses"), t.Warehouses, 1, MaxTPCCWarehouses)...)
		errs = append(errs, OneOf(path.Child("tpcc", "population"), t.Population, TPCCFull, TPCCTest)...)
	}
	if r := w.Dataset.Rows; r != nil && *r != w.TPCC.Scale().Units() {
		errs = append(errs, field.Invalid(path.Child("dataset", "rows"), *r, fmt.Sprintf("TPCC's load units follow from tpcc.warehouses and tpcc.population (%d here); leave rows out", w.TPCC.Scale().Units())))
	}
	if fb := w.Dataset.FieldBytes; fb != nil && *fb != DefaultFieldBytes {
		errs = append(errs, field.Invalid(path.Child("dataset", "fieldBytes"), *fb, "TPCC's columns have the specification's sizes; leave fieldBytes out"))
	}
	return errs
}

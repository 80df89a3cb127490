package v1alpha1

// TPCCPopulation chooses the size of the TPC-C population per warehouse.
// +kubebuilder:validation:Enum=Full;Test;""
type TPCCPopulation string

const (
	// TPCCFull is the specification's population: 100,000 items; per
	// warehouse 100,000 stock rows, 10 districts of 3,000 customers, 3,000
	// orders each with 5 to 15 order lines, 900 new orders per district.
	TPCCFull TPCCPopulation = "Full"
	// TPCCTest is a reduced population for the emulator and tests: 1,000
	// items and stock rows per warehouse, 10 districts of 30 customers and
	// 30 orders, 9 new orders per district. Results record it; it is never a
	// specification-compliant population.
	TPCCTest TPCCPopulation = "Test"
)

// TPCCSpec is the scale and options of the TPCC workload.
type TPCCSpec struct {
	// warehouses is the scale: the number of warehouses loaded, each with its
	// districts, customers, orders and stock. Runner shards share them out,
	// each shard running against its own home warehouses. Default 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	Warehouses *int32 `json:"warehouses,omitempty"`

	// population is Full (default, the specification's row counts) or Test
	// (reduced item, stock, customer and order counts, for the emulator and
	// tests). The result records it.
	// +optional
	Population TPCCPopulation `json:"population,omitempty"`

	// consistencyChecks runs TPC-C's consistency conditions (clause
	// 3.3.2: all but the 11th, which holds before the first Delivery only)
	// against the database after the run, warehouse by warehouse at one
	// snapshot, and records each as passed or failed. For a BenchmarkRun
	// the manager checks after merging the shards (condition
	// ConsistencyChecked, status.tpcc.checks); a failed condition fails
	// the run, and one that could not be checked leaves its figures
	// unverified (a campaign compares none of them). They read every
	// warehouse's districts, orders, new orders, order lines, customers
	// and history (about 400,000 rows per Full warehouse), so they are off
	// by default.
	// +optional
	ConsistencyChecks bool `json:"consistencyChecks,omitempty"`
}

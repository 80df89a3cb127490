package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkloadType names a built-in workload: a schema, a row generator and the
// operations that run against it.
// +kubebuilder:validation:Enum=YCSB;Tweet;TPCC;Custom
type WorkloadType string

const (
	// WorkloadYCSB is YCSB's usertable(id, field0..field9) with ~100-byte
	// fields, as in the READ-vs-SQL experiment.
	WorkloadYCSB WorkloadType = "YCSB"
	// WorkloadTweet is the Tweet table with a commit timestamp, an ARRAY
	// column and the TweetSortAsc index, as in the write-throughput experiment.
	WorkloadTweet WorkloadType = "Tweet"
	// WorkloadTPCC is TPC-C's nine tables, interleaved under their
	// warehouse, and its five transactions (tpcc.warehouses is the scale).
	WorkloadTPCC WorkloadType = "TPCC"
)

// OperationType names one operation of a workload.
// +kubebuilder:validation:Enum=Read;Scan;ReadKeys;Insert;Update;Delete;ReadModifyWrite;QueryBySort;FullScan;NewOrder;Payment;OrderStatus;Delivery;StockLevel;Query;DML;ReadRows;Mutation;Transaction
type OperationType string

const (
	// OpRead reads one row by primary key.
	OpRead OperationType = "Read"
	// OpScan reads `rows` consecutive rows (a key range).
	OpScan OperationType = "Scan"
	// OpReadKeys reads `rows` non-consecutive keys in one call (a key list).
	OpReadKeys OperationType = "ReadKeys"
	// OpInsert inserts one new row with a key no other runner generates.
	OpInsert OperationType = "Insert"
	// OpUpdate changes one existing row.
	OpUpdate OperationType = "Update"
	// OpDelete deletes the oldest row this runner inserted and has not yet
	// deleted, so deletes never collide and are counted exactly.
	OpDelete OperationType = "Delete"
	// OpReadModifyWrite reads a row and writes it back in one read-write
	// transaction.
	OpReadModifyWrite OperationType = "ReadModifyWrite"
	// OpQueryBySort queries Tweet rows by the indexed Sort column.
	OpQueryBySort OperationType = "QueryBySort"
	// OpFullScan runs a heavy query that scans the whole Tweet table, to
	// measure its interference with writes.
	OpFullScan OperationType = "FullScan"
	// OpNewOrder is TPC-C's New-Order transaction (read-write; 1 % roll
	// back on an unused item).
	OpNewOrder OperationType = "NewOrder"
	// OpPayment is TPC-C's Payment transaction (read-write; 60 % by last
	// name, 15 % for a customer of a remote warehouse).
	OpPayment OperationType = "Payment"
	// OpOrderStatus is TPC-C's Order-Status transaction (read-only).
	OpOrderStatus OperationType = "OrderStatus"
	// OpDelivery is TPC-C's Delivery transaction (read-write, ten
	// districts in one transaction).
	OpDelivery OperationType = "Delivery"
	// OpStockLevel is TPC-C's Stock-Level transaction (read-only).
	OpStockLevel OperationType = "StockLevel"
)

// ReadAPI selects the Spanner API a read goes through.
// +kubebuilder:validation:Enum=Read;SQL;""
type ReadAPI string

const (
	// APIRead uses the Read API (StreamingRead with key sets and ranges).
	APIRead ReadAPI = "Read"
	// APISQL uses the SQL API (ExecuteStreamingSql with parameters).
	APISQL ReadAPI = "SQL"
)

// WritePath selects how a write reaches Spanner.
// +kubebuilder:validation:Enum=Mutation;DML;""
type WritePath string

const (
	// WriteMutation sends mutations with a single Apply call.
	WriteMutation WritePath = "Mutation"
	// WriteDML runs a DML statement in a read-write transaction.
	WriteDML WritePath = "DML"
)

// KeyDistribution chooses which existing keys an operation touches.
// +kubebuilder:validation:Enum=Uniform;Zipfian;Latest;""
type KeyDistribution string

const (
	// KeysUniform picks every existing key with the same probability.
	KeysUniform KeyDistribution = "Uniform"
	// KeysZipfian picks keys with YCSB's scrambled zipfian distribution
	// (constant 0.99): a few keys are hot, spread over the key space.
	KeysZipfian KeyDistribution = "Zipfian"
	// KeysLatest prefers the keys this runner inserted most recently.
	KeysLatest KeyDistribution = "Latest"
)

// RPCPriority is the Spanner request priority.
// +kubebuilder:validation:Enum=Low;Medium;High;""
type RPCPriority string

const (
	// PriorityLow is PRIORITY_LOW.
	PriorityLow RPCPriority = "Low"
	// PriorityMedium is PRIORITY_MEDIUM.
	PriorityMedium RPCPriority = "Medium"
	// PriorityHigh is PRIORITY_HIGH, Spanner's default.
	PriorityHigh RPCPriority = "High"
)

// ReplicaType restricts a directed read to read-write or read-only replicas.
// +kubebuilder:validation:Enum=ReadWrite;ReadOnly;""
type ReplicaType string

const (
	// ReplicaReadWrite selects read-write replicas.
	ReplicaReadWrite ReplicaType = "ReadWrite"
	// ReplicaReadOnly selects read-only replicas.
	ReplicaReadOnly ReplicaType = "ReadOnly"
)

// Arrivals shapes the intended send times of an open-loop load.
// +kubebuilder:validation:Enum=Uniform;Poisson;""
type Arrivals string

const (
	// ArrivalsUniform spaces sends evenly at the target rate.
	ArrivalsUniform Arrivals = "Uniform"
	// ArrivalsPoisson draws exponential gaps at the target rate, like
	// independent users.
	ArrivalsPoisson Arrivals = "Poisson"
)

// WarmUpMode says how the warm-up at the start of a run ends.
// +kubebuilder:validation:Enum=None;Fixed;Auto;""
type WarmUpMode string

const (
	// WarmUpNone counts every request in the results.
	WarmUpNone WarmUpMode = "None"
	// WarmUpFixed excludes the first `duration` of the run.
	WarmUpFixed WarmUpMode = "Fixed"
	// WarmUpAuto ends the warm-up when throughput and p99 over a sliding
	// window of intervals stay within a tolerance, or at `max`.
	WarmUpAuto WarmUpMode = "Auto"
)

// WorkloadSpec is what the load engine runs: a built-in schema and dataset,
// a weighted operation mix, a load profile, a duration and a warm-up.
// +kubebuilder:validation:XValidation:rule="!has(self.operations) || (self.type == 'YCSB' ? self.operations.all(o, o.type in ['Read','Scan','ReadKeys','Insert','Update','Delete','ReadModifyWrite']) : self.type == 'Tweet' ? self.operations.all(o, o.type in ['Read','Insert','Update','Delete','QueryBySort','FullScan']) : self.type == 'Custom' ? self.operations.all(o, o.type in ['Query','DML','ReadRows','Mutation','Transaction']) : self.operations.all(o, o.type in ['NewOrder','Payment','OrderStatus','Delivery','StockLevel']))",message="operations: YCSB supports Read, Scan, ReadKeys, Insert, Update, Delete, ReadModifyWrite; Tweet supports Read, Insert, Update, Delete, QueryBySort, FullScan; TPCC supports NewOrder, Payment, OrderStatus, Delivery, StockLevel; Custom supports Query, DML, ReadRows, Mutation, Transaction",fieldPath=".operations"
// +kubebuilder:validation:XValidation:rule="has(self.operations) || self.type == 'TPCC'",message="operations: required, except for TPCC, whose default is the standard mix (NewOrder 45, Payment 43, OrderStatus 4, Delivery 4, StockLevel 4)",fieldPath=".operations"
// +kubebuilder:validation:XValidation:rule="!has(self.tpcc) || self.type == 'TPCC'",message="tpcc: applies only to type TPCC",fieldPath=".tpcc"
// +kubebuilder:validation:XValidation:rule="self.type != 'TPCC' || !has(self.dataset) || !has(self.dataset.rows) || self.dataset.rows == (has(self.tpcc) && has(self.tpcc.population) && self.tpcc.population == 'Test' ? 1000 : 100000) + (has(self.tpcc) && has(self.tpcc.warehouses) ? self.tpcc.warehouses : 1) * (has(self.tpcc) && has(self.tpcc.population) && self.tpcc.population == 'Test' ? 1301 : 130001)",message="dataset.rows: TPCC's load units follow from tpcc.warehouses and tpcc.population; leave rows out",fieldPath=".dataset.rows"
// +kubebuilder:validation:XValidation:rule="self.type != 'TPCC' || !has(self.dataset) || !has(self.dataset.fieldBytes) || self.dataset.fieldBytes == 100",message="dataset.fieldBytes: TPCC's columns have the specification's sizes; leave fieldBytes out",fieldPath=".dataset.fieldBytes"
// +kubebuilder:validation:XValidation:rule="(self.type == 'Custom') == has(self.custom)",message="custom: required for type Custom, and only for it",fieldPath=".custom"
// +kubebuilder:validation:XValidation:rule="self.type == 'Custom' || !has(self.dataset) || (has(self.dataset.batchRows) ? self.dataset.batchRows : (self.type == 'TPCC' ? 100 : 500)) * (self.type == 'YCSB' ? 11 : self.type == 'Tweet' ? 10 : 220) <= 80000",message="dataset.batchRows: one batch is one commit, and Cloud Spanner takes at most 80,000 mutations per commit: at most 7272 rows for YCSB (11 per row), 8000 for Tweet (10 per row, its index included), 363 load units for TPCC (up to 220 each: a customer with its history, order, 15 order lines and new order)",fieldPath=".dataset.batchRows"
// +kubebuilder:validation:XValidation:rule="!has(self.dataset) || self.type == 'TPCC' || self.type == 'Custom' || (has(self.dataset.batchRows) ? self.dataset.batchRows : 500) * (has(self.dataset.fieldBytes) ? self.dataset.fieldBytes : 100) * (self.type == 'YCSB' ? 10 : 1) <= 90000000",message="dataset.batchRows: one batch is one commit, and Cloud Spanner takes at most 100 MB per commit: batchRows x fieldBytes x text fields per row (10 for YCSB, 1 for Tweet) must stay under 90,000,000",fieldPath=".dataset.batchRows"
// +kubebuilder:validation:XValidation:rule="!has(self.operations) || !(self.type in ['YCSB','Tweet']) || self.operations.all(o, o.type != 'Insert' || !has(o.rows) || o.rows * (has(self.dataset) && has(self.dataset.fieldBytes) ? self.dataset.fieldBytes : 100) * (self.type == 'YCSB' ? 10 : 1) <= 90000000)",message="operations: an Insert's rows are one commit, and Cloud Spanner takes at most 100 MB per commit: rows x dataset.fieldBytes x text fields per row (10 for YCSB, 1 for Tweet) must stay under 90,000,000",fieldPath=".operations"
// +kubebuilder:validation:XValidation:rule="!((has(self.load) && has(self.load.steps)) && has(self.duration))",message="duration: set duration, or load.steps (whose durations add up to the run's), not both",fieldPath=".duration"
// +kubebuilder:validation:XValidation:rule="(has(self.load) && has(self.load.steps)) || has(self.duration)",message="duration: required unless load.steps gives the run's duration",fieldPath=".duration"
// +kubebuilder:validation:XValidation:rule="!has(self.warmUp) || !has(self.warmUp.duration) || !has(self.duration) || !self.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || !self.warmUp.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self.warmUp.duration) > duration('168h') || duration(self.duration) <= duration('0s') || duration(self.duration) > duration('168h') || (has(self.interval) && (!self.interval.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self.interval) < duration('1s') || duration(self.interval) > duration('1h'))) || duration(self.warmUp.duration) + (has(self.interval) ? duration(self.interval) : duration('10s')) <= duration(self.duration)",message="warmUp.duration: must leave at least one interval (default 10s) of the run's duration after the warm-up",fieldPath=".warmUp.duration"
// +kubebuilder:validation:XValidation:rule="!has(self.warmUp) || !has(self.warmUp.duration) || !(has(self.load) && has(self.load.steps)) || !self.warmUp.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self.warmUp.duration) > duration('168h') || !self.load.steps.all(s, s.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(s.duration) <= duration('168h')) || self.load.steps.map(s, duration(s.duration)).sum() <= duration('0s') || self.load.steps.map(s, duration(s.duration)).sum() > duration('168h') || (has(self.interval) && (!self.interval.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self.interval) < duration('1s') || duration(self.interval) > duration('1h'))) || duration(self.warmUp.duration) + (has(self.interval) ? duration(self.interval) : duration('10s')) <= self.load.steps.map(s, duration(s.duration)).sum()",message="warmUp.duration: must leave at least one interval (default 10s) of the run's duration (the sum of load.steps) after the warm-up",fieldPath=".warmUp.duration"
// +kubebuilder:validation:XValidation:rule="!has(self.warmUp) || !has(self.warmUp.max) || !has(self.duration) || !self.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || !self.warmUp.max.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self.warmUp.max) > duration('168h') || duration(self.duration) <= duration('0s') || duration(self.duration) > duration('168h') || (has(self.interval) && (!self.interval.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self.interval) < duration('1s') || duration(self.interval) > duration('1h'))) || duration(self.warmUp.max) + (has(self.interval) ? duration(self.interval) : duration('10s')) <= duration(self.duration)",message="warmUp.max: must leave at least one interval (default 10s) of the run's duration after the warm-up",fieldPath=".warmUp.max"
// +kubebuilder:validation:XValidation:rule="!has(self.warmUp) || !has(self.warmUp.max) || !(has(self.load) && has(self.load.steps)) || !self.warmUp.max.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self.warmUp.max) > duration('168h') || !self.load.steps.all(s, s.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(s.duration) <= duration('168h')) || self.load.steps.map(s, duration(s.duration)).sum() <= duration('0s') || self.load.steps.map(s, duration(s.duration)).sum() > duration('168h') || (has(self.interval) && (!self.interval.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self.interval) < duration('1s') || duration(self.interval) > duration('1h'))) || duration(self.warmUp.max) + (has(self.interval) ? duration(self.interval) : duration('10s')) <= self.load.steps.map(s, duration(s.duration)).sum()",message="warmUp.max: must leave at least one interval (default 10s) of the run's duration (the sum of load.steps) after the warm-up",fieldPath=".warmUp.max"
// +kubebuilder:validation:XValidation:rule="!(has(self.load) && has(self.load.steps)) || !self.load.steps.all(s, s.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(s.duration) <= duration('168h')) || self.load.steps.map(s, duration(s.duration)).sum() <= duration('168h')",message="load.steps: the steps' durations must add up to at most 168h",fieldPath=".load.steps"
// +kubebuilder:validation:XValidation:rule="!has(self.duration) || !self.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self.duration) <= duration('0s') || duration(self.duration) > duration('168h') || (has(self.interval) && (!self.interval.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self.interval) < duration('1s') || duration(self.interval) > duration('1h'))) || (has(self.interval) ? duration(self.interval) : duration('10s')) <= duration(self.duration)",message="interval: the run's duration must hold at least one interval (default 10s): shorten the interval or lengthen the run",fieldPath=".interval"
// +kubebuilder:validation:XValidation:rule="!(has(self.load) && has(self.load.steps)) || !self.load.steps.all(s, s.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(s.duration) <= duration('168h')) || self.load.steps.map(s, duration(s.duration)).sum() <= duration('0s') || self.load.steps.map(s, duration(s.duration)).sum() > duration('168h') || (has(self.interval) && (!self.interval.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self.interval) < duration('1s') || duration(self.interval) > duration('1h'))) || (has(self.interval) ? duration(self.interval) : duration('10s')) <= self.load.steps.map(s, duration(s.duration)).sum()",message="interval: the run's duration (the sum of load.steps) must hold at least one interval (default 10s): shorten the interval or lengthen the run",fieldPath=".interval"
// +kubebuilder:validation:XValidation:rule="!(has(self.load) && has(self.load.ramp)) || !has(self.duration) || !self.load.ramp.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || !self.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self.load.ramp.duration) <= duration(self.duration)",message="load.ramp.duration: must not be longer than the run's duration",fieldPath=".load.ramp.duration"
// +kubebuilder:validation:XValidation:rule="!(has(self.warmUp) && has(self.warmUp.mode) && self.warmUp.mode == 'Auto' && (!has(self.interval) || (self.interval.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.interval) <= duration('1h'))) && (!has(self.warmUp.max) || (self.warmUp.max.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.warmUp.max) <= duration('168h'))) && has(self.duration) && self.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.duration) <= duration('168h')) || (has(self.warmUp.window) ? self.warmUp.window : 3) * (has(self.interval) ? int(duration(self.interval)) : 10000000000) <= (has(self.warmUp.max) ? int(duration(self.warmUp.max)) : int(duration(self.duration)) / 2)",message="warmUp: an Auto warm-up needs room for its window: window x interval must not exceed max (default: half the run's duration)",fieldPath=".warmUp"
// +kubebuilder:validation:XValidation:rule="!(has(self.warmUp) && has(self.warmUp.mode) && self.warmUp.mode == 'Auto' && (!has(self.interval) || (self.interval.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.interval) <= duration('1h'))) && (!has(self.warmUp.max) || (self.warmUp.max.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.warmUp.max) <= duration('168h'))) && (has(self.load) && has(self.load.steps)) && self.load.steps.all(s, s.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(s.duration) <= duration('168h')) && self.load.steps.map(s, duration(s.duration)).sum() <= duration('168h')) || (has(self.warmUp.window) ? self.warmUp.window : 3) * (has(self.interval) ? int(duration(self.interval)) : 10000000000) <= (has(self.warmUp.max) ? int(duration(self.warmUp.max)) : int(self.load.steps.map(s, duration(s.duration)).sum()) / 2)",message="warmUp: an Auto warm-up needs room for its window: window x interval must not exceed max (default: half the run's duration, the sum of load.steps)",fieldPath=".warmUp"
// +kubebuilder:validation:XValidation:rule="!has(self.operations) || self.operations.all(o, !(o.type in ['Read','Scan','ReadKeys','Update','ReadModifyWrite']) || (has(self.dataset) && has(self.dataset.rows) ? self.dataset.rows : 1000) >= (o.type in ['Scan','ReadKeys'] ? (has(o.rows) ? o.rows : 10) : 1))",message="dataset.rows: operations on existing keys need rows to find: at least 1 for Read, Update and ReadModifyWrite, and at least the operation's rows for Scan and ReadKeys",fieldPath=".dataset.rows"
// +kubebuilder:validation:XValidation:rule="has(self.load) != has(self.streams)",message="load: set load (one stream of every operation) or streams (each with its own load), exactly one of them",fieldPath=".load"
// +kubebuilder:validation:XValidation:rule="!has(self.streams) || self.streams.all(s, s.operations.all(o, has(self.operations) ? self.operations.exists(p, (has(p.name) && size(p.name) > 0 ? p.name : {'Read':'read','Scan':'scan','ReadKeys':'read-keys','Insert':'insert','Update':'update','Delete':'delete','ReadModifyWrite':'read-modify-write','QueryBySort':'query-by-sort','FullScan':'full-scan','NewOrder':'new-order','Payment':'payment','OrderStatus':'order-status','Delivery':'delivery','StockLevel':'stock-level','Query':'query','DML':'dml','ReadRows':'read-rows','Mutation':'mutation','Transaction':'transaction'}[p.type]) == o.name) : (self.type == 'TPCC' && o.name in ['new-order','payment','order-status','delivery','stock-level'])))",message="streams.operations: each name must be one of the workload's operations (its name, or its type in kebab case such as read-keys)",fieldPath=".streams"
// +kubebuilder:validation:XValidation:rule="!has(self.streams) || !has(self.duration) || !self.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') || duration(self.duration) > duration('168h') || self.streams.all(s, (has(s.startOffset) && !s.startOffset.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')) || (has(s.duration) && !s.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$')) || (has(s.load.steps) && !s.load.steps.all(t, t.duration.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(t.duration) <= duration('168h'))) || (has(s.startOffset) ? duration(s.startOffset) : duration('0s')) + (has(s.duration) ? duration(s.duration) : has(s.load.steps) ? s.load.steps.map(t, duration(t.duration)).sum() : duration('1ns')) <= duration(self.duration))",message="streams: each stream's startOffset plus its duration (or its load.steps' sum) must not pass the run's duration",fieldPath=".streams"
type WorkloadSpec struct {
	// type is the built-in workload: YCSB, Tweet or TPCC.
	// +required
	Type WorkloadType `json:"type"`

	// tpcc is the scale and options of the TPCC workload; only with type
	// TPCC. Default: one warehouse, the full population.
	// +optional
	TPCC *TPCCSpec `json:"tpcc,omitempty"`

	// dataset is how many rows are preloaded before the run, and how.
	// For Custom, custom.tables gives the rows per table instead of rows.
	// +optional
	Dataset DatasetSpec `json:"dataset,omitempty"`

	// custom is the schema, dataset and generators of a Custom workload;
	// its operations give their statements in operations[].custom.
	// +optional
	Custom *CustomWorkloadSpec `json:"custom,omitempty"`

	// operations is the operation mix. Each operation is chosen with
	// probability weight / sum of weights. Required, except for TPCC, whose
	// default is the standard mix: NewOrder 45, Payment 43, OrderStatus 4,
	// Delivery 4, StockLevel 4.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(o, self.exists_one(p, (has(p.name) && size(p.name) > 0 ? p.name : {'Read':'read','Scan':'scan','ReadKeys':'read-keys','Insert':'insert','Update':'update','Delete':'delete','ReadModifyWrite':'read-modify-write','QueryBySort':'query-by-sort','FullScan':'full-scan','NewOrder':'new-order','Payment':'payment','OrderStatus':'order-status','Delivery':'delivery','StockLevel':'stock-level','Query':'query','DML':'dml','ReadRows':'read-rows','Mutation':'mutation','Transaction':'transaction'}[p.type]) == (has(o.name) && size(o.name) > 0 ? o.name : {'Read':'read','Scan':'scan','ReadKeys':'read-keys','Insert':'insert','Update':'update','Delete':'delete','ReadModifyWrite':'read-modify-write','QueryBySort':'query-by-sort','FullScan':'full-scan','NewOrder':'new-order','Payment':'payment','OrderStatus':'order-status','Delivery':'delivery','StockLevel':'stock-level','Query':'query','DML':'dml','ReadRows':'read-rows','Mutation':'mutation','Transaction':'transaction'}[o.type])))",message="operations: names must be unique; name operations of the same type explicitly (an unnamed operation is named after its type, e.g. read-keys)"
	Operations []OperationSpec `json:"operations,omitempty"`

	// load is the rate profile (open loop) or the concurrency (closed loop)
	// of the run's one stream, which runs every operation. Required unless
	// streams are set; not with streams, each of which has its own load.
	// +optional
	Load LoadSpec `json:"load,omitzero"`

	// streams are concurrent load streams, each with its own operation mix
	// (from operations, by name), load, window within the run and runner
	// pods, measured and reported on its own. Without streams the run is
	// one stream of every operation at load.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(s, self.exists_one(t, t.name == s.name))",message="streams: names must be unique"
	Streams []StreamSpec `json:"streams,omitempty"`

	// duration is how long the load runs, warm-up included, such as 10m.
	// Required unless load.steps gives the duration.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="duration: must be a positive duration of at most 168h, such as 10m or 1h30m"
	Duration *metav1.Duration `json:"duration,omitempty"`

	// warmUp says which first part of the run is excluded from the results.
	// The time series keeps it, marked.
	// +optional
	WarmUp *WarmUpSpec `json:"warmUp,omitempty"`

	// interval is the length of one point of the time series, from 1s to
	// 1h. The run must hold at least one interval, and at least one after
	// its warm-up (warmUp.duration, or an Auto warm-up's max): a run that
	// ends inside its first measured interval would measure nothing.
	// Default 10s.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) >= duration('1s') && duration(self) <= duration('1h')",message="interval: must be a duration from 1s to 1h, such as 10s"
	Interval *metav1.Duration `json:"interval,omitempty"`
}

// DatasetSpec describes the rows preloaded before a run.
type DatasetSpec struct {
	// rows is the number of rows preloaded. Default 1000. TPCC leaves it
	// out: its load units (items, warehouses, stock rows, customers with
	// their orders) follow from tpcc.warehouses and tpcc.population.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=10000000000
	Rows *int64 `json:"rows,omitempty"`

	// fieldBytes is the size of each generated text field (YCSB's field0..9,
	// Tweet's Content). Default 100. Not for TPCC.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1048576
	FieldBytes *int32 `json:"fieldBytes,omitempty"`

	// batchRows is the number of rows in one load mutation batch. Default
	// 500; 100 for TPCC, whose load unit is up to 19 rows.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	BatchRows *int32 `json:"batchRows,omitempty"`

	// loaderPods is the number of loader pods, an Indexed Job that runs
	// before the runners when the database does not hold the dataset yet:
	// pod i loads the i-th of loaderPods equal slices of the key space.
	// Loads are idempotent, so a loader pod that fails is retried (up to
	// 3 times per slice), from where it had loaded every row. Default 1.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	LoaderPods *int32 `json:"loaderPods,omitempty"`

	// loaders is the number of parallel batch writers in each loader pod
	// (and in `spanbench run`). Default 4.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=256
	Loaders *int32 `json:"loaders,omitempty"`

	// maxRowsPerSecond caps the load's rate: rows per second (for TPCC,
	// load units) written by all loader pods together, each pod at most
	// its 1/loaderPods share (`spanbench run`: the whole rate). Unset, the
	// load writes as fast as the database takes its batches. Set it to
	// load into an instance that serves other traffic without taking its
	// capacity; deadlines.load must allow rows / maxRowsPerSecond seconds
	// (refused otherwise for YCSB and Tweet).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000000
	MaxRowsPerSecond *int64 `json:"maxRowsPerSecond,omitempty"`

	// reload allows replacing a dataset that does not match this spec
	// (another schema or row count). Without it such a run is refused, so a
	// large dataset is never wiped by accident.
	// +optional
	Reload bool `json:"reload,omitempty"`
}

// OperationSpec is one operation of the mix with its options.
// +kubebuilder:validation:XValidation:rule="!has(self.staleness) || self.type in ['Read','Scan','ReadKeys','QueryBySort','FullScan','OrderStatus','StockLevel','Query','ReadRows']",message="staleness: only reads can be stale; writes, ReadModifyWrite, NewOrder, Payment, Delivery, DML, Mutation and Transaction run in read-write transactions",fieldPath=".staleness"
// +kubebuilder:validation:XValidation:rule="!has(self.staleness) || !has(self.staleness.max) || !(self.type in ['OrderStatus','StockLevel'])",message="staleness.max: OrderStatus and StockLevel read several times in one read-only transaction, which takes exact staleness only",fieldPath=".staleness.max"
// +kubebuilder:validation:XValidation:rule="!has(self.directedRead) || self.type in ['Read','Scan','ReadKeys','QueryBySort','FullScan','OrderStatus','StockLevel','Query','ReadRows']",message="directedRead: only read-only operations can be directed",fieldPath=".directedRead"
// +kubebuilder:validation:XValidation:rule="!has(self.commit) || self.type in ['Insert','Update','Delete','ReadModifyWrite','NewOrder','Payment','Delivery','DML','Mutation','Transaction']",message="commit: commit options apply only to writes",fieldPath=".commit"
// +kubebuilder:validation:XValidation:rule="!has(self.writePath) || self.type in ['Insert','Update','Delete','NewOrder','Payment','Delivery']",message="writePath: only Insert, Update, Delete, NewOrder, Payment and Delivery have a write path",fieldPath=".writePath"
// +kubebuilder:validation:XValidation:rule="!has(self.api) || self.type in ['Read','Scan','ReadKeys']",message="api: only Read, Scan and ReadKeys can choose between the Read and SQL APIs",fieldPath=".api"
// +kubebuilder:validation:XValidation:rule="!has(self.rows) || self.type in ['Scan','ReadKeys','QueryBySort','ReadRows','Insert']",message="rows: only Scan, ReadKeys, QueryBySort and ReadRows return several rows, and only Insert writes several",fieldPath=".rows"
// +kubebuilder:validation:XValidation:rule="!has(self.rows) || self.type != 'Insert' || ((!has(self.writePath) || self.writePath == 'Mutation') && self.rows <= 7272)",message="rows: an Insert of several rows is one commit of mutations (writePath Mutation), and Cloud Spanner takes at most 80,000 mutations per commit: at most 7272 rows (11 mutations a YCSB row, 10 a Tweet row with its index)",fieldPath=".rows"
// +kubebuilder:validation:XValidation:rule="(self.type in ['Query','DML','ReadRows','Mutation','Transaction']) == has(self.custom)",message="custom: required for Query, DML, ReadRows, Mutation and Transaction, and only for them",fieldPath=".custom"
// +kubebuilder:validation:XValidation:rule="!has(self.custom) || (self.type in ['Query','DML'] ? has(self.custom.sql) : self.type == 'ReadRows' ? has(self.custom.read) : self.type == 'Mutation' ? has(self.custom.mutation) : !(self.type == 'Transaction') || has(self.custom.steps))",message="custom: Query and DML need sql, ReadRows read, Mutation mutation, Transaction steps",fieldPath=".custom"
// +kubebuilder:validation:XValidation:rule="!(self.type in ['Query','DML','ReadRows','Mutation','Transaction']) || (has(self.name) && size(self.name) > 0)",message="name: required for the operations of a Custom workload",fieldPath=".name"
type OperationSpec struct {
	// name identifies the operation in results, metrics and request tags
	// (spanbench/<run>/<name>). Default: the type in lower case.
	// +optional
	// +kubebuilder:validation:MaxLength=40
	// +kubebuilder:validation:Pattern=`^([a-z][a-z0-9-]*)?$`
	Name string `json:"name,omitempty"`

	// type is what the operation does: one of the workload's operation
	// types (docs/workloads.md lists them per workload).
	// +required
	Type OperationType `json:"type"`

	// weight is the operation's share of the mix. Must be at least 1.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000000
	Weight int32 `json:"weight"`

	// api is the API reads go through: Read (default) or SQL.
	// +optional
	API ReadAPI `json:"api,omitempty"`

	// writePath is how Insert, Update and Delete write: Mutation (default,
	// one Apply) or DML (a read-write transaction). TPCC's NewOrder, Payment
	// and Delivery always run in a read-write transaction; writePath says
	// whether they write with buffered mutations (default) or DML.
	// +optional
	WritePath WritePath `json:"writePath,omitempty"`

	// rows is how many rows Scan, ReadKeys and QueryBySort return (default
	// 10), and how many new rows an Insert writes in one commit, a batch of
	// mutations (default 1; the Mutation write path only, at most 7272:
	// Cloud Spanner's 80,000 mutations a commit; and rows x
	// dataset.fieldBytes x the row's text fields at most 90,000,000, its
	// 100 MB a commit). An operation is one
	// commit: its throughput counts commits, its rows are rows times that.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	Rows *int32 `json:"rows,omitempty"`

	// keys is how existing keys are chosen: Uniform (default), Zipfian or
	// Latest.
	// +optional
	Keys KeyDistribution `json:"keys,omitempty"`

	// staleness makes a read a single-use stale read (TPCC's OrderStatus and
	// StockLevel: a read-only transaction at that staleness). Absent means
	// strong.
	// +optional
	Staleness *StalenessSpec `json:"staleness,omitempty"`

	// directedRead routes read-only operations to chosen replicas.
	// +optional
	DirectedRead *DirectedReadSpec `json:"directedRead,omitempty"`

	// priority is the RPC priority. Default: Spanner's (High).
	// +optional
	Priority RPCPriority `json:"priority,omitempty"`

	// commit holds commit options for writes.
	// +optional
	Commit *CommitSpec `json:"commit,omitempty"`

	// custom is what a Custom workload's operation runs: its SQL and
	// parameters, its read, its mutation or its transaction's steps.
	// +optional
	Custom *CustomOperationSpec `json:"custom,omitempty"`
}

// StalenessSpec selects a bounded or exact staleness for a read.
// +kubebuilder:validation:XValidation:rule="has(self.exact) != has(self.max)",message="staleness: set exactly one of exact and max"
type StalenessSpec struct {
	// exact reads at exactly this long ago, such as 15s.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="staleness.exact: must be a positive duration of at most 168h, such as 15s"
	Exact *metav1.Duration `json:"exact,omitempty"`

	// max reads at most this long ago, as fresh as Spanner can serve
	// locally, such as 15s.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="staleness.max: must be a positive duration of at most 168h, such as 15s"
	Max *metav1.Duration `json:"max,omitempty"`
}

// DirectedReadSpec routes reads to replicas by location and type.
// +kubebuilder:validation:XValidation:rule="has(self.include) != has(self.exclude)",message="directedRead: set exactly one of include and exclude"
type DirectedReadSpec struct {
	// include lists the replicas to prefer, in order.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	Include []ReplicaSelection `json:"include,omitempty"` //nolint:kubeapilinter // arrayofstruct: a selection needs a location, a type or both (CEL), so neither field alone is required.

	// autoFailoverDisabled keeps included-replica reads from failing over to
	// other replicas.
	// +optional
	AutoFailoverDisabled bool `json:"autoFailoverDisabled,omitempty"`

	// exclude lists replicas never to read from.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	Exclude []ReplicaSelection `json:"exclude,omitempty"` //nolint:kubeapilinter // arrayofstruct: as include.
}

// ReplicaSelection selects replicas by location, type, or both.
// +kubebuilder:validation:XValidation:rule="(has(self.location) && size(self.location) > 0) || has(self.type)",message="directedRead: each replica selection needs a location, a type or both"
type ReplicaSelection struct {
	// location is a Spanner region, such as asia-northeast1.
	// +optional
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^([a-z][-a-z0-9]*[a-z0-9])?$`
	Location string `json:"location,omitempty"`

	// type is ReadWrite or ReadOnly.
	// +optional
	Type ReplicaType `json:"type,omitempty"`
}

// CommitSpec holds commit options of a write.
type CommitSpec struct {
	// maxCommitDelay lets Spanner delay the commit by up to this long to
	// batch writes, from 0s to 500ms.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) >= duration('0s') && duration(self) <= duration('500ms')",message="commit.maxCommitDelay: must be a duration from 0s to 500ms, such as 100ms"
	MaxCommitDelay *metav1.Duration `json:"maxCommitDelay,omitempty"`

	// returnCommitStats asks Spanner for the mutation count of each commit.
	// +optional
	ReturnCommitStats bool `json:"returnCommitStats,omitempty"`
}

// LoadSpec is the load profile: exactly one of rate, steps, ramp, search
// (open loop) or concurrency (closed loop).
// +kubebuilder:validation:XValidation:rule="[has(self.rate), has(self.steps), has(self.ramp), has(self.search), has(self.concurrency)].filter(x, x).size() == 1",message="load: set exactly one of rate, steps, ramp, search and concurrency"
// +kubebuilder:validation:XValidation:rule="!has(self.concurrency) || !has(self.arrivals)",message="load.arrivals: applies only to open-loop loads (rate, steps, ramp, search), not to concurrency",fieldPath=".arrivals"
type LoadSpec struct {
	// rate is a constant open-loop target rate in operations per second,
	// across all runners.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	Rate *int32 `json:"rate,omitempty"`

	// steps is a list of constant rates held one after the other.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Steps []RateStep `json:"steps,omitempty"`

	// ramp rises linearly from `from` to `to` over its duration, then holds
	// `to` until the end of the run.
	// +optional
	Ramp *RampSpec `json:"ramp,omitempty"`

	// search is a capacity search: steps of constant rate, each judged
	// against an SLO, narrowing in on the highest rate that passes
	// (docs/capacity.md). The workload's duration bounds the whole search:
	// admission refuses a search whose worst case does not fit in it.
	// +optional
	Search *SearchSpec `json:"search,omitempty"`

	// concurrency selects a closed loop: this many workers per runner send
	// back to back, with no target rate, to find maximum throughput.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000
	Concurrency *int32 `json:"concurrency,omitempty"`

	// arrivals spaces open-loop sends: Uniform (default) or Poisson.
	// +optional
	Arrivals Arrivals `json:"arrivals,omitempty"`

	// maxInFlight caps the requests in flight per runner. A send due while
	// the cap is reached is counted as missed, never queued silently.
	// Default 512.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100000
	MaxInFlight *int32 `json:"maxInFlight,omitempty"`
}

// RateStep holds one rate for a while.
type RateStep struct {
	// rate is the target rate in operations per second, across all runners.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	Rate int32 `json:"rate"`

	// duration is how long the rate is held, such as 5m.
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="steps.duration: must be a positive duration of at most 168h, such as 5m"
	Duration metav1.Duration `json:"duration"`
}

// RampSpec is a linear rise of the rate.
type RampSpec struct {
	// from is the rate at the start, in operations per second.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	From int32 `json:"from"`

	// to is the rate at the end of the ramp, in operations per second.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	To int32 `json:"to"`

	// duration is how long the rise takes, such as 10m.
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="ramp.duration: must be a positive duration of at most 168h, such as 10m"
	Duration metav1.Duration `json:"duration"`
}

// SearchConfirm is how a capacity search treats a failing step before it
// narrows.
// +kubebuilder:validation:Enum=Majority;RetryWins;None;""
type SearchConfirm string

const (
	// SearchConfirmMajority, the default, runs a failing rate again and,
	// when the two disagree, a third time: best two of three.
	SearchConfirmMajority SearchConfirm = "Majority"
	// SearchConfirmRetryWins runs a failing rate again and takes the
	// retry's verdict; biased high under step-to-step noise.
	SearchConfirmRetryWins SearchConfirm = "RetryWins"
	// SearchConfirmNone takes each step's verdict as it is.
	SearchConfirmNone SearchConfirm = "None"
)

// SearchSpec is a capacity search: rates go up geometrically (doubling)
// from `from` until a step fails its SLO or `max` passes, then bisect
// between the highest passing and the lowest failing rate until they are
// within `resolution`. Each step holds one rate for warmUp, then measures
// it for stepDuration from its own histograms. The number of steps a
// search may take is known at admission (its worst case) and must fit in
// the workload's duration.
type SearchSpec struct {
	// from is the first step's rate, in operations per second across all
	// runners; at most max.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	From int32 `json:"from"`

	// max is the highest rate the search offers, in operations per second;
	// a search whose max passes reports a capacity of at least max.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	Max int32 `json:"max"`

	// resolution is how close, in operations per second, the highest
	// passing and the lowest failing rate must be for the search to stop.
	// Choose it no finer than the system's step-to-step noise.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10000000
	Resolution int32 `json:"resolution"`

	// stepDuration is how long each step is measured, after its warm-up,
	// such as 1m; a whole number of the workload's intervals.
	// +required
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="search.stepDuration: must be a positive duration of at most 168h, such as 1m"
	StepDuration metav1.Duration `json:"stepDuration"`

	// warmUp is how long each step runs at its rate before it is
	// measured, such as 20s; a whole number of the workload's intervals.
	// Default 0s: no warm-up.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) >= duration('0s') && duration(self) <= duration('168h')",message="search.warmUp: must be a duration from 0s to 168h, such as 20s"
	WarmUp *metav1.Duration `json:"warmUp,omitempty"`

	// slo is the service-level objective, a list of conditions all of
	// which a step must meet to pass, each in its text form: a latency
	// percentile of named operations or of all (`p99 <= 20ms`,
	// `p99.9(read, query) <= 50ms`), an error ratio (`errors <= 0.1%`,
	// `errors(commit) <= 1%`), the achieved share of intended sends
	// (`achieved >= 95%`; added at 95 % when absent), or Spanner's
	// high-priority CPU, the highest region's (`cpu <= 65%`,
	// `cpu <= Recommended`: 65 % regional, 45 % multi-region), which
	// decides only where the target reports it.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=512
	SLO []string `json:"slo"`

	// confirm is how a failing step is confirmed before the search
	// narrows: Majority (default; best two of three), RetryWins (the
	// retry's verdict) or None.
	// +optional
	Confirm SearchConfirm `json:"confirm,omitempty"`
}

// WarmUpSpec says which first part of a run is excluded from the results.
// +kubebuilder:validation:XValidation:rule="!has(self.mode) || self.mode != 'Fixed' || has(self.duration)",message="warmUp.duration: required when mode is Fixed",fieldPath=".duration"
// +kubebuilder:validation:XValidation:rule="!has(self.duration) || (has(self.mode) && self.mode == 'Fixed')",message="warmUp.duration: applies only to mode Fixed",fieldPath=".duration"
// +kubebuilder:validation:XValidation:rule="!(has(self.window) || has(self.tolerancePercent) || has(self.max)) || (has(self.mode) && self.mode == 'Auto')",message="warmUp: window, tolerancePercent and max apply only to mode Auto"
type WarmUpSpec struct {
	// mode is None (default), Fixed or Auto.
	// +optional
	Mode WarmUpMode `json:"mode,omitempty"`

	// duration is the warm-up length in Fixed mode, such as 2m; shorter
	// than the run.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="warmUp.duration: must be a positive duration of at most 168h, such as 2m"
	Duration *metav1.Duration `json:"duration,omitempty"`

	// window is how many consecutive intervals must be stable to end an
	// Auto warm-up. Default 3.
	// +optional
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=100
	Window *int32 `json:"window,omitempty"`

	// tolerancePercent is how far throughput and p99 may stray from their
	// window mean, in percent, for the window to count as stable. Default 10.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	TolerancePercent *int32 `json:"tolerancePercent,omitempty"`

	// max ends an Auto warm-up that never stabilises, such as 5m; the
	// results say so. Shorter than the run. Default: half the run.
	// +optional
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) > duration('0s') && duration(self) <= duration('168h')",message="warmUp.max: must be a positive duration of at most 168h, such as 10m"
	Max *metav1.Duration `json:"max,omitempty"`
}

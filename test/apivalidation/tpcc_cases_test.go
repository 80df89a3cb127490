package apivalidation

// tpccGoodRuns are TPCC workloads the API server must accept as sent.
var tpccGoodRuns = []goodRun{
	{name: "tpcc-standard-mix", base: "minimal.yaml", patch: `
spec:
  workload:
    type: TPCC
    operations: null
    tpcc:
      warehouses: 10`},
	{name: "tpcc-test-population-new-order-alone", base: "minimal.yaml", patch: `
spec:
  workload:
    type: TPCC
    tpcc:
      population: Test
      consistencyChecks: true
    dataset:
      batchRows: 363
    operations:
    - type: NewOrder
      weight: 1
      writePath: DML
      priority: Medium
      commit:
        maxCommitDelay: 50ms
    - type: StockLevel
      weight: 1
      staleness:
        exact: 15s`},
	{name: "tpcc-resolved-rows", base: "minimal.yaml", patch: `
spec:
  workload:
    type: TPCC
    operations: null
    tpcc:
      warehouses: 2
      population: Test
    dataset:
      rows: 3602
      fieldBytes: 100`},
}

// tpccBadRuns are the TPCC refusals, one rule each.
var tpccBadRuns = []badRun{
	{
		name: "tpcc-transaction-in-ycsb",
		patch: `
spec:
  workload:
    operations:
    - type: NewOrder
      weight: 1`,
		want: []cause{
			{"spec.workload.operations", "Invalid value: \"object\": operations: YCSB supports Read, Scan, ReadKeys, Insert, Update, Delete, ReadModifyWrite; Tweet supports Read, Insert, Update, Delete, QueryBySort, FullScan; TPCC supports NewOrder, Payment, OrderStatus, Delivery, StockLevel; Custom supports Query, DML, ReadRows, Mutation, Transaction"},
		},
	},
	{
		name: "ycsb-without-operations",
		patch: `
spec:
  workload:
    operations: null`,
		want: []cause{
			{"spec.workload.operations", "Invalid value: \"object\": operations: required, except for TPCC, whose default is the standard mix (NewOrder 45, Payment 43, OrderStatus 4, Delivery 4, StockLevel 4)"},
		},
	},
	{
		name: "tpcc-options-on-ycsb",
		patch: `
spec:
  workload:
    tpcc:
      warehouses: 2`,
		want: []cause{
			{"spec.workload.tpcc", "Invalid value: \"object\": tpcc: applies only to type TPCC"},
		},
	},
	{
		name: "tpcc-zero-warehouses",
		patch: `
spec:
  workload:
    type: TPCC
    operations: null
    tpcc:
      warehouses: 0`,
		want: []cause{
			{"spec.workload.tpcc.warehouses", "Invalid value: 0: spec.workload.tpcc.warehouses in body should be greater than or equal to 1"},
		},
	},
	{
		name: "tpcc-unknown-population",
		patch: `
spec:
  workload:
    type: TPCC
    operations: null
    tpcc:
      population: Tiny`,
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.workload.tpcc.population", "Unsupported value: \"Tiny\": supported values: \"Full\", \"Test\", \"\""},
		},
	},
	{
		name: "tpcc-rows",
		patch: `
spec:
  workload:
    type: TPCC
    operations: null
    dataset:
      rows: 1000`,
		want: []cause{
			{"spec.workload.dataset.rows", "Invalid value: \"object\": dataset.rows: TPCC's load units follow from tpcc.warehouses and tpcc.population; leave rows out"},
		},
	},
	{
		name: "tpcc-field-bytes",
		patch: `
spec:
  workload:
    type: TPCC
    operations: null
    dataset:
      fieldBytes: 500`,
		want: []cause{
			{"spec.workload.dataset.fieldBytes", "Invalid value: \"object\": dataset.fieldBytes: TPCC's columns have the specification's sizes; leave fieldBytes out"},
		},
	},
	{
		name: "tpcc-batch-over-mutation-limit",
		patch: `
spec:
  workload:
    type: TPCC
    operations: null
    dataset:
      batchRows: 364`,
		want: []cause{
			{"spec.workload.dataset.batchRows", "Invalid value: \"object\": dataset.batchRows: one batch is one commit, and Cloud Spanner takes at most 80,000 mutations per commit: at most 7272 rows for YCSB (11 per row), 8000 for Tweet (10 per row, its index included), 363 load units for TPCC (up to 220 each: a customer with its history, order, 15 order lines and new order)"},
		},
	},
	{
		name:    "tpcc-stale-new-order",
		goField: "spec.workload.operations[0].staleness",
		patch: `
spec:
  workload:
    type: TPCC
    operations:
    - type: NewOrder
      weight: 1
      staleness:
        exact: 15s`,
		want: []cause{
			{"spec.workload.operations[0].staleness", "Invalid value: \"object\": staleness: only reads can be stale; writes, ReadModifyWrite, NewOrder, Payment, Delivery, DML, Mutation and Transaction run in read-write transactions"},
		},
	},
	{
		name: "tpcc-commit-on-order-status",
		patch: `
spec:
  workload:
    type: TPCC
    operations:
    - type: OrderStatus
      weight: 1
      commit:
        maxCommitDelay: 10ms`,
		want: []cause{
			{"spec.workload.operations[0].commit", "Invalid value: \"object\": commit: commit options apply only to writes"},
		},
	},
	{
		name: "tpcc-write-path-on-stock-level",
		patch: `
spec:
  workload:
    type: TPCC
    operations:
    - type: StockLevel
      weight: 1
      writePath: DML`,
		want: []cause{
			{"spec.workload.operations[0].writePath", "Invalid value: \"object\": writePath: only Insert, Update, Delete, NewOrder, Payment and Delivery have a write path"},
		},
	},
	{
		name: "tpcc-max-staleness-in-a-transaction",
		patch: `
spec:
  workload:
    type: TPCC
    operations:
    - type: OrderStatus
      weight: 1
      staleness:
        max: 10s`,
		want: []cause{
			{"spec.workload.operations[0].staleness.max", "Invalid value: \"object\": staleness.max: OrderStatus and StockLevel read several times in one read-only transaction, which takes exact staleness only"},
		},
	},
	{
		name: "tpcc-split-points",
		patch: `
spec:
  target:
    splitPoints:
      count: 4
  workload:
    type: TPCC
    operations: null`,
		want: []cause{
			{"spec.target.splitPoints", "Invalid value: \"object\": target.splitPoints: split points are keys of YCSB's and Tweet's string ids; pre-splitting TPCC's warehouse-keyed tables is not built"},
		},
	},
}

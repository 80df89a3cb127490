package apivalidation

// badRuns are the refusals, one rule each. Messages are asserted exactly:
// they are what a user reads from `kubectl apply`.
var badRuns = []badRun{
	{
		name:        "unknown-field",
		wantMessage: `BenchmarkRun in version "v1alpha1" cannot be handled as a BenchmarkRun: strict decoding error: unknown field "spec.workload.load.rat"`,
		goField:     decodeError,
		patch: `
spec:
  workload:
    load:
      rat: 800`,
	},
	{
		name: "negative-rate",
		patch: `
spec:
  workload:
    load:
      rate: -5`,
		want: []cause{
			{"spec.workload.load.rate", "Invalid value: -5: spec.workload.load.rate in body should be greater than or equal to 1"},
		},
	},
	{
		name: "rate-too-high",
		patch: `
spec:
  workload:
    load:
      rate: 20000000`,
		want: []cause{
			{"spec.workload.load.rate", "Invalid value: 20000000: spec.workload.load.rate in body should be less than or equal to 10000000"},
		},
	},
	{
		name: "weight-zero",
		patch: `
spec:
  workload:
    operations:
    - type: Read
      weight: 0`,
		want: []cause{
			{"spec.workload.operations[0].weight", "Invalid value: 0: spec.workload.operations[0].weight in body should be greater than or equal to 1"},
		},
	},
	{
		name: "staleness-on-write",
		patch: `
spec:
  workload:
    operations:
    - type: Insert
      weight: 1
      staleness:
        max: 15s`,
		want: []cause{
			{"spec.workload.operations[0].staleness", "Invalid value: \"object\": staleness: only reads can be stale; writes, ReadModifyWrite, NewOrder, Payment, Delivery, DML, Mutation and Transaction run in read-write transactions"},
		},
	},
	{
		name: "staleness-exact-and-max",
		patch: `
spec:
  workload:
    operations:
    - type: Read
      weight: 1
      staleness:
        exact: 15s
        max: 15s`,
		want: []cause{
			{"spec.workload.operations[0].staleness", "Invalid value: \"object\": staleness: set exactly one of exact and max"},
		},
	},
	{
		name: "staleness-zero",
		patch: `
spec:
  workload:
    operations:
    - type: Read
      weight: 1
      staleness:
        exact: 0s`,
		want: []cause{
			{"spec.workload.operations[0].staleness.exact", "Invalid value: \"string\": staleness.exact: must be a positive duration of at most 168h, such as 15s"},
		},
	},
	{
		name: "directed-read-on-write",
		patch: `
spec:
  workload:
    operations:
    - type: Update
      weight: 1
      directedRead:
        include:
        - location: asia-northeast1`,
		want: []cause{
			{"spec.workload.operations[0].directedRead", "Invalid value: \"object\": directedRead: only read-only operations can be directed"},
		},
	},
	{
		name: "directed-read-include-and-exclude",
		patch: `
spec:
  workload:
    operations:
    - type: Read
      weight: 1
      directedRead:
        include:
        - location: asia-northeast1
        exclude:
        - location: asia-northeast2`,
		want: []cause{
			{"spec.workload.operations[0].directedRead", "Invalid value: \"object\": directedRead: set exactly one of include and exclude"},
		},
	},
	{
		name: "directed-read-empty-selection",
		patch: `
spec:
  workload:
    operations:
    - type: Read
      weight: 1
      directedRead:
        include:
        - {}`,
		want: []cause{
			{"spec.workload.operations[0].directedRead.include[0]", "Invalid value: \"object\": directedRead: each replica selection needs a location, a type or both"},
		},
	},
	{
		name: "directed-read-empty-include",
		patch: `
spec:
  workload:
    operations:
    - type: Read
      weight: 1
      directedRead:
        include: []`,
		want: []cause{
			{"spec.workload.operations[0].directedRead.include", "Invalid value: 0: spec.workload.operations[0].directedRead.include in body should have at least 1 items"},
		},
	},
	{
		name: "commit-on-read",
		patch: `
spec:
  workload:
    operations:
    - type: Read
      weight: 1
      commit:
        returnCommitStats: true`,
		want: []cause{
			{"spec.workload.operations[0].commit", "Invalid value: \"object\": commit: commit options apply only to writes"},
		},
	},
	{
		name: "commit-delay-too-long",
		patch: `
spec:
  workload:
    operations:
    - type: Insert
      weight: 1
      commit:
        maxCommitDelay: 600ms`,
		want: []cause{
			{"spec.workload.operations[0].commit.maxCommitDelay", "Invalid value: \"string\": commit.maxCommitDelay: must be a duration from 0s to 500ms, such as 100ms"},
		},
	},
	{
		name: "write-path-on-read",
		patch: `
spec:
  workload:
    operations:
    - type: Read
      weight: 1
      writePath: DML`,
		want: []cause{
			{"spec.workload.operations[0].writePath", "Invalid value: \"object\": writePath: only Insert, Update, Delete, NewOrder, Payment and Delivery have a write path"},
		},
	},
	{
		name: "api-on-write",
		patch: `
spec:
  workload:
    operations:
    - type: Insert
      weight: 1
      api: SQL`,
		want: []cause{
			{"spec.workload.operations[0].api", "Invalid value: \"object\": api: only Read, Scan and ReadKeys can choose between the Read and SQL APIs"},
		},
	},
	{
		name: "rows-on-single-row-read",
		patch: `
spec:
  workload:
    operations:
    - type: Read
      weight: 1
      rows: 10`,
		want: []cause{
			{"spec.workload.operations[0].rows", "Invalid value: \"object\": rows: only Scan, ReadKeys, QueryBySort and ReadRows return several rows, and only Insert writes several"},
		},
	},
	{
		name: "insert-rows-through-dml",
		patch: `
spec:
  workload:
    operations:
    - type: Insert
      weight: 1
      writePath: DML
      rows: 10`,
		want: []cause{
			{"spec.workload.operations[0].rows", "Invalid value: \"object\": rows: an Insert of several rows is one commit of mutations (writePath Mutation), and Cloud Spanner takes at most 80,000 mutations per commit: at most 7272 rows (11 mutations a YCSB row, 10 a Tweet row with its index)"},
		},
	},
	{
		name: "insert-rows-over-a-commit",
		patch: `
spec:
  workload:
    operations:
    - type: Insert
      weight: 1
      rows: 7273`,
		want: []cause{
			{"spec.workload.operations[0].rows", "Invalid value: \"object\": rows: an Insert of several rows is one commit of mutations (writePath Mutation), and Cloud Spanner takes at most 80,000 mutations per commit: at most 7272 rows (11 mutations a YCSB row, 10 a Tweet row with its index)"},
		},
	},
	{
		// One row over a commit's size: 10 rows of 10 fields of 1,000,000
		// bytes (the dataset's batch is held to 9 rows, so that only the
		// Insert is refused).
		name: "insert-rows-over-a-commit-size",
		patch: `
spec:
  workload:
    dataset:
      fieldBytes: 1000000
      batchRows: 9
    operations:
    - type: Insert
      weight: 1
      rows: 10`,
		want: []cause{
			{"spec.workload.operations", "Invalid value: \"object\": operations: an Insert's rows are one commit, and Cloud Spanner takes at most 100 MB per commit: rows x dataset.fieldBytes x text fields per row (10 for YCSB, 1 for Tweet) must stay under 90,000,000"},
		},
	},
	{
		name: "operation-not-in-workload",
		patch: `
spec:
  workload:
    operations:
    - type: QueryBySort
      weight: 1`,
		want: []cause{
			{"spec.workload.operations", "Invalid value: \"object\": operations: YCSB supports Read, Scan, ReadKeys, Insert, Update, Delete, ReadModifyWrite; Tweet supports Read, Insert, Update, Delete, QueryBySort, FullScan; TPCC supports NewOrder, Payment, OrderStatus, Delivery, StockLevel; Custom supports Query, DML, ReadRows, Mutation, Transaction"},
		},
	},
	{
		name: "duplicate-default-names",
		patch: `
spec:
  workload:
    operations:
    - type: Read
      weight: 1
    - type: Read
      weight: 2`,
		want: []cause{
			{"spec.workload.operations", "Invalid value: \"array\": operations: names must be unique; name operations of the same type explicitly (an unnamed operation is named after its type, e.g. read-keys)"},
		},
	},
	{
		name: "name-clashes-with-default",
		patch: `
spec:
  workload:
    operations:
    - name: read
      type: Scan
      weight: 1
    - type: Read
      weight: 2`,
		want: []cause{
			{"spec.workload.operations", "Invalid value: \"array\": operations: names must be unique; name operations of the same type explicitly (an unnamed operation is named after its type, e.g. read-keys)"},
		},
	},
	{
		name: "operation-name-pattern",
		patch: `
spec:
  workload:
    operations:
    - name: Get_By_ID
      type: Read
      weight: 1`,
		want: []cause{
			{"spec.workload.operations[0].name", "Invalid value: \"Get_By_ID\": spec.workload.operations[0].name in body should match '^([a-z][a-z0-9-]*)?$'"},
		},
	},
	{
		name: "no-operations",
		patch: `
spec:
  workload:
    operations: []`,
		want: []cause{
			{"spec.workload.operations", "Invalid value: 0: spec.workload.operations in body should have at least 1 items"},
		},
	},
	{
		name: "unknown-workload",
		patch: `
spec:
  workload:
    type: TPCH`,
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.workload.type", "Unsupported value: \"TPCH\": supported values: \"YCSB\", \"Tweet\", \"TPCC\", \"Custom\""},
		},
	},
	{
		name: "nodes-and-processing-units",
		patch: `
spec:
  target:
    instance:
      nodes: 1
      processingUnits: 1000`,
		want: []cause{
			{"spec.target.instance.processingUnits", "Invalid value: \"object\": instance: set nodes or processingUnits, not both"},
		},
	},
	{
		name: "processing-units-not-multiple-of-100",
		patch: `
spec:
  target:
    instance:
      processingUnits: 150`,
		want: []cause{
			{"spec.target.instance.processingUnits", "Invalid value: \"object\": instance.processingUnits: must be a multiple of 100 below 1000 and of 1000 from 1000"},
		},
	},
	{
		name: "processing-units-not-multiple-of-1000",
		patch: `
spec:
  target:
    instance:
      processingUnits: 1500`,
		want: []cause{
			{"spec.target.instance.processingUnits", "Invalid value: \"object\": instance.processingUnits: must be a multiple of 100 below 1000 and of 1000 from 1000"},
		},
	},
	{
		name: "ephemeral-without-size",
		patch: `
spec:
  target:
    instance:
      mode: Ephemeral
      config: regional-asia-northeast1`,
		want: []cause{
			{"spec.target.instance", "Invalid value: \"object\": instance: an Ephemeral instance needs config and nodes or processingUnits"},
		},
	},
	{
		name: "split-points-keys-and-count",
		patch: `
spec:
  target:
    splitPoints:
      keys: ["40000000"]
      count: 3`,
		want: []cause{
			{"spec.target.splitPoints", "Invalid value: \"object\": splitPoints: set keys or count, not both"},
		},
	},
	{
		name: "split-points-count-too-high",
		patch: `
spec:
  target:
    splitPoints:
      count: 5000`,
		want: []cause{
			{"spec.target.splitPoints.count", "Invalid value: 5000: spec.target.splitPoints.count in body should be less than or equal to 1000"},
		},
	},
	{
		name: "batch-over-spanner-mutation-limit",
		patch: `
spec:
  workload:
    dataset:
      batchRows: 7273`,
		want: []cause{
			{"spec.workload.dataset.batchRows", "Invalid value: \"object\": dataset.batchRows: one batch is one commit, and Cloud Spanner takes at most 80,000 mutations per commit: at most 7272 rows for YCSB (11 per row), 8000 for Tweet (10 per row, its index included), 363 load units for TPCC (up to 220 each: a customer with its history, order, 15 order lines and new order)"},
		},
	},
	{
		name: "batch-over-spanner-commit-size",
		patch: `
spec:
  workload:
    dataset:
      batchRows: 1000
      fieldBytes: 10000`,
		want: []cause{
			{"spec.workload.dataset.batchRows", "Invalid value: \"object\": dataset.batchRows: one batch is one commit, and Cloud Spanner takes at most 100 MB per commit: batchRows x fieldBytes x text fields per row (10 for YCSB, 1 for Tweet) must stay under 90,000,000"},
		},
	},
	{
		name: "loader-pods-out-of-range",
		patch: `
spec:
  workload:
    dataset:
      loaderPods: 101`,
		want: []cause{
			{"spec.workload.dataset.loaderPods", "Invalid value: 101: spec.workload.dataset.loaderPods in body should be less than or equal to 100"},
		},
	},
	{
		name: "load-rate-cap-zero",
		patch: `
spec:
  workload:
    dataset:
      maxRowsPerSecond: 0`,
		want: []cause{
			{"spec.workload.dataset.maxRowsPerSecond", "Invalid value: 0: spec.workload.dataset.maxRowsPerSecond in body should be greater than or equal to 1"},
		},
	},
	{
		// 4,000 rows at 1 a second take 66m40s, past the default 1h.
		name: "load-cap-past-the-default-deadline",
		patch: `
spec:
  workload:
    dataset:
      rows: 4000
      maxRowsPerSecond: 1`,
		want: []cause{
			{"spec.workload.dataset.maxRowsPerSecond", "Invalid value: \"object\": workload.dataset.maxRowsPerSecond: at this cap the dataset (workload.dataset.rows, default 1000) takes longer to load than deadlines.load (default 1h) allows; raise the cap or deadlines.load"},
		},
	},
	{
		// The default 1,000 rows at 1 a second take 16m40s, past 10m.
		name: "load-cap-past-its-deadline",
		patch: `
spec:
  deadlines:
    load: 10m
  workload:
    dataset:
      maxRowsPerSecond: 1`,
		want: []cause{
			{"spec.workload.dataset.maxRowsPerSecond", "Invalid value: \"object\": workload.dataset.maxRowsPerSecond: at this cap the dataset (workload.dataset.rows, default 1000) takes longer to load than deadlines.load (default 1h) allows; raise the cap or deadlines.load"},
		},
	},
	{
		name: "dialect-unknown",
		patch: `
spec:
  target:
    dialect: MySQL`,
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.target.dialect", "Unsupported value: \"MySQL\": supported values: \"GoogleSQL\", \"PostgreSQL\", \"\""},
		},
	},
	{
		name: "edition-unknown",
		patch: `
spec:
  target:
    instance:
      edition: Premium`,
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.target.instance.edition", "Unsupported value: \"Premium\": supported values: \"Standard\", \"Enterprise\", \"EnterprisePlus\", \"\""},
		},
	},
	{
		name: "project-pattern",
		patch: `
spec:
  target:
    project: My_Project`,
		want: []cause{
			{"spec.target.project", "Invalid value: \"My_Project\": spec.target.project in body should match '^[a-z][a-z0-9-]*[a-z0-9]$'"},
		},
	},
	{
		name: "missing-database",
		patch: `
spec:
  target:
    database: null`,
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.target.database", "Required value"},
		},
	},
	{
		name: "missing-duration",
		patch: `
spec:
  workload:
    duration: null`,
		want: []cause{
			{"spec.workload.duration", "Invalid value: \"object\": duration: required unless load.steps gives the run's duration"},
		},
	},
	{
		name: "duration-and-steps",
		patch: `
spec:
  workload:
    load:
      rate: null
      steps:
      - rate: 100
        duration: 1m`,
		want: []cause{
			{"spec.workload.duration", "Invalid value: \"object\": duration: set duration, or load.steps (whose durations add up to the run's), not both"},
		},
	},
	{
		name: "zero-duration",
		patch: `
spec:
  workload:
    duration: 0s`,
		want: []cause{
			{"spec.workload.duration", "Invalid value: \"string\": duration: must be a positive duration of at most 168h, such as 10m or 1h30m"},
		},
	},
	{
		name: "negative-duration",
		patch: `
spec:
  workload:
    duration: -5m`,
		want: []cause{
			{"spec.workload.duration", "Invalid value: \"string\": duration: must be a positive duration of at most 168h, such as 10m or 1h30m"},
		},
	},
	{
		name:    "duration-without-unit",
		goField: decodeError,
		patch: `
spec:
  workload:
    duration: "10"`,
		want: []cause{
			{"spec.workload.duration", "Invalid value: \"string\": duration: must be a positive duration of at most 168h, such as 10m or 1h30m"},
		},
	},
	{
		name: "two-load-kinds",
		patch: `
spec:
  workload:
    load:
      concurrency: 10`,
		want: []cause{
			{"spec.workload.load", "Invalid value: \"object\": load: set exactly one of rate, steps, ramp, search and concurrency"},
		},
	},
	{
		name: "no-load-kind",
		patch: `
spec:
  workload:
    load:
      rate: null
      maxInFlight: 10`,
		want: []cause{
			{"spec.workload.load", "Invalid value: \"object\": load: set exactly one of rate, steps, ramp, search and concurrency"},
		},
	},
	{
		name: "empty-steps",
		patch: `
spec:
  workload:
    duration: null
    load:
      rate: null
      steps: []`,
		want: []cause{
			{"spec.workload.load.steps", "Invalid value: 0: spec.workload.load.steps in body should have at least 1 items"},
		},
	},
	{
		name: "arrivals-with-concurrency",
		patch: `
spec:
  workload:
    load:
      rate: null
      concurrency: 10
      arrivals: Poisson`,
		want: []cause{
			{"spec.workload.load.arrivals", "Invalid value: \"object\": load.arrivals: applies only to open-loop loads (rate, steps, ramp, search), not to concurrency"},
		},
	},
	{
		name: "interval-too-short",
		patch: `
spec:
  workload:
    interval: 500ms`,
		want: []cause{
			{"spec.workload.interval", "Invalid value: \"string\": interval: must be a duration from 1s to 1h, such as 10s"},
		},
	},
	{
		name: "warm-up-fixed-without-duration",
		patch: `
spec:
  workload:
    warmUp:
      mode: Fixed`,
		want: []cause{
			{"spec.workload.warmUp.duration", "Invalid value: \"object\": warmUp.duration: required when mode is Fixed"},
		},
	},
	{
		name: "warm-up-duration-without-fixed",
		patch: `
spec:
  workload:
    warmUp:
      mode: Auto
      duration: 10s`,
		want: []cause{
			{"spec.workload.warmUp.duration", "Invalid value: \"object\": warmUp.duration: applies only to mode Fixed"},
		},
	},
	{
		name: "warm-up-window-without-auto",
		patch: `
spec:
  workload:
    warmUp:
      window: 5`,
		want: []cause{
			{"spec.workload.warmUp", "Invalid value: \"object\": warmUp: window, tolerancePercent and max apply only to mode Auto"},
		},
	},
	{
		name: "warm-up-longer-than-run",
		patch: `
spec:
  workload:
    warmUp:
      mode: Fixed
      duration: 2m`,
		want: []cause{
			{"spec.workload.warmUp.duration", "Invalid value: \"object\": warmUp.duration: must leave at least one interval (default 10s) of the run's duration after the warm-up"},
		},
	},
	{
		name: "warm-up-longer-than-steps",
		patch: `
spec:
  workload:
    duration: null
    load:
      rate: null
      steps:
      - rate: 100
        duration: 30s
      - rate: 200
        duration: 30s
    warmUp:
      mode: Fixed
      duration: 1m`,
		want: []cause{
			{"spec.workload.warmUp.duration", "Invalid value: \"object\": warmUp.duration: must leave at least one interval (default 10s) of the run's duration (the sum of load.steps) after the warm-up"},
		},
	},
	{
		name: "warm-up-max-longer-than-run",
		patch: `
spec:
  workload:
    warmUp:
      mode: Auto
      max: 1m`,
		want: []cause{
			{"spec.workload.warmUp.max", "Invalid value: \"object\": warmUp.max: must leave at least one interval (default 10s) of the run's duration after the warm-up"},
		},
	},
	{
		name: "replicas-zero",
		patch: `
spec:
  runners:
    replicas: 0`,
		want: []cause{
			{"spec.runners.replicas", "Invalid value: 0: spec.runners.replicas in body should be greater than or equal to 1"},
		},
	},
	{
		name: "deadline-too-long",
		patch: `
spec:
  deadlines:
    load: 200h`,
		want: []cause{
			{"spec.deadlines.load", "Invalid value: \"string\": deadlines.load: must be a positive duration of at most 168h, such as 1h"},
		},
	},
	{
		name: "deadline-zero",
		patch: `
spec:
  deadlines:
    runnersReady: 0s`,
		want: []cause{
			{"spec.deadlines.runnersReady", "Invalid value: \"string\": deadlines.runnersReady: must be a positive duration of at most 168h, such as 10m"},
		},
	},
	{
		name: "name-with-dots",
		patch: `
metadata:
  name: run.with.dots`,
		want: []cause{
			{"<nil>", "Invalid value: \"object\": metadata.name: a BenchmarkRun name must be at most 50 characters of lower-case letters, digits and '-', start with a letter and end with a letter or digit, so that its runner Job and Service can be named after it"},
		},
	},
	{
		name: "name-too-long",
		patch: `
metadata:
  name: a-benchmark-run-name-that-is-longer-than-fifty-chars`,
		want: []cause{
			{"<nil>", "Invalid value: \"object\": metadata.name: a BenchmarkRun name must be at most 50 characters of lower-case letters, digits and '-', start with a letter and end with a letter or digit, so that its runner Job and Service can be named after it"},
		},
	},
}

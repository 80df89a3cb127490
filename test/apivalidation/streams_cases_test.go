package apivalidation

// streamsOps turns minimal.yaml into a two-operation workload whose load
// comes from streams; the patches below add the streams.
const streamsOps = `
spec:
  workload:
    load: null
    duration: 10m
    operations:
    - type: Read
      weight: 1
    - type: Update
      weight: 1`

// streamsOnReplicas is streamsOps with three runner pods.
var streamsOnReplicas = `
spec:
  runners:
    replicas: 3` + streamsOps[len("\nspec:"):]

// streamsGoodRuns are stream workloads the API server must accept as sent.
var streamsGoodRuns = []goodRun{
	{name: "streams-online-and-batch", base: "minimal.yaml", patch: streamsOps + `
    streams:
    - name: online
      operations:
      - name: read
        weight: 9
      - name: update
        weight: 1
      load:
        rate: 800
        arrivals: Poisson
    - name: batch
      operations:
      - name: update
        weight: 1
      load:
        concurrency: 1
      iterations: 100000
      startOffset: 2m
      duration: 8m
      runners: [0]`},
	{name: "streams-steps-within-run", base: "minimal.yaml", patch: streamsOnReplicas + `
    streams:
    - name: steps
      operations:
      - name: read
        weight: 1
      load:
        steps:
        - rate: 10
          duration: 4m
        - rate: 20
          duration: 5m
      startOffset: 1m
      runners: [1, 2]`},
	// The example of docs/workloads.md, kept valid.
	{name: "streams-docs-example", base: "minimal.yaml", patch: `
spec:
  workload:
    type: Tweet
    load: null
    duration: 10m
    operations:
    - type: Insert
      weight: 1
    - type: Read
      weight: 1
    - type: FullScan
      weight: 1
    streams:
    - name: online
      operations:
      - name: insert
        weight: 9
      - name: read
        weight: 1
      load:
        rate: 800
    - name: heavy-query
      operations:
      - name: full-scan
        weight: 1
      load:
        concurrency: 1
      iterations: 20
      startOffset: 5m
      runners: [0]`},
	{name: "streams-tpcc-default-mix", base: "minimal.yaml", patch: `
spec:
  workload:
    type: TPCC
    operations: null
    load: null
    duration: 5m
    streams:
    - name: online
      operations:
      - name: new-order
        weight: 1
      load:
        rate: 10`},
}

// streamsBadRuns are the stream refusals, one rule each.
var streamsBadRuns = []badRun{
	{name: "streams-and-load", patch: `
spec:
  workload:
    streams:
    - name: a
      operations:
      - name: read
        weight: 1
      load:
        rate: 1`,
		want: []cause{{"spec.workload.load", "Invalid value: \"object\": load: set load (one stream of every operation) or streams (each with its own load), exactly one of them"}},
	},
	{name: "streams-unknown-operation", patch: streamsOps + `
    streams:
    - name: a
      operations:
      - name: insert
        weight: 1
      load:
        rate: 1`,
		want: []cause{{"spec.workload.streams", "Invalid value: \"object\": streams.operations: each name must be one of the workload's operations (its name, or its type in kebab case such as read-keys)"}},
	},
	// An operation named "" in a stream: no operation resolves to that
	// name (an unnamed one is named after its type), for the API server's
	// rule and spanbench run alike.
	{name: "streams-operation-named-empty", patch: streamsOps + `
    streams:
    - name: a
      operations:
      - name: read
        weight: 1
      - name: ""
        weight: 1
      load:
        rate: 1`,
		goField: "spec.workload.streams[0].operations[1].name",
		want: []cause{
			{"spec.workload.streams", "Invalid value: \"object\": streams.operations: each name must be one of the workload's operations (its name, or its type in kebab case such as read-keys)"},
			{"spec.workload.streams[0].operations[1].name", "Invalid value: \"\": spec.workload.streams[0].operations[1].name in body should be at least 1 chars long"},
		},
	},
	{name: "streams-duplicate-names", patch: streamsOps + `
    streams:
    - name: a
      operations:
      - name: read
        weight: 1
      load:
        rate: 1
    - name: a
      operations:
      - name: update
        weight: 1
      load:
        rate: 1`,
		want: []cause{{"spec.workload.streams", "Invalid value: \"array\": streams: names must be unique"}},
	},
	{name: "streams-duplicate-operation", patch: streamsOps + `
    streams:
    - name: a
      operations:
      - name: read
        weight: 1
      - name: read
        weight: 2
      load:
        rate: 1`,
		want: []cause{{"spec.workload.streams[0].operations", "Invalid value: \"array\": streams.operations: each operation appears at most once in a stream"}},
	},
	{name: "streams-name-not-dns-label", patch: streamsOps + `
    streams:
    - name: online-
      operations:
      - name: read
        weight: 1
      load:
        rate: 1`,
		want: []cause{{"spec.workload.streams[0].name", "Invalid value: \"online-\": spec.workload.streams[0].name in body should match '^[a-z]([-a-z0-9]*[a-z0-9])?$'"}},
	},
	{name: "streams-name-too-long", patch: streamsOps + `
    streams:
    - name: a1234567890123456789012345678901234567890
      operations:
      - name: read
        weight: 1
      load:
        rate: 1`,
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.workload.streams[0].name", "Too long: may not be more than 40 bytes"},
		},
	},
	{name: "streams-iterations-open-loop", patch: streamsOps + `
    streams:
    - name: a
      operations:
      - name: read
        weight: 1
      load:
        rate: 1
      iterations: 10`,
		want: []cause{{"spec.workload.streams[0].iterations", "Invalid value: \"object\": iterations: a batch stream runs a fixed number of iterations with load.concurrency workers; set load.concurrency"}},
	},
	{name: "streams-duration-and-steps", patch: streamsOps + `
    streams:
    - name: a
      operations:
      - name: read
        weight: 1
      load:
        steps:
        - rate: 1
          duration: 1m
      duration: 2m`,
		want: []cause{{"spec.workload.streams[0].duration", "Invalid value: \"object\": duration: set the stream's duration, or load.steps (whose durations add up to the stream's), not both"}},
	},
	{name: "streams-past-run-end", patch: streamsOps + `
    streams:
    - name: a
      operations:
      - name: read
        weight: 1
      load:
        rate: 1
      startOffset: 5m
      duration: 6m`,
		want: []cause{{"spec.workload.streams", "Invalid value: \"object\": streams: each stream's startOffset plus its duration (or its load.steps' sum) must not pass the run's duration"}},
	},
	{name: "streams-starts-after-run", patch: streamsOps + `
    streams:
    - name: a
      operations:
      - name: read
        weight: 1
      load:
        concurrency: 1
      startOffset: 10m`,
		want: []cause{{"spec.workload.streams", "Invalid value: \"object\": streams: each stream's startOffset plus its duration (or its load.steps' sum) must not pass the run's duration"}},
	},
	{name: "streams-steps-past-run-end", patch: streamsOps + `
    streams:
    - name: a
      operations:
      - name: read
        weight: 1
      load:
        steps:
        - rate: 1
          duration: 10m
      startOffset: 1s`,
		want: []cause{{"spec.workload.streams", "Invalid value: \"object\": streams: each stream's startOffset plus its duration (or its load.steps' sum) must not pass the run's duration"}},
	},
	{name: "streams-runner-beyond-replicas", patch: streamsOps + `
    streams:
    - name: a
      operations:
      - name: read
        weight: 1
      load:
        rate: 1
      runners: [1]`,
		want: []cause{{"spec.workload.streams", "Invalid value: \"object\": workload.streams.runners: runner indexes must be below runners.replicas (default 1)"}},
	},
	{name: "streams-runner-duplicate", patch: streamsOnReplicas + `
    streams:
    - name: a
      operations:
      - name: read
        weight: 1
      load:
        rate: 1
      runners: [1, 1]`,
		want: []cause{{"spec.workload.streams[0].runners[1]", "Duplicate value: 1"}},
	},
	{name: "streams-stream-load-two-kinds", patch: streamsOps + `
    streams:
    - name: a
      operations:
      - name: read
        weight: 1
      load:
        rate: 1
        concurrency: 2`,
		want: []cause{{"spec.workload.streams[0].load", "Invalid value: \"object\": load: set exactly one of rate, steps, ramp, search and concurrency"}},
	},
	{name: "streams-no-duration", patch: streamsOps + `
    duration: null
    streams:
    - name: a
      operations:
      - name: read
        weight: 1
      load:
        rate: 1`,
		want: []cause{{"spec.workload.duration", "Invalid value: \"object\": duration: required unless load.steps gives the run's duration"}},
	},
}

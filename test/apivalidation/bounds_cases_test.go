package apivalidation

import "strings"

// hostileRuns are the classes of issue #10 that a tenant can send: texts
// that stall a parser, values that overflow, sizes that amplify, names that
// sneak past an allowlist, and incoherent durations. Each is refused by the
// API server and by the CLI's validation alike (TestAdmissionRefusesBadRuns).
var hostileRuns = []badRun{
	{
		// resource.ParseQuantity spends minutes and gigabytes on it.
		name: "quantity-with-huge-negative-exponent",
		want: []cause{
			{"spec.runners.resources.requests.cpu", "Invalid value: \"1e-999999999\": spec.runners.resources.requests.cpu in body should match '^([0-9]{1,6}([.][0-9]{1,3})?|[0-9]{1,9}m)$'"},
		},
		patch: `
spec:
  runners:
    resources:
      requests:
        cpu: "1e-999999999"`,
	},
	{
		name: "quantity-with-exponent",
		want: []cause{
			{"spec.runners.resources.limits.memory", "Invalid value: \"1e3\": spec.runners.resources.limits.memory in body should match '^([0-9]{1,15}|[0-9]{1,6}([.][0-9]{1,3})?(k|M|G|T|Ki|Mi|Gi|Ti))$'"},
		},
		patch: `
spec:
  runners:
    resources:
      limits:
        memory: "1e3"`,
	},
	{
		name: "quantity-with-sign",
		want: []cause{
			{"spec.runners.resources.limits.memory", "Invalid value: \"+1Gi\": spec.runners.resources.limits.memory in body should match '^([0-9]{1,15}|[0-9]{1,6}([.][0-9]{1,3})?(k|M|G|T|Ki|Mi|Gi|Ti))$'"},
		},
		patch: `
spec:
  runners:
    resources:
      limits:
        memory: +1Gi`,
	},
	{
		name: "quantity-beyond-int64",
		want: []cause{
			{"spec.runners.resources.limits.memory", "Invalid value: \"9999999Ei\": spec.runners.resources.limits.memory in body should match '^([0-9]{1,15}|[0-9]{1,6}([.][0-9]{1,3})?(k|M|G|T|Ki|Mi|Gi|Ti))$'"},
		},
		patch: `
spec:
  runners:
    resources:
      limits:
        memory: 9999999Ei`,
	},
	{
		name: "quantity-negative-integer",
		want: []cause{
			{"spec.runners.resources.requests.cpu", "Invalid value: \"\": cpu: an integer number of cores must be between 0 and 1000000"},
		},
		patch: `
spec:
  runners:
    resources:
      requests:
        cpu: -1`,
	},
	{
		// An integer an IntOrString cannot hold: the server once stored
		// it, and a typed decode of the list of runs then failed.
		name: "quantity-integer-beyond-int32",
		want: []cause{
			{"spec.runners.resources.limits.memory", "Invalid value: \"\": memory: an integer number of bytes must be between 0 and 2147483647 (2Gi - 1); write larger amounts with a suffix, such as 4Gi"},
		},
		patch: `
spec:
  runners:
    resources:
      limits:
        memory: 2147483648`,
	},
	{
		name:        "quantity-of-another-resource",
		goField:     decodeError,
		wantMessage: `BenchmarkRun in version "v1alpha1" cannot be handled as a BenchmarkRun: strict decoding error: unknown field "spec.runners.resources.limits.nvidia.com/gpu"`,
		patch: `
spec:
  runners:
    resources:
      limits:
        nvidia.com/gpu: 1`,
	},
	{
		name: "duration-292-years",
		want: []cause{
			{"spec.workload.duration", "Invalid value: \"string\": duration: must be a positive duration of at most 168h, such as 10m or 1h30m"},
		},
		patch: `
spec:
  workload:
    duration: 2562047h`,
	},
	{
		name: "interval-292-years",
		want: []cause{
			{"spec.workload.interval", "Invalid value: \"string\": interval: must be a duration from 1s to 1h, such as 10s"},
		},
		patch: `
spec:
  workload:
    interval: 2562047h`,
	},
	{
		name: "interval-longer-than-run",
		want: []cause{
			{"spec.workload.interval", "Invalid value: \"object\": interval: the run's duration must hold at least one interval (default 10s): shorten the interval or lengthen the run"},
		},
		patch: `
spec:
  workload:
    interval: 2m`,
	},
	{
		name: "ramp-longer-than-run",
		want: []cause{
			{"spec.workload.load.ramp.duration", "Invalid value: \"object\": load.ramp.duration: must not be longer than the run's duration"},
		},
		patch: `
spec:
  workload:
    load:
      rate: null
      ramp: {from: 1, to: 10, duration: 2m}`,
	},
	{
		// Two 2562047h steps wrap int64 when added; the sum must neither
		// wrap nor pass.
		name: "steps-summing-past-int64",
		want: []cause{
			{"spec.workload.load.steps[0].duration", "Invalid value: \"string\": steps.duration: must be a positive duration of at most 168h, such as 5m"},
			{"spec.workload.load.steps[1].duration", "Invalid value: \"string\": steps.duration: must be a positive duration of at most 168h, such as 5m"},
			{"spec.workload.load.steps[2].duration", "Invalid value: \"string\": steps.duration: must be a positive duration of at most 168h, such as 5m"},
		},
		patch: `
spec:
  workload:
    duration: null
    load:
      rate: null
      steps:
      - {rate: 1, duration: 2562047h}
      - {rate: 1, duration: 2562047h}
      - {rate: 1, duration: 2562047h}`,
	},
	{
		name: "steps-summing-past-a-week",
		want: []cause{
			{"spec.workload.load.steps", "Invalid value: \"object\": load.steps: the steps' durations must add up to at most 168h"},
		},
		patch: `
spec:
  workload:
    duration: null
    load:
      rate: null
      steps:
      - {rate: 1, duration: 100h}
      - {rate: 1, duration: 100h}`,
	},
	{
		name: "steps-summing-past-int64-with-warm-up",
		want: []cause{
			{"spec.workload.load.steps[0].duration", "Invalid value: \"string\": steps.duration: must be a positive duration of at most 168h, such as 5m"},
			{"spec.workload.load.steps[1].duration", "Invalid value: \"string\": steps.duration: must be a positive duration of at most 168h, such as 5m"},
		},
		patch: `
spec:
  workload:
    duration: null
    load:
      rate: null
      steps:
      - {rate: 1, duration: 2562047h}
      - {rate: 1, duration: 2562047h}
    warmUp: {mode: Fixed, duration: 1m}`,
	},
	{
		name: "warm-up-over-a-week",
		want: []cause{
			{"spec.workload.warmUp.duration", "Invalid value: \"string\": warmUp.duration: must be a positive duration of at most 168h, such as 2m"},
		},
		patch: `
spec:
  workload:
    warmUp: {mode: Fixed, duration: 200h}`,
	},
	{
		name: "staleness-over-a-week",
		want: []cause{
			{"spec.workload.operations[0].staleness.exact", "Invalid value: \"string\": staleness.exact: must be a positive duration of at most 168h, such as 15s"},
		},
		patch: `
spec:
  workload:
    operations:
    - type: Read
      weight: 1
      staleness: {exact: 169h}`,
	},
	{
		name: "commit-delay-negative",
		want: []cause{
			{"spec.workload.operations[0].commit.maxCommitDelay", "Invalid value: \"string\": commit.maxCommitDelay: must be a duration from 0s to 500ms, such as 100ms"},
		},
		patch: `
spec:
  workload:
    operations:
    - type: Insert
      weight: 1
      commit: {maxCommitDelay: -1ms}`,
	},
	{
		// Go defaults max to half the run, 0 here: the server once admitted
		// what the CLI refused.
		name: "auto-warm-up-on-a-1ns-run",
		want: []cause{
			{"spec.workload.interval", "Invalid value: \"object\": interval: the run's duration must hold at least one interval (default 10s): shorten the interval or lengthen the run"},
			{"spec.workload.warmUp", "Invalid value: \"object\": warmUp: an Auto warm-up needs room for its window: window x interval must not exceed max (default: half the run's duration)"},
		},
		patch: `
spec:
  workload:
    duration: 1ns
    warmUp: {mode: Auto}`,
	},
	{
		name: "auto-warm-up-window-longer-than-max",
		want: []cause{
			{"spec.workload.warmUp", "Invalid value: \"object\": warmUp: an Auto warm-up needs room for its window: window x interval must not exceed max (default: half the run's duration)"},
		},
		patch: `
spec:
  workload:
    duration: 10m
    interval: 1m
    warmUp: {mode: Auto, window: 5, max: 4m}`,
	},
	{
		name: "auto-warm-up-on-short-steps",
		want: []cause{
			{"spec.workload.warmUp", "Invalid value: \"object\": warmUp: an Auto warm-up needs room for its window: window x interval must not exceed max (default: half the run's duration, the sum of load.steps)"},
		},
		patch: `
spec:
  workload:
    duration: null
    load:
      rate: null
      steps:
      - {rate: 1, duration: 20s}
      - {rate: 1, duration: 20s}
    warmUp: {mode: Auto}`,
	},
	{
		name: "reads-on-an-empty-dataset",
		want: []cause{
			{"spec.workload.dataset.rows", "Invalid value: \"object\": dataset.rows: operations on existing keys need rows to find: at least 1 for Read, Update and ReadModifyWrite, and at least the operation's rows for Scan and ReadKeys"},
		},
		patch: `
spec:
  workload:
    dataset: {rows: 0}`,
	},
	{
		name: "scan-longer-than-the-dataset",
		want: []cause{
			{"spec.workload.dataset.rows", "Invalid value: \"object\": dataset.rows: operations on existing keys need rows to find: at least 1 for Read, Update and ReadModifyWrite, and at least the operation's rows for Scan and ReadKeys"},
		},
		patch: `
spec:
  workload:
    dataset: {rows: 5}
    operations:
    - type: Scan
      weight: 1
      rows: 10`,
	},
	{
		name: "scan-longer-than-the-default-dataset",
		want: []cause{
			{"spec.workload.dataset.rows", "Invalid value: \"object\": dataset.rows: operations on existing keys need rows to find: at least 1 for Read, Update and ReadModifyWrite, and at least the operation's rows for Scan and ReadKeys"},
		},
		patch: `
spec:
  workload:
    operations:
    - type: ReadKeys
      weight: 1
      rows: 5000`,
	},
	{
		name: "instance-config-full-name",
		want: []cause{
			{"spec.target.instance.config", "Invalid value: \"projects/other/instanceConfigs/regional-us-central1\": spec.target.instance.config in body should match '^([a-z]([-a-z0-9]*[a-z0-9])?)?$'"},
		},
		patch: `
spec:
  target:
    instance:
      config: projects/other/instanceConfigs/regional-us-central1`,
	},
	{
		name: "image-with-spaces",
		want: []cause{
			{"spec.runners.image", "Invalid value: \"evil image; rm -rf /\": spec.runners.image in body should match '^(([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?([.][A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*(:[0-9]{1,5})?/)?[a-z0-9]+(([.]|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([.]|_|__|-+)[a-z0-9]+)*)*(:[A-Za-z0-9_][-A-Za-z0-9_.]{0,127})?(@sha256:[a-f0-9]{64})?)?$'"},
		},
		patch: `
spec:
  runners:
    image: "evil image; rm -rf /"`,
	},
	{
		name: "image-upper-case-repository",
		want: []cause{
			{"spec.runners.image", "Invalid value: \"registry.example/Spanbench:dev\": spec.runners.image in body should match '^(([A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?([.][A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*(:[0-9]{1,5})?/)?[a-z0-9]+(([.]|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([.]|_|__|-+)[a-z0-9]+)*)*(:[A-Za-z0-9_][-A-Za-z0-9_.]{0,127})?(@sha256:[a-f0-9]{64})?)?$'"},
		},
		patch: `
spec:
  runners:
    image: registry.example/Spanbench:dev`,
	},
	{
		name: "service-account-with-slash",
		want: []cause{
			{"spec.runners.serviceAccountName", "Invalid value: \"kube-system/default\": spec.runners.serviceAccountName in body should match '^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$'"},
		},
		patch: `
spec:
  runners:
    serviceAccountName: kube-system/default`,
	},
	{
		name: "region-with-spaces",
		want: []cause{
			{"spec.runners.region", "Invalid value: \"asia northeast1\": spec.runners.region in body should match '^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$'"},
		},
		patch: `
spec:
  runners:
    region: "asia northeast1"`,
	},
	{
		name: "zone-too-long",
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.runners.zone", "Too long: may not be more than 63 bytes"},
		},
		patch: `
spec:
  runners:
    zone: ` + strings.Repeat("z", 64),
	},
	{
		name: "secret-name-upper-case",
		want: []cause{
			{"spec.target.credentials.secretName", "Invalid value: \"Spanner-Key\": spec.target.credentials.secretName in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'"},
		},
		patch: `
spec:
  target:
    credentials:
      secretName: Spanner-Key`,
	},
	{
		name: "secret-key-dot-dot",
		want: []cause{
			{"spec.target.credentials.key", "Invalid value: \"../../etc/passwd\": spec.target.credentials.key in body should match '^(([.][-_A-Za-z0-9]|[-_A-Za-z0-9])[-._A-Za-z0-9]*)?$'"},
		},
		patch: `
spec:
  target:
    credentials:
      secretName: spanner-key
      key: ../../etc/passwd`,
	},
	{
		name: "directed-read-location-with-slash",
		want: []cause{
			{"spec.workload.operations[0].directedRead.include[0].location", "Invalid value: \"us-east1/../x\": spec.workload.operations[0].directedRead.include[0].location in body should match '^([a-z][-a-z0-9]*[a-z0-9])?$'"},
		},
		patch: `
spec:
  workload:
    operations:
    - type: Read
      weight: 1
      directedRead:
        include:
        - location: us-east1/../x`,
	},
	{
		name: "node-selector-value-of-1mib",
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.runners.nodeSelector.pool", "Too long: may not be more than 63 bytes"},
		},
		patch: `
spec:
  runners:
    nodeSelector:
      pool: ` + strings.Repeat("a", 1<<20),
	},
	{
		name: "node-selector-key-syntax",
		want: []cause{
			{"spec.runners.nodeSelector", "Invalid value: \"object\": nodeSelector: keys must be label keys: an optional DNS-subdomain prefix (at most 253 characters) and '/', then at most 63 letters, digits, '-', '_' and '.'"},
		},
		patch: `
spec:
  runners:
    nodeSelector:
      "bad key!": bench`,
	},
	{
		name: "node-selector-key-prefix-too-long",
		want: []cause{
			{"spec.runners.nodeSelector", "Invalid value: \"object\": nodeSelector: keys must be label keys: an optional DNS-subdomain prefix (at most 253 characters) and '/', then at most 63 letters, digits, '-', '_' and '.'"},
		},
		patch: `
spec:
  runners:
    nodeSelector:
      ` + strings.Repeat("a", 254) + `/pool: bench`,
	},
	{
		name: "toleration-value-of-1mib",
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.runners.tolerations[0].value", "Too long: may not be more than 63 bytes"},
		},
		patch: `
spec:
  runners:
    tolerations:
    - key: dedicated
      operator: Equal
      value: ` + strings.Repeat("v", 1<<20),
	},
	{
		name: "toleration-unknown-operator",
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.runners.tolerations[0].operator", "Unsupported value: \"Matches\": supported values: \"Exists\", \"Equal\", \"\""},
		},
		patch: `
spec:
  runners:
    tolerations:
    - key: dedicated
      operator: Matches`,
	},
	{
		name: "toleration-everything-with-equal",
		want: []cause{
			{"spec.runners.tolerations[0]", "Invalid value: \"object\": tolerations: a toleration without a key must use operator Exists"},
		},
		patch: `
spec:
  runners:
    tolerations:
    - operator: Equal
      value: x`,
	},
	{
		name: "toleration-seconds-without-no-execute",
		want: []cause{
			{"spec.runners.tolerations[0]", "Invalid value: \"object\": tolerations: tolerationSeconds applies only to effect NoExecute"},
		},
		patch: `
spec:
  runners:
    tolerations:
    - key: dedicated
      operator: Exists
      effect: NoSchedule
      tolerationSeconds: 10`,
	},
}

// boundedGoodRuns are the edges of the same classes, admitted by both.
var boundedGoodRuns = []goodRun{
	{name: "durations-as-go-reads-them", base: "minimal.yaml", patch: `
spec:
  workload:
    duration: +1m
    interval: 1.s
    warmUp: {mode: Fixed, duration: .5m}
    operations:
    - type: Read
      weight: 1
      staleness: {max: 1500μs}
  deadlines:
    prepare: +15m`},
	{name: "largest-durations", base: "minimal.yaml", patch: `
spec:
  workload:
    duration: 168h
    interval: 1h
    load:
      rate: null
      ramp: {from: 1, to: 2, duration: 168h}
    warmUp: {mode: Auto, max: 167h}
    operations:
    - type: Read
      weight: 1
      staleness: {exact: 168h}`},
	{name: "steps-adding-up-to-a-week", base: "minimal.yaml", patch: `
spec:
  workload:
    duration: null
    load:
      rate: null
      steps:
      - {rate: 1, duration: 84h}
      - {rate: 1, duration: 84h}
    interval: 1h`},
	{name: "interval-as-long-as-the-run", base: "minimal.yaml", patch: `
spec:
  workload:
    interval: 1m`},
	{name: "auto-warm-up-just-fitting", base: "minimal.yaml", patch: `
spec:
  workload:
    duration: 60s
    interval: 10s
    warmUp: {mode: Auto}`},
	{name: "inserts-into-an-empty-dataset", base: "minimal.yaml", patch: `
spec:
  workload:
    dataset: {rows: 0}
    operations:
    - type: Insert
      weight: 1`},
	{name: "scan-as-long-as-the-dataset", base: "minimal.yaml", patch: `
spec:
  workload:
    dataset: {rows: 10}
    operations:
    - type: Scan
      weight: 1`},
	{name: "quantities-of-every-form", base: "minimal.yaml", patch: `
spec:
  runners:
    resources:
      requests: {cpu: 250m, memory: 1073741824, ephemeral-storage: 1.5Gi}
      limits: {cpu: 2, memory: 999999Ti, ephemeral-storage: 10G}`},
	{name: "placement-at-its-bounds", base: "minimal.yaml", patch: `
spec:
  runners:
    image: registry.example:5000/team/spanbench_runner:v1.2-rc.1@sha256:` + strings.Repeat("a", 64) + `
    serviceAccountName: spanner.runner-1
    region: us-east-1
    zone: us-east-1a
    nodeSelector:
      cloud.google.com/gke-nodepool: bench_pool.1
      ` + strings.Repeat("a", 253) + `/` + strings.Repeat("b", 63) + `: ""
    tolerations:
    - operator: Exists
    - key: example.com/dedicated
      operator: Equal
      value: bench
      effect: NoExecute
      tolerationSeconds: 604800`},
	{name: "config-and-secret-syntax", base: "minimal.yaml", patch: `
spec:
  target:
    instance:
      mode: Ephemeral
      config: custom-nam-eur-asia1
      nodes: 1
    credentials:
      secretName: spanner.key-1
      key: .key_file-1.json
  workload:
    operations:
    - type: Read
      weight: 1
      directedRead:
        exclude:
        - location: us-east1`},
}

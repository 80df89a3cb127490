package apivalidation

import (
	"strings"
	"testing"

	climanifest "github.com/spanbench/spanbench/cmd/spanbench/manifest"
)

// leftoverRuns are runs the API server once admitted and that failed, or
// measured nothing, only later: a run too short for one measurement
// interval or with none after its warm-up, requests above limits, more
// split points than rows, an emulator that is not host:port. Each is
// refused at admission with its field, and by `spanbench run` (see
// TestSpanbenchRunRefusesTheLeftovers) at the same field.
var leftoverRuns = []badRun{
	{
		name: "run-shorter-than-the-default-interval",
		patch: `
spec:
  workload:
    duration: 5s`,
		want: []cause{
			{"spec.workload.interval", "Invalid value: \"object\": interval: the run's duration must hold at least one interval (default 10s): shorten the interval or lengthen the run"},
		},
	},
	{
		name: "run-shorter-than-its-interval",
		patch: `
spec:
  workload:
    duration: 10s
    interval: 11s`,
		want: []cause{
			{"spec.workload.interval", "Invalid value: \"object\": interval: the run's duration must hold at least one interval (default 10s): shorten the interval or lengthen the run"},
		},
	},
	{
		name: "steps-shorter-than-the-default-interval",
		patch: `
spec:
  workload:
    duration: null
    load:
      rate: null
      steps:
      - {rate: 10, duration: 4s}
      - {rate: 20, duration: 4s}`,
		want: []cause{
			{"spec.workload.interval", "Invalid value: \"object\": interval: the run's duration (the sum of load.steps) must hold at least one interval (default 10s): shorten the interval or lengthen the run"},
		},
	},
	{
		name: "no-interval-after-a-fixed-warm-up",
		patch: `
spec:
  workload:
    duration: 1m
    warmUp: {mode: Fixed, duration: 55s}`,
		want: []cause{
			{"spec.workload.warmUp.duration", "Invalid value: \"object\": warmUp.duration: must leave at least one interval (default 10s) of the run's duration after the warm-up"},
		},
	},
	{
		name: "no-interval-after-a-fixed-warm-up-of-steps",
		patch: `
spec:
  workload:
    duration: null
    interval: 20s
    load:
      rate: null
      steps:
      - {rate: 10, duration: 30s}
      - {rate: 20, duration: 30s}
    warmUp: {mode: Fixed, duration: 41s}`,
		want: []cause{
			{"spec.workload.warmUp.duration", "Invalid value: \"object\": warmUp.duration: must leave at least one interval (default 10s) of the run's duration (the sum of load.steps) after the warm-up"},
		},
	},
	{
		name: "no-interval-after-an-auto-warm-up-max",
		patch: `
spec:
  workload:
    duration: 10m
    interval: 1m
    warmUp: {mode: Auto, max: 9m30s}`,
		want: []cause{
			{"spec.workload.warmUp.max", "Invalid value: \"object\": warmUp.max: must leave at least one interval (default 10s) of the run's duration after the warm-up"},
		},
	},
	{
		name: "cpu-request-above-limit",
		patch: `
spec:
  runners:
    resources:
      requests: {cpu: "2"}
      limits: {cpu: 1500m}`,
		want: []cause{
			{"spec.runners.resources.requests.cpu", "Invalid value: \"object\": requests.cpu: must not be more than limits.cpu"},
		},
	},
	{
		name: "memory-request-above-integer-limit",
		patch: `
spec:
  runners:
    resources:
      requests: {memory: 1.5Gi}
      limits: {memory: 1073741824}`,
		want: []cause{
			{"spec.runners.resources.requests.memory", "Invalid value: \"object\": requests.memory: must not be more than limits.memory"},
		},
	},
	{
		name: "storage-request-above-limit",
		patch: `
spec:
  runners:
    resources:
      requests: {ephemeral-storage: 2G}
      limits: {ephemeral-storage: 1Gi}`,
		want: []cause{
			{"spec.runners.resources.requests.ephemeral-storage", "Invalid value: \"object\": requests.ephemeral-storage: must not be more than limits.ephemeral-storage"},
		},
	},
	{
		name: "split-point-count-above-rows",
		patch: `
spec:
  target:
    splitPoints: {count: 101}
  workload:
    dataset: {rows: 100}`,
		want: []cause{
			{"spec.target.splitPoints", "Invalid value: \"object\": target.splitPoints: more split points than the dataset has rows (workload.dataset.rows, default 1000): a split would hold no row"},
		},
	},
	{
		name: "split-point-keys-above-rows",
		patch: `
spec:
  target:
    splitPoints: {keys: ["40000000", "80000000", "c0000000"]}
  workload:
    dataset: {rows: 2}`,
		want: []cause{
			{"spec.target.splitPoints", "Invalid value: \"object\": target.splitPoints: more split points than the dataset has rows (workload.dataset.rows, default 1000): a split would hold no row"},
		},
	},
	{
		name: "split-points-on-an-empty-dataset",
		patch: `
spec:
  target:
    splitPoints: {count: 1000}
  workload:
    operations:
    - {type: Insert, weight: 1}
    dataset: {rows: 0}`,
		want: []cause{
			{"spec.target.splitPoints", "Invalid value: \"object\": target.splitPoints: more split points than the dataset has rows (workload.dataset.rows, default 1000): a split would hold no row"},
		},
	},
	emulatorHostCase("emulator-host-with-a-scheme", "http://emulator:9010"),
	emulatorHostCase("emulator-host-without-a-port", "spanner-emulator"),
	emulatorHostCase("emulator-host-port-out-of-range", "emulator:65536"),
	emulatorHostCase("emulator-host-with-a-path", "emulator:9010/v1"),
	emulatorHostCase("emulator-host-ipv6-unbracketed", "::1:9010"),
}

func emulatorHostCase(name, host string) badRun {
	return badRun{
		name:  name,
		patch: "\nspec:\n  target:\n    emulatorHost: \"" + host + "\"",
		want: []cause{
			{"spec.target.emulatorHost", "Invalid value: \"" + host + "\": spec.target.emulatorHost in body should match '^(([A-Za-z0-9]([-A-Za-z0-9_]*[A-Za-z0-9])?([.][A-Za-z0-9]([-A-Za-z0-9_]*[A-Za-z0-9])?)*|[[][0-9A-Fa-f:.]+[]]):([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?$'"},
		},
	}
}

// leftoverGoodRuns are the edges of the same rules that must stay
// admitted: exactly one interval, requests equal to limits, as many split
// points as rows, emulators by name, IPv4 and IPv6 address.
var leftoverGoodRuns = []goodRun{
	{name: "run-of-exactly-one-interval", base: "minimal.yaml", patch: `
spec:
  workload:
    duration: 10s`},
	{name: "fixed-warm-up-leaving-one-interval", base: "minimal.yaml", patch: `
spec:
  workload:
    duration: 1m
    warmUp: {mode: Fixed, duration: 50s}`},
	{name: "auto-warm-up-max-leaving-one-interval", base: "minimal.yaml", patch: `
spec:
  workload:
    duration: 10m
    interval: 1m
    warmUp: {mode: Auto, max: 9m}`},
	{name: "requests-equal-to-limits", base: "minimal.yaml", patch: `
spec:
  runners:
    resources:
      requests: {cpu: 1000m, memory: 1Gi, ephemeral-storage: 1073741824}
      limits: {cpu: "1", memory: 1073741824, ephemeral-storage: 1Gi}`},
	{name: "as-many-split-points-as-rows", base: "minimal.yaml", patch: `
spec:
  target:
    splitPoints: {count: 100}
  workload:
    dataset: {rows: 100}`},
	{name: "emulator-by-name", base: "minimal.yaml", patch: `
spec:
  target:
    emulatorHost: spanner-emulator.spanbench-system.svc.cluster.local:9010`},
	{name: "emulator-by-ipv4", base: "minimal.yaml", patch: `
spec:
  target:
    emulatorHost: 127.0.0.1:9010`},
	{name: "emulator-by-ipv6", base: "minimal.yaml", patch: `
spec:
  target:
    emulatorHost: "[::1]:9010"`},
}

// TestSpanbenchRunRefusesTheLeftovers feeds each leftover to `spanbench
// run`'s own reader (manifest.Parse, what `spanbench run -f` calls): it
// must refuse it, naming the field the API server names.
func TestSpanbenchRunRefusesTheLeftovers(t *testing.T) {
	for _, tc := range leftoverRuns {
		t.Run(tc.name, func(t *testing.T) {
			obj := object(t, manifest(t, "minimal.yaml", tc.patch), tc.name, "minimal")
			js, err := obj.MarshalJSON()
			if err != nil {
				t.Fatalf("encoding the manifest: %v", err)
			}
			_, err = climanifest.Parse(js, "f")
			if err == nil {
				t.Fatalf("spanbench run accepted the manifest; want it refused at %s", tc.want[0].Field)
			}
			if !strings.Contains(err.Error(), tc.want[0].Field) {
				t.Errorf("spanbench run refused it without naming %s: %v", tc.want[0].Field, err)
			}
		})
	}
}

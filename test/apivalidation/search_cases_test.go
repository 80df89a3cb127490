package apivalidation

import (
	"testing"
)

// searchPatch turns minimal.yaml's constant rate into a capacity search;
// a case adds what it breaks.
const searchPatch = `
spec:
  workload:
    duration: 30m
    load:
      rate: null
      search:
        from: 10
        max: 80
        resolution: 10
        stepDuration: 20s
        warmUp: 10s
        slo: ["p99(read) <= 20ms"]
`

// campaignSearchPatch turns campaign.yaml's template into a capacity
// search (searchPatch's, over its point operation); a case adds what it
// breaks.
const campaignSearchPatch = `
spec:
  template:
    spec:
      workload:
        duration: 30m
        load:
          rate: null
          search:
            from: 10
            max: 80
            resolution: 10
            stepDuration: 20s
            warmUp: 10s
            slo: ["p99(point) <= 20ms"]
`

// searchBadRuns are bad capacity searches (#27): the schema refuses the
// numbers it can see, the BenchmarkRun webhook (customcheck.Search, as
// `spanbench run`) the SLO, from above max and the worst case.
var searchBadRuns = []badRun{
	{
		name:  "search-slo-unknown-operation",
		patch: searchPatch + `        slo: ["p99(scan) <= 20ms"]`,
		want: []cause{
			{"spec.workload.load.search.slo[0]", "Invalid value: \"p99(scan) <= 20ms\": operations[0] scan: not an operation of the workload (it has [read])"},
		},
	},
	{
		name:  "search-slo-does-not-parse",
		patch: searchPatch + `        slo: ["p99 < twenty"]`,
		want: []cause{
			{"spec.workload.load.search.slo[0]", "Invalid value: \"p99 < twenty\": condition \"p99 < twenty\": want <figure> <= <bound> or achieved >= <fraction>, such as p99 <= 20ms"},
		},
	},
	{
		name:  "search-from-above-max",
		patch: searchPatch + `        from: 100`,
		want: []cause{
			{"spec.workload.load.search.from", "Invalid value: \"100\": must be at most max (80)"},
		},
	},
	{
		name:  "search-resolution-zero",
		patch: searchPatch + `        resolution: 0`,
		want: []cause{
			{"spec.workload.load.search.resolution", "Invalid value: 0: spec.workload.load.search.resolution in body should be greater than or equal to 1"},
		},
	},
	{
		name:  "search-worst-case-exceeds-duration",
		patch: searchPatch + `        stepDuration: 5m`,
		want: []cause{
			{"spec.workload.load.search.stepDuration", "Invalid value: \"5m0s\": the search may take 18 steps of 5m10s, 1h33m0s, more than the limit of 30m0s: shorten the steps or narrow the search (a step is its warm-up and its measured time; the limit is the workload's duration)"},
		},
	},
	{
		// On Cloud Spanner (minimal.yaml names no emulator) a cpu
		// condition makes each step wait up to 3m after it for Cloud
		// Monitoring's minutes: 18 steps of 30s and 3m are 1h3m, a second
		// more than the duration (the steps alone are 9m).
		name: "search-cpu-waits-exceed-duration",
		patch: searchPatch + `        slo: ["p99(read) <= 20ms", "cpu <= 65%"]
    duration: 1h2m59s`,
		want: []cause{
			{"spec.workload.load.search.stepDuration", "Invalid value: \"20s\": the search may take 18 steps of 3m30s, 1h3m0s, more than the limit of 1h2m59s: shorten the steps or narrow the search (a step is its warm-up, its measured time and up to 3m0s waiting after it for Cloud Monitoring's CPU minutes, which a cpu condition on Cloud Spanner is judged by; the limit is the workload's duration)"},
		},
	},
	{
		name:  "search-step-not-whole-intervals",
		patch: searchPatch + `        stepDuration: 25s`,
		want: []cause{
			{"spec.workload.load.search.stepDuration", "Invalid value: \"25s\": must be a whole number of the workload's intervals (10s): a step is measured from its own intervals"},
		},
	},
	{
		name:  "search-and-rate",
		patch: searchPatch + "      rate: 100",
		want: []cause{
			{"spec.workload.load", "Invalid value: \"object\": load: set exactly one of rate, steps, ramp, search and concurrency"},
		},
	},
}

// TestAdmissionAcceptsSearchRun: a valid capacity search is admitted by
// the API server as by `spanbench run`: the manager runs it
// (docs/capacity.md). With a cpu condition on Cloud Spanner, one whose
// steps and CPU waits fill its duration exactly (the refused case above
// with a second more) is admitted too.
func TestAdmissionAcceptsSearchRun(t *testing.T) {
	for _, tc := range []struct{ name, patch string }{
		{"search-in-cluster", searchPatch},
		{"search-cpu-waits-fit", searchPatch + `        slo: ["p99(read) <= 20ms", "cpu <= 65%"]
    duration: 1h3m`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := object(t, manifest(t, "minimal.yaml", tc.patch), tc.name, "minimal")
			js, err := obj.MarshalJSON()
			if err != nil {
				t.Fatalf("encoding the manifest: %v", err)
			}
			errs, decodeErr := goValidate(js)
			if decodeErr != nil || len(errs) > 0 {
				t.Fatalf("the CLI refuses a valid search (decode: %v): %v", decodeErr, errs)
			}
			if err := createStrict(t, obj); err != nil {
				t.Fatalf("the API server refused a valid search run: %v", err)
			}
			deleteIfCreated(t, obj)
		})
	}
}

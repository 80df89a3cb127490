package apivalidation

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/plan"
	climanifest "github.com/spanbench/spanbench/cmd/spanbench/manifest"
	"github.com/spanbench/spanbench/spanner/customcheck"
)

// goodCampaigns are BenchmarkCampaigns the API server must accept and
// store as sent.
var goodCampaigns = []goodRun{
	{name: "campaign", base: "campaign.yaml"},
	{name: "one-cell-no-schedule", base: "campaign.yaml", patch: `
spec:
  schedule: null
  timeZone: null
  matrix: null
  baseline: null`},
	{name: "crossed-with-exclude", base: "campaign.yaml", patch: `
spec:
  order: Randomized
  seed: 7
  maxParallel: 2
  concurrencyPolicy: Replace
  startingDeadlineSeconds: 600
  runNow: "2026-11-24"
  baseline: {api: read, keys-api: read}
  matrix:
    zip: null
    exclude:
    - {api: sql, keys-api: read}`},
	{name: "error-rate-compared", base: "campaign.yaml", patch: `
spec:
  comparison:
    metrics:
    - {statistic: ErrorRate}
    - {statistic: P999, direction: LowerIsBetter}`},
	{name: "search-compares-capacities", base: "campaign.yaml", patch: campaignSearchPatch + `
  comparison:
    metrics:
    - {statistic: CapacityPerNode}
    - {statistic: Capacity}
    - {statistic: CapacityRowsPerNode}`},
}

func TestAdmissionAcceptsGoodCampaigns(t *testing.T) {
	for _, tc := range goodCampaigns {
		t.Run(tc.name, func(t *testing.T) {
			js := admitUnchanged(t, object(t, manifest(t, tc.base, tc.patch), tc.name, strings.TrimSuffix(tc.base, ".yaml")))
			errs, decodeErr := goValidateCampaign(js)
			if decodeErr != nil {
				t.Fatalf("the CLI cannot decode a campaign the API server accepts: %v", decodeErr)
			}
			if len(errs) > 0 {
				t.Errorf("BenchmarkCampaign.Validate refuses a campaign the API server accepts: %v", errs)
			}
		})
	}
}

// patchedAxes is a matrix whose second axis changes the run spec through
// patches only; mutate edits it into a bad case.
const patchedAxes = `
spec:
  baseline: {api: read, shape: as-is}
  matrix:
    zip: null
    axes:
    - name: api
      path: workload.operations.[name=point].api
      values:
      - {label: read, value: Read}
      - {label: sql, value: SQL}
    - name: shape
      values:
      - label: as-is
      - label: keys20-plus-scan
        strategicMergePatch:
          workload:
            operations:
            - {name: keys, rows: 20}
        jsonPatch:
        - {op: add, path: /workload/operations/-, value: {name: scan, type: Scan, api: Read, rows: 10, weight: 1}}
        - {op: test, path: /workload/load/rate, value: 100}
        - {op: copy, from: /workload/operations/0/weight, path: /workload/operations/1/weight}`

func init() {
	goodCampaigns = append(goodCampaigns, goodRun{name: "patches", base: "campaign.yaml", patch: patchedAxes})
}

// patched is patchedAxes with old replaced by new.
func patched(old, new string) string {
	if !strings.Contains(patchedAxes, old) {
		panic("patchedAxes has no " + old)
	}
	return strings.Replace(patchedAxes, old, new, 1)
}

// badCampaigns are refusals of the campaign's own rules, one each; the
// messages are what a user reads from kubectl apply.
var badCampaigns = []badRun{
	{
		name: "time-zone-without-schedule",
		patch: `
spec:
  schedule: null`,
		want: []cause{{"spec", "Invalid value: \"object\": timeZone: only meaningful with a schedule"}},
	},
	{
		name: "schedule-not-cron",
		patch: `
spec:
  schedule: "every night"`,
		want: []cause{{"spec.schedule", "Invalid value: \"string\": schedule: must be five cron fields (minute hour day-of-month month day-of-week) or a macro such as @daily"}},
	},
	{
		name: "schedule-with-tz",
		patch: `
spec:
  schedule: "CRON_TZ=UTC 0 2 * * *"`,
		want: []cause{
			{"spec.schedule", "Invalid value: \"string\": schedule: must be five cron fields (minute hour day-of-month month day-of-week) or a macro such as @daily"},
			{"spec.schedule", "Invalid value: \"string\": schedule: set the time zone with timeZone, not TZ= or CRON_TZ="},
		},
	},
	{
		name: "baseline-names-no-axis",
		patch: `
spec:
  baseline:
    region: tokyo`,
		want: []cause{{"spec", "Invalid value: \"object\": baseline: every key must name an axis of the matrix and every value one of that axis's labels"}},
	},
	{
		name: "baseline-names-no-label",
		patch: `
spec:
  baseline:
    api: grpc`,
		want: []cause{{"spec", "Invalid value: \"object\": baseline: every key must name an axis of the matrix and every value one of that axis's labels"}},
	},
	{
		name: "zip-names-no-axis",
		patch: `
spec:
  matrix:
    zip:
    - [api, region]`,
		want: []cause{{"spec.matrix", "Invalid value: \"object\": zip: every entry must name an axis of the matrix"}},
	},
	{
		name: "zip-unequal-lengths",
		patch: `
spec:
  matrix:
    axes:
    - name: api
      path: workload.operations.[name=point].api
      values:
      - {label: read, value: Read}
      - {label: sql, value: SQL}
    - name: rate
      path: workload.load.rate
      values:
      - {label: r100, value: 100}
      - {label: r200, value: 200}
      - {label: r400, value: 400}
    zip:
    - [api, rate]`,
		want: []cause{{"spec.matrix", "Invalid value: \"object\": zip: zipped axes must have the same number of values"}},
	},
	{
		name: "axis-in-two-zip-groups",
		patch: `
spec:
  matrix:
    zip:
    - [api, keys-api]
    - [keys-api, api]`,
		want: []cause{{"spec.matrix", "Invalid value: \"object\": zip: an axis may be in one zip group only"}},
	},
	{
		name: "exclude-names-no-label",
		patch: `
spec:
  matrix:
    exclude:
    - {api: grpc}`,
		want: []cause{{"spec.matrix", "Invalid value: \"object\": exclude: every key must name an axis and every value one of that axis's labels"}},
	},
	{
		name: "path-with-spec-prefix",
		patch: `
spec:
  matrix:
    zip: null
    axes:
    - name: api
      path: spec.workload.operations.[name=point].api
      values:
      - {label: read, value: Read}`,
		want: []cause{{"spec.matrix.axes[0].path", "Invalid value: \"string\": path: is relative to the run spec; drop the leading spec."}},
	},
	{
		name: "min-effect-not-a-percentage",
		patch: `
spec:
  comparison:
    minEffect: "0.05"`,
		want: []cause{{"spec.comparison.minEffect", "Invalid value: \"string\": minEffect: must be a percentage from 0% to 99.99%, such as 5%"}},
	},
	{
		name: "statistic-unknown",
		patch: `
spec:
  comparison:
    metrics:
    - {statistic: P95}`,
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.comparison.metrics[0].statistic", "Unsupported value: \"P95\": supported values: \"Throughput\", \"P50\", \"P90\", \"P99\", \"P999\", \"ErrorRate\", \"ServerCPUPerOp\", \"TpmC\", \"ServerHighPriorityCPU\", \"ServerLatencyP99\", \"ServerQueryP99\", \"CostPerMillionOps\", \"Capacity\", \"CapacityPerNode\", \"CapacityRowsPerNode\""},
		},
		goField: "spec.comparison.metrics[0].statistic",
	},
	{
		name: "confidence-zero",
		patch: `
spec:
  comparison:
    confidence: "0%"`,
		want: []cause{{"spec.comparison.confidence", "Invalid value: \"string\": confidence: must be a percentage above 0% and below 100%, such as 95%"}},
	},
	{
		name: "repetitions-too-many",
		patch: `
spec:
  repetitions: 31`,
		want: []cause{{"spec.repetitions", "Invalid value: 31: spec.repetitions in body should be less than or equal to 30"}},
	},
	{
		name: "bad-order",
		patch: `
spec:
  order: Alphabetical`,
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.order", "Unsupported value: \"Alphabetical\": supported values: \"Interleaved\", \"Randomized\", \"Sequential\""},
		},
		goField: "spec.order",
	},
	{
		name: "dotted.name",
		want: []cause{{"<nil>", "Invalid value: \"object\": metadata.name: a BenchmarkCampaign name must be at most 63 lower-case letters, digits and '-', start with a letter and end with a letter or digit, so that its runs can be named after it"}},
	},
	{
		name: "template-run-invalid",
		patch: `
spec:
  template:
    spec:
      workload:
        load:
          rate: -5`,
		want: []cause{{"spec.template.spec.workload.load.rate", "Invalid value: -5: spec.template.spec.workload.load.rate in body should be greater than or equal to 1"}},
	},
	{
		name:    "value-on-an-axis-without-path",
		patch:   patched("- label: as-is", "- {label: as-is, value: 3}"),
		want:    []cause{{"spec.matrix.axes[1].values[0].value", "Invalid value: \"3\": with a path every value sets it (value); without one no value has a value, only patches"}},
		goField: "spec.matrix.axes[1].values[0].value",
	},
	{
		name:    "path-value-missing",
		patch:   patched("- {label: sql, value: SQL}", "- {label: sql}"),
		want:    []cause{{"spec.matrix.axes[0].values[1].value", "Invalid value: \"\": with a path every value sets it (value); without one no value has a value, only patches"}},
		goField: "spec.matrix.axes[0].values[1].value",
	},
	{
		name:  "json-patch-copy-without-from",
		patch: patched("{op: copy, from: /workload/operations/0/weight,", "{op: copy,"),
		want:  []cause{{"spec.matrix.axes[1].values[1].jsonPatch[2]", "Invalid value: \"object\": from: required by move and copy, and only by them"}},
	},
	{
		name:    "json-patch-remove-with-value",
		patch:   patched("{op: test, path: /workload/load/rate, value: 100}", "{op: remove, path: /workload/load/rate, value: 100}"),
		want:    []cause{{"spec.matrix.axes[1].values[1].jsonPatch[1].value", "Invalid value: \"100\": required by add, replace and test, and only by them"}},
		goField: "spec.matrix.axes[1].values[1].jsonPatch[1].value",
	},
	{
		name:  "json-patch-path-with-spec",
		patch: patched("path: /workload/operations/-", "path: /spec/workload/operations/-"),
		want:  []cause{{"spec.matrix.axes[1].values[1].jsonPatch[0].path", "Invalid value: \"string\": path: a JSON pointer into the run spec, such as /workload/load/rate (no /spec prefix)"}},
	},
	{
		name:  "json-patch-unknown-op",
		patch: patched("{op: test,", "{op: merge,"),
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.matrix.axes[1].values[1].jsonPatch[1].op", "Unsupported value: \"merge\": supported values: \"add\", \"remove\", \"replace\", \"move\", \"copy\", \"test\""},
		},
		goField: "spec.matrix.axes[1].values[1].jsonPatch[1].op",
	},
	{
		name:  "merge-patch-not-an-object",
		patch: patched("strategicMergePatch:\n          workload:\n            operations:\n            - {name: keys, rows: 20}", "strategicMergePatch: [keys]"),
		want: []cause{
			{"<nil>", "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"},
			{"spec.matrix.axes[1].values[1].strategicMergePatch", "Invalid value: \"array\": spec.matrix.axes[1].values[1].strategicMergePatch in body must be of type object: \"array\""},
		},
		goField: "spec.matrix.axes[1].values[1].strategicMergePatch",
	},
	{
		// A capacity search campaign is held to each run's search rules,
		// the worst case within the workload's duration among them.
		name:  "search-template-worst-case-exceeds-duration",
		patch: campaignSearchPatch + `            stepDuration: 5m`,
		want: []cause{
			{"spec.template.spec.workload.load.search.stepDuration", "Invalid value: \"5m0s\": the search may take 18 steps of 5m10s, 1h33m0s, more than the limit of 30m0s: shorten the steps or narrow the search (a step is its warm-up and its measured time; the limit is the workload's duration)"},
		},
	},
}

func TestAdmissionRefusesBadCampaigns(t *testing.T) {
	for _, tc := range badCampaigns {
		t.Run(tc.name, func(t *testing.T) {
			obj := object(t, manifest(t, "campaign.yaml", tc.patch), tc.name, "campaign")
			js, err := obj.MarshalJSON()
			if err != nil {
				t.Fatalf("encoding the manifest: %v", err)
			}
			err = createStrict(t, obj)
			if err == nil {
				deleteIfCreated(t, obj)
				t.Fatalf("the API server accepted the campaign; want it refused with %v", tc.want)
			}
			if diff := cmp.Diff(tc.want, causesOf(err)); diff != "" {
				t.Errorf("refusal causes differ (-want +got):\n%s\nfull error: %v\ngot as Go:\n%s", diff, err, goLiteral(causesOf(err)))
			}
			wantField := tc.goField
			if wantField == "" {
				wantField = tc.want[0].Field
			}
			errs, decodeErr := goValidateCampaign(js)
			if decodeErr != nil {
				t.Fatalf("the CLI cannot decode the campaign: %v", decodeErr)
			}
			if !hasField(errs, wantField) {
				t.Errorf("BenchmarkCampaign.Validate disagrees with the API server: want an error at %s, got %v", wantField, errs)
			}
		})
	}
}

// goValidateCampaign validates a campaign as `spanbench campaign -f`
// does (manifest.ParseCampaign): strict decoding, the CRD's schema as
// written (whose errors stop it before the webhook's checks), then the
// Go checks.
func goValidateCampaign(js []byte) (errs field.ErrorList, decodeErr error) {
	var c v1alpha1.BenchmarkCampaign
	strictErrs, err := sigsjson.UnmarshalStrict(js, &c, sigsjson.DisallowUnknownFields, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return nil, err
	}
	if len(strictErrs) > 0 {
		return nil, errors.Join(strictErrs...)
	}
	if errs, err := climanifest.SchemaErrors(js, "BenchmarkCampaign"); err != nil || len(errs) > 0 {
		return errs, err
	}
	return customcheck.Campaign(&c), nil
}

// TestCampaignStatusRoundTripsAndPrints: a status the controller will
// write is stored whole, and kubectl get shows schedule, suspended, last
// run, next run, verdict and age.
func TestCampaignStatusRoundTripsAndPrints(t *testing.T) {
	var c v1alpha1.BenchmarkCampaign
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(manifest(t, "campaign.yaml", ""), &c); err != nil {
		t.Fatalf("decoding testdata/campaign.yaml: %v", err)
	}
	c.Name, c.Namespace = "printed", "default"
	if err := k8sClient.Create(bounded(t), &c); err != nil {
		t.Fatalf("creating the campaign: %v", err)
	}
	t.Cleanup(func() { deleteIfCreated(t, &c) })
	last := metav1.NewTime(time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC))
	next := metav1.NewTime(last.Add(24 * time.Hour))
	c.Status = v1alpha1.BenchmarkCampaignStatus{
		ObservedGeneration: 1,
		Conditions: []metav1.Condition{{Type: v1alpha1.CampaignRegressed, Status: metav1.ConditionTrue, Reason: "ComparisonRegressed",
			Message: "sql point P99 is 1.3x the baseline", LastTransitionTime: last}},
		Verdict: v1alpha1.VerdictRegressed, LastScheduleTime: &last, NextScheduleTime: &next,
		Active:   []string{"printed-1795485600-abc123-r1"},
		Progress: &v1alpha1.CampaignProgress{Iteration: "printed-1795485600", Run: 6, Runs: 6, Summary: "6/6"},
		Iterations: []v1alpha1.IterationStatus{{Name: "printed-1795485600", ScheduledTime: last,
			Outcome: v1alpha1.IterationSucceeded, Runs: 6, Succeeded: 6, Verdict: v1alpha1.VerdictRegressed}},
		Comparison: &v1alpha1.ComparisonStatus{Iteration: "printed-1795485600", Baseline: "read", Verdict: v1alpha1.VerdictRegressed,
			Rows: []v1alpha1.ComparisonRow{{Variant: "sql", Metric: "point p99 µs", Operation: "point", Statistic: v1alpha1.StatisticP99, Baseline: "410", Value: "533", Ratio: "1.300",
				Low: "1.210", High: "1.380", Confidence: "96.8%", N: "5+5", PValue: "0.0079", Verdict: v1alpha1.VerdictRegressed}}},
	}
	want := c.Status.DeepCopy()
	if err := k8sClient.Status().Update(bounded(t), &c); err != nil {
		t.Fatalf("writing a complete status was refused: %v", err)
	}
	got := &v1alpha1.BenchmarkCampaign{}
	if err := k8sClient.Get(bounded(t), keyOf(&c), got); err != nil {
		t.Fatalf("reading the campaign back: %v", err)
	}
	if diff := cmp.Diff(*want, got.Status); diff != "" {
		t.Errorf("the stored status differs from the one written (-written +stored):\n%s", diff)
	}
	table := getTableOf(t, "benchmarkcampaigns", c.Name)
	var names []string
	for _, col := range table.ColumnDefinitions {
		names = append(names, col.Name)
	}
	if diff := cmp.Diff([]string{"Name", "Schedule", "Suspended", "Last Run", "Next Run", "Iteration", "Run", "Verdict", "Age", "Ready"}, names); diff != "" {
		t.Fatalf("printer columns differ (-want +got):\n%s", diff)
	}
	cells := table.Rows[0].Cells
	if got, want := fmt.Sprint(cells[1], " ", cells[4], " ", cells[5], " ", cells[6], " ", cells[7]), "0 2 * * * 2026-11-25T02:00:00Z printed-1795485600 6/6 Regressed"; got != want {
		t.Errorf("schedule, next run, iteration, run, verdict cells = %q, want %q", got, want)
	}
}

// TestCampaignSamplesAreAcceptedAndExpand: every campaign sample is
// accepted by the API server and by Validate, and its matrix expands into
// cells that are valid runs.
func TestCampaignSamplesAreAcceptedAndExpand(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "campaign-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no campaign samples found: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			js, err := yaml.YAMLToJSON(data)
			if err != nil {
				t.Fatalf("not YAML: %v", err)
			}
			obj := object(t, js, "", "")
			err = createStrict(t, obj)
			t.Cleanup(func() { deleteIfCreated(t, obj) })
			if err != nil {
				t.Fatalf("the API server refused the sample: %v", err)
			}
			c, err := climanifest.ParseCampaign(data)
			if err != nil {
				t.Fatalf("the CLI refuses the sample: %v", err)
			}
			cells, err := plan.Cells(&c.Spec)
			if err != nil {
				t.Fatalf("the sample's matrix does not expand: %v", err)
			}
			if _, err := plan.Baseline(&c.Spec, cells); err != nil {
				t.Fatalf("the sample's baseline: %v", err)
			}
		})
	}
}

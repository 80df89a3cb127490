package apivalidation

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/campaign/plan"
	climanifest "github.com/spanbench/spanbench/cmd/spanbench/manifest"
)

// badCell is a campaign the schema accepts but whose matrix cannot be
// planned: the admission webhook must refuse it at the field plan.Admit
// blames, with the CLI's own message.
type badCell struct {
	name, patch string
	// field is the campaign field of the refusal.
	field string
	// says are what the message must name: axis, value, run field.
	says []string
}

var badCells = []badCell{
	{
		// The template loads its default 1,000 rows at 1 a second within
		// the default 1h load deadline; the cell of 5,000 rows cannot.
		name: "value-outgrows-the-load-cap",
		patch: `
spec:
  template:
    spec:
      workload:
        dataset: {maxRowsPerSecond: 1}
  baseline: null
  matrix:
    zip: null
    axes:
    - name: rows
      path: workload.dataset.rows
      values:
      - {label: r1000, value: 1000}
      - {label: r5000, value: 5000}`,
		field: "spec.matrix.axes[0].values[1]",
		says:  []string{`matrix axis "rows" value "r5000" (path workload.dataset.rows)`, `spec.workload.dataset.maxRowsPerSecond: Invalid value: 1`},
	},
	{
		name: "value-makes-an-invalid-run",
		patch: `
spec:
  matrix:
    axes:
    - name: api
      path: workload.operations.[name=point].api
      values:
      - {label: read, value: Read}
      - {label: sql, value: SQL}
    - name: keys-api
      path: workload.operations.[name=keys].api
      values:
      - {label: read, value: Read}
      - {label: sql, value: SQL}
    - name: point-type
      path: workload.operations.[name=point].type
      values:
      - {label: read, value: Read}
      - {label: update, value: Update}`,
		field: "spec.matrix.axes[2].values[1]",
		says: []string{`matrix axis "point-type" value "update" (path workload.operations.[name=point].type)`,
			`spec.workload.operations[0].api`, `only Read, Scan and ReadKeys choose an API`},
	},
	{
		name: "value-out-of-a-run-bound",
		patch: `
spec:
  baseline: null
  matrix:
    zip: null
    axes:
    - name: rate
      path: workload.load.rate
      values:
      - {label: r100, value: 100}
      - {label: neg, value: -5}`,
		field: "spec.matrix.axes[0].values[1]",
		says:  []string{`matrix axis "rate" value "neg" (path workload.load.rate)`, `spec.workload.load.rate: Invalid value: -5`},
	},
	{
		name: "value-of-the-wrong-type",
		patch: `
spec:
  baseline: null
  matrix:
    zip: null
    axes:
    - name: nodes
      path: target.instance.nodes
      values:
      - {label: many, value: many}`,
		field: "spec.matrix.axes[0].values[0]",
		says:  []string{`matrix axis "nodes" value "many" (path target.instance.nodes)`, `not a run spec`},
	},
	{
		name: "path-names-no-list-element",
		patch: `
spec:
  baseline: null
  matrix:
    zip: null
    axes:
    - name: api
      path: workload.operations.[name=pont].api
      values:
      - {label: sql, value: SQL}`,
		field: "spec.matrix.axes[0].values[0]",
		says:  []string{`matrix axis "api" value "sql"`, `no list element workload.operations.[name=pont] in the template`},
	},
	{
		name: "path-names-no-run-field",
		patch: `
spec:
  baseline: null
  matrix:
    zip: null
    axes:
    - name: cfg
      path: target.instance.confg
      values:
      - {label: asia1, value: asia1}`,
		field: "spec.matrix.axes[0].values[0]",
		says:  []string{`matrix axis "cfg" value "asia1" (path target.instance.confg)`, `unknown field "target.instance.confg"`},
	},
	{
		name:  "patch-makes-an-invalid-run",
		patch: patched("- {name: keys, rows: 20}", "- {name: keys, type: Update}"),
		field: "spec.matrix.axes[1].values[1]",
		says: []string{`matrix axis "shape" value "keys20-plus-scan" (strategicMergePatch, jsonPatch) makes an invalid run`,
			`spec.workload.operations[1].api`, `only Read, Scan and ReadKeys choose an API`},
	},
	{
		name:  "json-patch-that-does-not-apply",
		patch: patched("{op: test, path: /workload/load/rate, value: 100}", "{op: test, path: /workload/load/rate, value: 7}"),
		field: "spec.matrix.axes[1].values[1]",
		says:  []string{`matrix axis "shape" value "keys20-plus-scan": jsonPatch: `},
	},
	{
		name: "baseline-excluded",
		patch: `
spec:
  matrix:
    exclude:
    - {api: read}`,
		field: "spec.baseline",
		says:  []string{`baseline map[api:read] names no cell (is it excluded?)`},
	},
	{
		name: "exclude-drops-every-cell",
		patch: `
spec:
  matrix:
    exclude:
    - {api: read}
    - {api: sql}`,
		field: "spec.matrix.exclude",
		says:  []string{`exclude drops every cell of the matrix`},
	},
	{
		// A cell whose fields make the template's Insert of 10 rows more
		// than a commit holds is refused at its axis value (the API
		// server sees the template only; the plan checks each cell).
		name: "value-makes-an-insert-over-a-commit-size",
		patch: `
spec:
  template:
    spec:
      workload:
        dataset:
          batchRows: 9
        operations:
        - {name: point, type: Read, api: Read, weight: 1}
        - {name: batch, type: Insert, rows: 10, weight: 1}
  baseline: null
  matrix:
    zip: null
    axes:
    - name: field
      path: workload.dataset.fieldBytes
      values:
      - {label: small, value: 100}
      - {label: big, value: 1000000}`,
		field: "spec.matrix.axes[0].values[1]",
		says: []string{`matrix axis "field" value "big" (path workload.dataset.fieldBytes)`, `spec.workload.operations`,
			`operations[1].rows: an Insert of 10 rows is one commit`, `more than the 90000000 a Cloud Spanner commit (100 MB) leaves room for; use at most 9 rows`},
	},
	{
		// A campaign of capacity searches compares capacities: a P99
		// over a search run would pool its steps' different rates.
		name: "search-campaign-compares-a-percentile",
		patch: campaignSearchPatch + `
  comparison:
    metrics:
    - statistic: CapacityPerNode
    - statistic: P99`,
		field: "spec.comparison.metrics[1].statistic",
		says: []string{`spec.comparison.metrics[1].statistic: the runs of cell read are capacity searches, and P99 is not defined over a capacity search`,
			`use Capacity, CapacityPerNode, CapacityRowsPerNode`},
	},
	{
		// Nor does it compare per run figures of the measured window,
		// the cost per operation among them.
		name: "search-campaign-compares-cost-per-operation",
		patch: campaignSearchPatch + `
  comparison:
    metrics:
    - statistic: CostPerMillionOps`,
		field: "spec.comparison.metrics[0].statistic",
		says:  []string{`CostPerMillionOps is not defined over a capacity search`},
	},
	{
		// The default statistics (P50, P99, Throughput) are refused too:
		// the campaign names its capacities.
		name: "search-campaign-with-the-default-statistics",
		patch: campaignSearchPatch + `
  comparison:
    metrics: null`,
		field: "spec.comparison.metrics",
		says: []string{`the default statistics (P50, P99, Throughput) are not defined over a capacity search`,
			`name the statistics to compare among Capacity, CapacityPerNode, CapacityRowsPerNode`},
	},
	{
		// A cell that searches where the template does not makes the
		// campaign's runs searches all the same.
		name: "search-cell-compares-throughput",
		patch: `
spec:
  baseline: null
  comparison:
    metrics:
    - statistic: Throughput
  matrix:
    zip: null
    axes:
    - name: load
      values:
      - label: fixed
      - label: search
        jsonPatch:
        - {op: remove, path: /workload/load/rate}
        - {op: add, path: /workload/load/search, value: {from: 10, max: 80, resolution: 10, stepDuration: 20s, warmUp: 10s, slo: ["p99(point) <= 20ms"]}}
        - {op: replace, path: /workload/duration, value: 30m}`,
		field: "spec.comparison.metrics[0].statistic",
		says:  []string{`the runs of cell search are capacity searches, and Throughput is not defined over a capacity search`},
	},
	{
		// Each cell's search is held to the search rules: one whose
		// steps make its worst case longer than the workload's duration
		// is refused at its axis value.
		name: "search-cell-worst-case-exceeds-duration",
		patch: campaignSearchPatch + `
  baseline: null
  matrix:
    zip: null
    axes:
    - name: step
      path: workload.load.search.stepDuration
      values:
      - {label: short, value: 20s}
      - {label: long, value: 5m}`,
		field: "spec.matrix.axes[0].values[1]",
		says: []string{`matrix axis "step" value "long" (path workload.load.search.stepDuration)`, `spec.workload.load.search.stepDuration`,
			`more than the limit of 30m0s`},
	},
}

// cliRefusal is what the CLI says of a campaign manifest: its parse and
// validation, then plan.Admit; "" when it would run it.
func cliRefusal(t *testing.T, js []byte) string {
	t.Helper()
	c, err := climanifest.ParseCampaign(js)
	if err == nil {
		_, _, err = plan.Admit(&c.Spec)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// TestAdmissionRefusesInvalidCells: a campaign with a cell that would be
// an invalid run is refused at create, at the axis value (or matrix
// field) to blame, with the CLI's own message naming axis, value and run
// field.
func TestAdmissionRefusesInvalidCells(t *testing.T) {
	for _, tc := range badCells {
		t.Run(tc.name, func(t *testing.T) {
			obj := object(t, manifest(t, "campaign.yaml", tc.patch), tc.name, "campaign")
			js, err := obj.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			cli := cliRefusal(t, js)
			if cli == "" {
				t.Fatal("the CLI accepts the campaign; the case must be one it refuses")
			}
			err = createStrict(t, obj)
			if err == nil {
				deleteIfCreated(t, obj)
				t.Fatalf("the API server accepted the campaign; want it refused at %s with: %s", tc.field, cli)
			}
			checkCellRefusal(t, err, tc, cli)
		})
	}
}

// TestAdmissionRefusesInvalidCellsAtUpdate: changing a stored campaign's
// spec so that a cell is invalid is refused the same way; an update that
// leaves the spec alone is admitted.
func TestAdmissionRefusesInvalidCellsAtUpdate(t *testing.T) {
	good := object(t, manifest(t, "campaign.yaml", ""), "cells-updated", "campaign")
	if err := createStrict(t, good); err != nil {
		t.Fatalf("creating a good campaign: %v", err)
	}
	t.Cleanup(func() { deleteIfCreated(t, good) })
	for _, tc := range badCells {
		t.Run(tc.name, func(t *testing.T) {
			stored := &unstructured.Unstructured{}
			stored.SetGroupVersionKind(good.GroupVersionKind())
			if err := k8sClient.Get(bounded(t), keyOf(good), stored); err != nil {
				t.Fatal(err)
			}
			bad := object(t, manifest(t, "campaign.yaml", tc.patch), "cells-updated", "campaign")
			js, err := bad.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			stored.Object["spec"] = bad.Object["spec"]
			err = k8sClient.Update(bounded(t), stored, client.FieldValidation("Strict"))
			if err == nil {
				t.Fatalf("the API server accepted an update that makes a cell invalid; want it refused at %s", tc.field)
			}
			checkCellRefusal(t, err, tc, cliRefusal(t, js))
		})
	}
	t.Run("metadata only", func(t *testing.T) {
		stored := &unstructured.Unstructured{}
		stored.SetGroupVersionKind(good.GroupVersionKind())
		if err := k8sClient.Get(bounded(t), keyOf(good), stored); err != nil {
			t.Fatal(err)
		}
		stored.SetLabels(map[string]string{"team": "perf"})
		if err := k8sClient.Update(bounded(t), stored); err != nil {
			t.Errorf("relabelling a good campaign was refused: %v", err)
		}
	})
}

func checkCellRefusal(t *testing.T, err error, tc badCell, cli string) {
	t.Helper()
	msg := err.Error()
	if !strings.Contains(msg, `admission webhook "vbenchmarkcampaign.bench.spanbench.io" denied the request`) {
		t.Errorf("the refusal is not the campaign webhook's: %v", err)
	}
	causes := causesOf(err)
	if len(causes) != 1 || causes[0].Field != tc.field {
		t.Fatalf("refusal causes %v, want one at %s\nfull error: %v", causes, tc.field, err)
	}
	// The webhook says exactly what the CLI says, after the field's value.
	if !strings.HasPrefix(causes[0].Message, "Invalid value: ") || !strings.HasSuffix(causes[0].Message, ": "+cli) {
		t.Errorf("the webhook and the CLI word the refusal differently:\nwebhook: %s\n    CLI: %s", causes[0].Message, cli)
	}
	for _, s := range tc.says {
		if !strings.Contains(causes[0].Message, s) {
			t.Errorf("the refusal does not say %q:\n%s", s, causes[0].Message)
		}
	}
}

// campaignCase is one campaign manifest of the corpus.
type campaignCase struct {
	name string
	obj  *unstructured.Unstructured
}

// campaignCorpus is every campaign manifest these tests send: the good
// ones, the schema's refusals, the invalid cells and the samples.
func campaignCorpus(t *testing.T) []campaignCase {
	t.Helper()
	var out []campaignCase
	for _, tc := range goodCampaigns {
		out = append(out, campaignCase{"good/" + tc.name, object(t, manifest(t, tc.base, tc.patch), "agree-"+tc.name, "campaign")})
	}
	for _, tc := range badCampaigns {
		name := "agree-" + tc.name
		if strings.Contains(tc.name, ".") {
			name = tc.name // the case is the name itself
		}
		out = append(out, campaignCase{"schema/" + tc.name, object(t, manifest(t, "campaign.yaml", tc.patch), name, "campaign")})
	}
	for _, tc := range badCells {
		out = append(out, campaignCase{"cells/" + tc.name, object(t, manifest(t, "campaign.yaml", tc.patch), "agree-"+tc.name, "campaign")})
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "campaign-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no campaign samples: %v", err)
	}
	for _, f := range files {
		out = append(out, campaignCase{"sample/" + filepath.Base(f), object(t, sampleJSON(t, f), "", "")})
	}
	return out
}

// TestAdmissionAgreesWithTheCLIOnEveryCampaign: for every campaign of the
// corpus, the API server (schema, CEL and the webhook) admits it exactly
// when the CLI (ParseCampaign, then plan.Admit) would run it.
func TestAdmissionAgreesWithTheCLIOnEveryCampaign(t *testing.T) {
	for _, tc := range campaignCorpus(t) {
		t.Run(tc.name, func(t *testing.T) {
			js, err := tc.obj.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			cli := cliRefusal(t, js)
			obj := tc.obj.DeepCopy()
			serverErr := createStrict(t, obj)
			if serverErr == nil {
				deleteIfCreated(t, obj)
			}
			if (serverErr == nil) != (cli == "") {
				t.Errorf("the API server and the CLI disagree:\nserver: %s\n   CLI: %s", verdict(serverErr), verdict(cliErr(cli)))
			}
		})
	}
}

func verdict(err error) string {
	if err == nil {
		return "admits it"
	}
	return "refuses it: " + err.Error()
}

func cliErr(msg string) error {
	if msg == "" {
		return nil
	}
	return errors.New(msg)
}

// sampleJSON reads a sample manifest as JSON.
func sampleJSON(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return js
}

package manifest

import (
	"context"
	"strings"
	"testing"
	"time"
)

const goodWorkload = `
type: YCSB
operations:
  - {type: Read, weight: 3, staleness: {exact: 15s}}
  - {type: Update, weight: 1}
load: {rate: 800}
duration: 1m
`

func TestParseAcceptsAWorkloadAndAManifestAndDefaultsThem(t *testing.T) {
	r, err := Parse([]byte(goodWorkload), "My File")
	if err != nil {
		t.Fatalf("a good workload was refused: %v", err)
	}
	if r.Name != "my-file" || r.Target != nil || *r.Workload.Dataset.Rows != 1000 || r.Workload.Operations[0].Name != "read" {
		t.Fatalf("workload parsed as name %q target %v rows %d op %q", r.Name, r.Target, *r.Workload.Dataset.Rows, r.Workload.Operations[0].Name)
	}
	manifest := "apiVersion: bench.spanbench.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: tokyo}\nspec:\n  target: {project: my-project, instance: {name: bench}, database: db}\n  workload:\n" +
		indent(goodWorkload, "    ")
	r, err = Parse([]byte(manifest), "ignored")
	if err != nil {
		t.Fatalf("a good manifest was refused: %v", err)
	}
	if r.Name != "tokyo" || r.Target == nil || r.Target.Project != "my-project" {
		t.Fatalf("manifest parsed as name %q target %+v", r.Name, r.Target)
	}
}

// TestParseRefusesBadInputNamingTheField: every refusal names the field a
// user has to fix.
func TestParseRefusesBadInputNamingTheField(t *testing.T) {
	for _, tc := range []struct{ name, replace, with, want string }{
		{"unknown field", "load: {rate: 800}", "load: {rat: 800}", `unknown field "load.rat"`},
		{"negative rate", "rate: 800", "rate: -5", "load.rate: Invalid value: -5"},
		{"zero weight", "weight: 1}", "weight: 0}", "operations[1].weight: Invalid value: 0"},
		{"staleness on a write", "{type: Update, weight: 1}", "{type: Update, weight: 1, staleness: {exact: 1s}}", "operations[1].staleness: Invalid value: \"object\": staleness: only reads can be stale"},
		{"two load kinds", "load: {rate: 800}", "load: {rate: 800, concurrency: 4}", "load: Invalid value"},
		{"no duration", "duration: 1m", "", "duration: Invalid value: \"object\": duration: required unless load.steps"},
		{"operation of another workload", "type: Update", "type: FullScan", "operations: Invalid value: \"object\": operations: YCSB supports Read"},
		{"commit delay over 500ms", "{type: Update, weight: 1}", "{type: Update, weight: 1, commit: {maxCommitDelay: 600ms}}", "operations[1].commit.maxCommitDelay: Invalid value"},
		{"api on a write", "{type: Update, weight: 1}", "{type: Update, weight: 1, api: SQL}", "operations[1].api: Invalid value"},
		{"duplicate field", "duration: 1m", "duration: 1m\nduration: 2m", `"duration" already set`},
		{"not yaml", "type: YCSB", "type: [", "not valid YAML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := strings.Replace(goodWorkload, tc.replace, tc.with, 1)
			_, err := Parse([]byte(in), "w")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestParseRefusesOtherKindsAndNamelessRuns(t *testing.T) {
	for in, want := range map[string]string{
		"apiVersion: v1\nkind: ConfigMap\n":                                       "is not a bench.spanbench.io/v1alpha1 BenchmarkRun",
		"apiVersion: bench.spanbench.io/v1beta1\nkind: BenchmarkRun\n":            "is not a bench.spanbench.io/v1alpha1 BenchmarkRun",
		"apiVersion: bench.spanbench.io/v1alpha1\nkind: BenchmarkRun\nspec: {}\n": "metadata.name: Required value",
	} {
		if _, err := Parse([]byte(in), "w"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v; want %q", in, err, want)
		}
	}
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestParseCampaignRefusesOtherKindsAndBadCampaigns(t *testing.T) {
	const good = "apiVersion: bench.spanbench.io/v1alpha1\nkind: BenchmarkCampaign\nmetadata: {name: c}\nspec:\n  template:\n    spec:\n" +
		"      target: {project: my-project, instance: {name: bench}, database: db}\n      workload:\n" + `
        type: YCSB
        operations: [{type: Read, weight: 1}]
        load: {rate: 10}
        duration: 10s
`
	if c, err := ParseCampaign([]byte(good)); err != nil || c.Name != "c" {
		t.Fatalf("a good campaign: %v, %v", c, err)
	}
	for in, want := range map[string]string{
		"apiVersion: bench.spanbench.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: r}\n": "is not a bench.spanbench.io/v1alpha1 BenchmarkCampaign",
		strings.Replace(good, "v1alpha1", "v1beta1", 1):                                      "is not a bench.spanbench.io/v1alpha1 BenchmarkCampaign",
		strings.Replace(good, "rate: 10", "rate: 0", 1):                                      "spec.template.spec.workload.load.rate",
		strings.Replace(good, "duration: 10s", "duration: 10s\n  repetitons: 3", 1):          `unknown field "spec.repetitons"`,
	} {
		if _, err := ParseCampaign([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCampaign(%q) = %v; want %q", in, err, want)
		}
	}
}

const minimalRun = `apiVersion: bench.spanbench.io/v1alpha1
kind: BenchmarkRun
metadata: {name: r}
spec:
  target: {project: my-project, instance: {name: bench}, database: db}
  workload:
    type: YCSB
    operations: [{type: Read, weight: 1}]
    load: {rate: 10}
    duration: 1m
`

// TestParseRefusesAHostileQuantityWithoutParsingIt: `spanbench run` once
// hung on a 12-character cpu quantity (resource.ParseQuantity takes minutes
// and gigabytes on it). The refusal must come at once, naming the field.
func TestParseRefusesAHostileQuantityWithoutParsingIt(t *testing.T) {
	for _, q := range []string{"1e-999999999", ".5e-9999999"} {
		in := minimalRun + "  runners:\n    resources:\n      requests: {cpu: \"" + q + "\"}\n"
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		done := make(chan error, 1)
		go func() {
			_, err := Parse([]byte(in), "w")
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "spec.runners.resources.requests.cpu") {
				t.Errorf("cpu %q: Parse = %v; want a refusal naming spec.runners.resources.requests.cpu", q, err)
			}
		case <-ctx.Done():
			t.Errorf("cpu %q: Parse did not return within 10 s", q)
		}
		cancel()
	}
}

// TestParseTakesOneDocument: kubectl creates every document of a file;
// a run is one, so a second document is refused, not silently dropped.
// Empty documents are skipped, as kubectl skips them.
func TestParseTakesOneDocument(t *testing.T) {
	for name, tc := range map[string]struct {
		in, want string
	}{
		"two runs":                  {minimalRun + "---\n" + strings.Replace(minimalRun, "name: r", "name: s", 1), "2 documents in one file"},
		"a run and a workload":      {minimalRun + "---\n" + goodWorkload, "2 documents in one file"},
		"leading separator":         {"---\n" + minimalRun, ""},
		"empty and comment-only":    {"---\n# nothing\n---\n" + minimalRun + "---\n", ""},
		"nothing at all":            {"# nothing\n", "no document"},
		"duplicate key, nested":     {strings.Replace(minimalRun, "load: {rate: 10}", "load: {rate: 10, rate: 20}", 1), `"rate" already set`},
		"duplicate key, top":        {minimalRun + "metadata: {name: t}\n", `"metadata" already set`},
		"unknown field":             {strings.Replace(minimalRun, "load: {rate: 10}", "load: {rate: 10, burst: 2}", 1), `unknown field "spec.workload.load.burst"`},
		"a duration as Go reads it": {strings.Replace(minimalRun, "duration: 1m", "duration: +1m", 1), ""},
		"auto warm-up on a 1ns run": {strings.Replace(minimalRun, "duration: 1m", "duration: 1ns\n    warmUp: {mode: Auto}", 1), "spec.workload.warmUp"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in), "w")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Parse refused it: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Parse = %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestParseRefusesWhatOnlyTheSchemaSees: fields left out, empty objects
// and nulls, which the Go types read as zero values, are refused as the
// CRD's schema refuses them, in a workload file as in a manifest.
func TestParseRefusesWhatOnlyTheSchemaSees(t *testing.T) {
	const streams = `
type: YCSB
operations:
  - {type: Read, weight: 1}
  - {type: Update, weight: 1}
streams:
  - {name: online, operations: [{name: read, weight: 1}], load: {rate: 100}}
  - {name: batch, operations: [{name: update, weight: 1}], load: {concurrency: 1}}
duration: 10m
`
	for _, tc := range []struct{ name, extra, want string }{
		{"empty load beside streams", "load: {}\n", "load: Invalid value: \"object\": load: set load (one stream of every operation) or streams"},
		{"null ramp beside streams", "load: {ramp: null}\n", "load: Invalid value: \"object\": load: set load (one stream of every operation) or streams"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := streams + tc.extra
			if _, err := Parse([]byte(in), "w"); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("workload file: Parse = %v; want an error containing %q", err, tc.want)
			}
			manifest := "apiVersion: bench.spanbench.io/v1alpha1\nkind: BenchmarkRun\nmetadata: {name: tokyo}\nspec:\n  target: {project: my-project, instance: {name: bench}, database: db}\n  workload:\n" +
				indent(in, "    ")
			if _, err := Parse([]byte(manifest), "w"); err == nil || !strings.Contains(err.Error(), "spec.workload."+tc.want) {
				t.Errorf("manifest: Parse = %v; want an error containing %q", err, "spec.workload."+tc.want)
			}
		})
	}
	if _, err := Parse([]byte(streams), "w"); err != nil {
		t.Fatalf("the streams workload itself is refused, so the cases prove nothing: %v", err)
	}
}

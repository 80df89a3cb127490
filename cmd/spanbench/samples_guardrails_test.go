package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/plan"
	"github.com/spanbench/spanbench/cmd/spanbench/manifest"
	"github.com/spanbench/spanbench/controllers/guardrails"
)

// TestSamplesPassTheShippedGuardrails: every config/samples run, and every
// run of every campaign sample's cells, passes the guardrails of the
// manager as config/manager starts it (the chart passes the same flags:
// charts/spanbench's TestTemplateManagerArgs), so `make demo`, e2e and a
// newcomer's `kubectl apply` of a sample are not refused LimitExceeded. A
// tighter limit refuses them, so the check is real.
func TestSamplesPassTheShippedGuardrails(t *testing.T) {
	shipped := shippedLimits(t)
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	tight := shipped
	tight.MaxDatasetRows = 100
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			runs := sampleRuns(t, file)
			for _, run := range runs {
				if msg := shipped.Check(run); msg != "" {
					t.Errorf("run %s is refused by the shipped guardrails: %s", run.Name, msg)
				}
				if msg := tight.Check(run); !strings.Contains(msg, "--max-dataset-rows") {
					t.Errorf("run %s passes --max-dataset-rows=100 (%q): the check sees no dataset", run.Name, msg)
				}
			}
		})
	}
}

// shippedLimits are the guardrails of config/manager's manager.
func shippedLimits(t *testing.T) guardrails.Limits {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "manager", "manager.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var dep appsv1.Deployment
	for _, doc := range strings.Split(string(data), "\n---") {
		if strings.Contains(doc, "kind: Deployment") {
			if err := yaml.Unmarshal([]byte(doc), &dep); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := dep.Spec.Template.Spec.Containers
	if len(c) == 0 || len(c[0].Args) < 2 {
		t.Fatalf("config/manager/manager.yaml: no manager container with args")
	}
	image := ""
	for _, e := range c[0].Env {
		if e.Name == "RUNNER_IMAGE" {
			image = e.Value
		}
	}
	// The kubelet expands the variables: RUNNER_IMAGE from its value,
	// POD_NAMESPACE (the downward API's) to the Deployment's namespace.
	expand := strings.NewReplacer("$(RUNNER_IMAGE)", image, "$(POD_NAMESPACE)", dep.Namespace)
	args := make([]string, 0, len(c[0].Args))
	for _, a := range c[0].Args[1:] { // [0] is the subcommand
		args = append(args, expand.Replace(a))
	}
	f, err := parseManagerFlags(args, io.Discard)
	if err != nil {
		t.Fatalf("config/manager's args %q: %v", args, err)
	}
	return f.limits
}

// sampleRuns are the runs a sample makes: itself, or a campaign's cells.
func sampleRuns(t *testing.T, file string) []*v1alpha1.BenchmarkRun {
	t.Helper()
	if !strings.HasPrefix(filepath.Base(file), "campaign-") {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var run v1alpha1.BenchmarkRun
		if err := yaml.UnmarshalStrict(data, &run); err != nil {
			t.Fatalf("not a BenchmarkRun: %v", err)
		}
		return []*v1alpha1.BenchmarkRun{&run}
	}
	c, err := manifest.ReadCampaignFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := plan.Cells(&c.Spec)
	if err != nil {
		t.Fatal(err)
	}
	runs := make([]*v1alpha1.BenchmarkRun, 0, len(cells))
	for i := range cells {
		run := &v1alpha1.BenchmarkRun{Spec: cells[i].Spec}
		run.Name = c.Name + "/" + cells[i].Name
		runs = append(runs, run)
	}
	return runs
}

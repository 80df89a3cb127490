package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const tinyCampaign = `
apiVersion: bench.spanbench.io/v1alpha1
kind: BenchmarkCampaign
metadata: {name: tiny}
spec:
  repetitions: 2
  template:
    spec:
      target: {project: spanbench-local, instance: {name: bench}, database: ycsb, emulatorHost: "10.245.255.1:9010"}
      workload:
        type: YCSB
        dataset: {rows: 300}
        operations:
          - {name: point, type: Read, api: Read, weight: 1}
        load: {rate: 50}
        duration: 2s
        interval: 1s
  matrix:
    axes:
      - name: api
        path: workload.operations.[name=point].api
        values: [{label: read, value: Read}, {label: sql, value: SQL}]
  comparison:
    metrics: [{statistic: P99}]
`

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCampaignRunsEveryCellInterleavedAndPrintsTheComparison: the
// newcomer's first comparison, as the README runs a sample (which names
// make demo's emulator) with --fresh-emulator: against a self-started
// emulator, one run at a time in the campaign's order.
func TestCampaignRunsEveryCellInterleavedAndPrintsTheComparison(t *testing.T) {
	t.Parallel() // against a fresh emulator of its own
	out := t.TempDir()
	page := filepath.Join(out, "comparison.html")
	code, stdout, stderr := runCLI(t, "campaign", "-f", writeFile(t, "tiny.yaml", tinyCampaign), "--fresh-emulator", "--progress", "never", "--out-dir", out, "--html", page)
	if code != 0 {
		t.Fatalf("spanbench campaign exited %d:\n%s", code, stderr)
	}
	order := regexp.MustCompile(`cell (\w+), repetition (\d)`).FindAllStringSubmatch(stderr, -1)
	var got []string
	for _, m := range order {
		got = append(got, m[1]+m[2])
	}
	if strings.Join(got, " ") != "read1 sql1 read2 sql2" {
		t.Errorf("runs ran as %v, want interleaved: read1 sql1 read2 sql2\n%s", got, stderr)
	}
	if strings.Count(stderr, "started a fresh Cloud Spanner emulator") != 1 {
		t.Errorf("want one emulator for the whole campaign:\n%s", stderr)
	}
	for _, want := range []string{"campaign tiny: 2 cells × 2 repetitions (Interleaved order)", "baseline read",
		"VARIANT", "sql      point p99 µs", "2+2"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the output lacks %q:\n%s", want, stdout)
		}
	}
	files, _ := filepath.Glob(filepath.Join(out, "tiny-*-r*.json"))
	if len(files) != 4 {
		t.Errorf("--out-dir holds %v; want the 4 runs' results", files)
	}
	if html, err := os.ReadFile(page); err != nil || strings.Count(string(html), `data-plot="ratio"`) != 1 || !strings.Contains(string(html), `data-variant="sql"`) {
		t.Errorf("--html wrote no page with one ratio plot, of variant sql (%v)", err)
	}
}

func TestCampaignRefusesAnInvalidCellBeforeStartingAnything(t *testing.T) {
	bad := strings.Replace(tinyCampaign, "{label: sql, value: SQL}", "{label: sql, value: GraphQL}", 1)
	code, _, stderr := runCLI(t, "campaign", "-f", writeFile(t, "bad.yaml", bad), "--emulator-path", "/nonexistent/gateway_main")
	if code != 1 || !strings.Contains(stderr, `matrix axis "api" value "sql"`) || !strings.Contains(stderr, "spec.workload.operations[0].api") {
		t.Fatalf("exit %d, stderr %q; want exit 1 naming the axis, value and field (and no emulator start attempted)", code, stderr)
	}
}

// TestCampaignRefusesAPercentileOverASearchBeforeStartingAnything: a
// campaign of capacity searches compared on P99 would pool each search's
// steps of different rates; `spanbench campaign` refuses it as admission
// does, naming the field, before any run.
func TestCampaignRefusesAPercentileOverASearchBeforeStartingAnything(t *testing.T) {
	search := strings.Replace(tinyCampaign, "load: {rate: 50}\n        duration: 2s",
		`load: {search: {from: 2, max: 8, resolution: 2, stepDuration: 1s, slo: ["p99(point) <= 500ms"]}}
        duration: 2m`, 1)
	if search == tinyCampaign {
		t.Fatal("tinyCampaign has no rate to replace")
	}
	code, _, stderr := runCLI(t, "campaign", "-f", writeFile(t, "search.yaml", search), "--emulator-path", "/nonexistent/gateway_main")
	if code != 1 || !strings.Contains(stderr, "spec.comparison.metrics[0].statistic: the runs of cell read are capacity searches, and P99 is not defined over a capacity search") {
		t.Fatalf("exit %d, stderr %q; want exit 1 naming spec.comparison.metrics[0].statistic (and no emulator start attempted)", code, stderr)
	}
	capacity := strings.Replace(search, "metrics: [{statistic: P99}]", "metrics: [{statistic: CapacityPerNode}]", 1)
	code, _, stderr = runCLI(t, "campaign", "-f", writeFile(t, "capacity.yaml", capacity), "--estimate")
	if code != 0 {
		t.Fatalf("the same campaign comparing CapacityPerNode: exit %d, stderr %q; want it planned", code, stderr)
	}
}

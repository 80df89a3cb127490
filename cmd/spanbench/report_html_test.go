package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spanbench/spanbench/load/result"
)

// writeResults writes one empty result per run name and returns the paths.
func writeResults(t *testing.T, runs ...string) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, run := range runs {
		p := filepath.Join(dir, strings.Repeat("x", i)+run+".json")
		if err := result.WriteFile(p, &result.Document{SchemaVersion: result.SchemaVersion, Run: run, IntervalSeconds: 1}); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestReportOverlayWritesOneSectionPerFile: --overlay shows files of
// different runs side by side instead of refusing to merge them, and
// labels runs that share a name with their file's name.
func TestReportOverlayWritesOneSectionPerFile(t *testing.T) {
	paths := writeResults(t, "a", "b", "b")
	page := filepath.Join(t.TempDir(), "report.html")
	code, stdout, stderr := runCLI(t, append([]string{"report", "--overlay", "--html", page}, paths...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("--html wrote no page: %v", err)
	}
	for _, want := range []string{"<h2>Run a</h2>", "<h2>Run b (xb.json)</h2>", "<h2>Run b (xxb.json)</h2>"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(stdout, "run b:"); n != 2 {
		t.Errorf("stdout has %d tables of run b, want one per file:\n%s", n, stdout)
	}
}

func TestReportOverlayRefusesRunAndOut(t *testing.T) {
	paths := writeResults(t, "a")
	for _, args := range [][]string{
		{"report", "--overlay", "--run", "x"},
		{"report", "--overlay", "--out", filepath.Join(t.TempDir(), "m.json"), paths[0]},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != 1 || !strings.Contains(stderr, "--overlay shows result files side by side") {
			t.Errorf("%v: exit %d, stderr %q; want a refusal naming --overlay", args, code, stderr)
		}
	}
}

// TestReportHTMLOfMergedShards: without --overlay, --html draws the merge.
func TestReportHTMLOfMergedShards(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 2 {
		p := filepath.Join(dir, "shard.json"+strings.Repeat("x", i))
		d := &result.Document{SchemaVersion: result.SchemaVersion, Run: "r", IntervalSeconds: 1, Shards: []result.Shard{{Index: i, Count: 2}}}
		if err := result.WriteFile(p, d); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if code, _, stderr := runCLI(t, append([]string{"report", "--html", page}, paths...)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(html), `<section class="run"`); n != 1 || !strings.Contains(string(html), "<dt>runners</dt><dd>2") {
		t.Errorf("the page has %d run sections; want the one merge of both shards (2 runners)", n)
	}
}

package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/result"
)

// t0 is the results' start.
var t0 = time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)

// writeResults writes one valid result per run name and returns the paths.
func writeResults(t *testing.T, runs ...string) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, run := range runs {
		p := filepath.Join(dir, strings.Repeat("x", i)+run+".json")
		if err := result.WriteFile(p, shardtest.Shard(run, shardtest.Workload(3*time.Second), t0, 0, 1)); err != nil {
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
		{"report", "--overlay", "--run", "x", paths[0]},
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
		d := shardtest.Shard("r", shardtest.Workload(3*time.Second), t0, i, 2)
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

// TestReportComparisonFromAFile: --comparison reads a campaign as kubectl
// prints it, prints its table and draws one ratio plot per variant.
func TestReportComparisonFromAFile(t *testing.T) {
	dir := t.TempDir()
	campaign := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(campaign, []byte(`apiVersion: bench.spanbench.io/v1alpha1
kind: BenchmarkCampaign
metadata: {name: read-vs-sql, namespace: bench}
status:
  verdict: Regressed
  comparison:
    iteration: read-vs-sql-1700000000
    baseline: read
    verdict: Regressed
    rows:
      - {variant: sql, metric: point p99 µs, operation: point, statistic: P99, baseline: "6103", value: "54240", ratio: "7.308", low: "4.1", high: "9.9", confidence: 97.1%, "n": 4+4, pValue: "0.0286", verdict: Regressed}
      - {variant: sql, metric: point ops/s, baseline: "30", value: "30", ratio: "1.000", "n": 4+4, verdict: Neutral}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	code, stdout, stderr := runCLI(t, "report", "--comparison", campaign, "--html", page)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "campaign read-vs-sql: iteration read-vs-sql-1700000000, baseline read, verdict Regressed") ||
		!strings.Contains(stdout, "[4.1, 9.9] @97.1%") {
		t.Errorf("stdout lacks the campaign's heading or its interval:\n%s", stdout)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(html), `data-plot="ratio"`); n != 1 || !strings.Contains(string(html), `data-variant="sql"`) {
		t.Errorf("the page has %d ratio plots; want one, of variant sql", n)
	}
	for _, args := range [][]string{
		{"report", "--comparison", campaign, "--run", "r"},
		{"report", "--comparison", campaign, "--campaign", "c"},
		{"report", "--comparison", campaign, campaign},
	} {
		if code, _, stderr := runCLI(t, args...); code != 1 || !strings.Contains(stderr, "report one campaign's comparison") {
			t.Errorf("%v: exit %d, stderr %q; want a refusal", args, code, stderr)
		}
	}
	if code, _, stderr := runCLI(t, "report", "--comparison", writeResults(t, "a")[0]); code != 1 || !strings.Contains(stderr, "neither a BenchmarkCampaign nor a status.comparison") {
		t.Errorf("a result file given as a comparison: exit %d, stderr %q; want a refusal saying it is no comparison", code, stderr)
	}
}

// TestReportAndCompareRefuseHostileFiles: each hostile shard class, as a
// file next to a valid shard of its run, makes `spanbench report` (with or
// without --overlay) and `spanbench compare` exit 1 naming the file, never
// panic, hang or exhaust memory.
func TestReportAndCompareRefuseHostileFiles(t *testing.T) {
	dir := t.TempDir()
	w := shardtest.Workload(5 * time.Second)
	good := filepath.Join(dir, "good.json")
	if err := result.WriteFile(good, shardtest.Shard("r", w, t0, 0, 2)); err != nil {
		t.Fatal(err)
	}
	for k, c := range shardtest.Hostile("r", w, t0, 1, 2) {
		t.Run(c.Name, func(t *testing.T) {
			bad := filepath.Join(dir, fmt.Sprintf("bad%d.json", k))
			if err := os.WriteFile(bad, gunzip(t, c.Result), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"report", good, bad}, {"report", "--overlay", bad}, {"compare", good, bad}} {
				code, _, stderr := runCLI(t, args...)
				if code != 1 || !strings.Contains(stderr, bad+": ") {
					t.Errorf("%v: exit %d, stderr %q; want exit 1 naming %s", args[:len(args)-1], code, shorten(stderr), bad)
				}
			}
			_ = os.Remove(bad)
		})
	}
}

// gunzip is b decompressed, bounded (a gzip bomb is meant to expand).
func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return b // not gzip: the file holds the bytes as they are
	}
	out, err := io.ReadAll(io.LimitReader(zr, 80<<20))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func shorten(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

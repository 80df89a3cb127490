package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/result"
)

const tinyWorkload = `
type: YCSB
dataset: {rows: 300}
operations:
  - {type: Read, weight: 3, staleness: {exact: 10s}}
  - {type: Insert, weight: 1}
load: {rate: 100}
duration: 2s
interval: 1s
`

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	code = dispatch(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestRunStartsItsOwnEmulatorAndPrintsTheTable is the newcomer's path: no
// endpoint given, so spanbench starts a fresh emulator, loads, runs, prints
// a table per operation and writes a result that `report` reads back.
func TestRunStartsItsOwnEmulatorAndPrintsTheTable(t *testing.T) {
	t.Parallel() // against a fresh emulator of its own
	dir := t.TempDir()
	wl := filepath.Join(dir, "tiny.yaml")
	if err := os.WriteFile(wl, []byte(tinyWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "result.json")
	code, stdout, stderr := runCLI(t, "run", "-f", wl, "--out", out, "--progress", "never")
	if code != 0 {
		t.Fatalf("spanbench run exited %d:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "started a fresh Cloud Spanner emulator") || !strings.Contains(stderr, "loading usertable: 300/300 rows") {
		t.Errorf("stderr does not tell that an emulator was started and the dataset loaded:\n%s", stderr)
	}
	for _, want := range []string{"operation", "p99.9", "read", "insert", "overall", "note: measured on the Cloud Spanner emulator",
		result.GFEUnavailableEmulator} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the result table lacks %q:\n%s", want, stdout)
		}
	}
	doc, err := result.ReadFile(out)
	if err != nil {
		t.Fatalf("reading --out: %v", err)
	}
	if doc.Overall.OK < 150 || doc.Overall.ErrorCount() > 0 || doc.Overall.NotFound > 0 {
		t.Fatalf("the run did %d operations with %d errors and %d reads that found nothing; want about 200, no error, every read finding its row",
			doc.Overall.OK, doc.Overall.ErrorCount(), doc.Overall.NotFound)
	}
	// The reads are 10 s stale and the dataset was loaded just before: the
	// run waits for them to see it, and says so.
	if !strings.Contains(stderr, "reads at up to 10s staleness see the dataset just loaded") {
		t.Errorf("stderr does not tell that the start waited for the stale reads to see the dataset:\n%s", stderr)
	}
	code, reported, stderr := runCLI(t, "report", out)
	if code != 0 || reported != stdout {
		t.Fatalf("report of the run's own result (exit %d, %s) differs from what run printed:\n%s\nvs\n%s", code, stderr, reported, stdout)
	}
}

func TestRunRefusesBadInputBeforeStartingAnything(t *testing.T) {
	wl := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(wl, []byte(strings.Replace(tinyWorkload, "weight: 1}", "weight: 1, staleness: {exact: 1s}}", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "run", "-f", wl, "--emulator-path", "/nonexistent/gateway_main")
	if code != 1 || !strings.Contains(stderr, "operations[1].staleness") {
		t.Fatalf("exit %d, stderr %q; want exit 1 naming operations[1].staleness (and no emulator start attempted)", code, stderr)
	}
}

func TestReportRefusesResultsOfDifferentRuns(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, run := range []string{"a", "b"} {
		p := filepath.Join(dir, run+".json")
		if err := result.WriteFile(p, shardtest.Shard(run, shardtest.Workload(3*time.Second), t0, 0, 1)); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	code, _, stderr := runCLI(t, append([]string{"report"}, paths...)...)
	if code != 1 || !strings.Contains(stderr, `b.json: the result is of run "b", not "a"`) {
		t.Fatalf("exit %d, stderr %q; want a refusal to merge different runs", code, stderr)
	}
}

func TestUnknownCommandShowsUsage(t *testing.T) {
	code, _, stderr := runCLI(t, "frobnicate")
	if code != 2 || !strings.Contains(stderr, "usage: spanbench") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// TestHelpListsEachCommandOnce: `spanbench --help` lists every command of
// the table exactly once, in the table's order, and nothing else.
func TestHelpListsEachCommandOnce(t *testing.T) {
	for _, arg := range []string{"--help", "-h", "help"} {
		_, _, stderr := runCLI(t, arg)
		_, list, ok := strings.Cut(stderr, "commands:\n")
		if !ok {
			t.Fatalf("spanbench %s printed no command list:\n%s", arg, stderr)
		}
		var listed []string
		for line := range strings.Lines(list) {
			if f := strings.Fields(line); len(f) > 0 {
				listed = append(listed, f[0])
			}
		}
		var want []string
		for _, c := range commands {
			want = append(want, c.name)
		}
		if strings.Join(listed, " ") != strings.Join(want, " ") {
			t.Errorf("spanbench %s lists %q; want each command of the table once: %q", arg, listed, want)
		}
	}
}

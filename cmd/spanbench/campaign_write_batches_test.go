package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
)

const writeBatchesSample = "campaign-search-write-batches.yaml"

// TestWriteBatchesSampleSearchesEachBatchSize: the cells of
// config/samples/campaign-search-write-batches.yaml are what its comments
// promise: a capacity search of Tweet inserts, the same in every cell but
// for the rows each Insert commits (1, the baseline, 10 and 100), and a
// comparison in rows per node as well as in commits.
func TestWriteBatchesSampleSearchesEachBatchSize(t *testing.T) {
	c, cells, base := plannedSample(t, writeBatchesSample)
	want := map[string]int{"rows-1": 1, "rows-10": 10, "rows-100": 100}
	if len(cells) != len(want) || cells[base].Name != "rows-1" {
		t.Fatalf("%d cells, baseline %q; want rows-1 (the baseline), rows-10 and rows-100", len(cells), cells[base].Name)
	}
	for _, cell := range cells {
		w := cell.Spec.Workload.Resolved()
		ops := w.Operations
		if w.Type != v1alpha1.WorkloadTweet || w.Load.Search == nil || len(ops) != 1 || ops[0].Type != v1alpha1.OpInsert || ops[0].InsertRows() != want[cell.Name] {
			t.Errorf("cell %s: %s workload, search %v, operations %+v; want a search of Tweet inserts of %d rows a commit",
				cell.Name, w.Type, w.Load.Search != nil, ops, want[cell.Name])
		}
	}
	var stats []v1alpha1.CampaignStatistic
	for _, m := range c.Spec.Comparison.Metrics {
		stats = append(stats, m.Statistic)
	}
	if len(stats) == 0 || stats[0] != v1alpha1.StatisticCapacityRowsPerNode {
		t.Errorf("compares %v; want CapacityRowsPerNode first: a batch's commits are not its rows", stats)
	}
}

// TestWriteBatchesSampleRunsOnTheEmulator runs the sample through
// `spanbench campaign --fresh-emulator`, shrunk to two batch sizes (1 and
// 100 rows) and a narrower search so that it takes a few minutes (the
// whole sample took 6m17s here): every run is a search that ended, each
// successful Insert of the batch cell wrote 100 rows, and the comparison
// prints the batch cell's capacity in rows per node as 100 times its
// capacity in commits per node.
func TestWriteBatchesSampleRunsOnTheEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("four capacity searches on the emulator take minutes")
	}
	t.Parallel() // against a fresh emulator of its own
	b, err := os.ReadFile(filepath.Join("..", "..", "config", "samples", writeBatchesSample))
	if err != nil {
		t.Fatal(err)
	}
	sample := string(b)
	for old, repl := range map[string]string{
		"          - {label: rows-10, value: 10}\n": "",
		"max: 512 ":      "max: 64 ",
		"resolution: 4 ": "resolution: 8 ",
	} {
		if !strings.Contains(sample, old) {
			t.Fatalf("the sample no longer holds %q, which the test shrinks", old)
		}
		sample = strings.Replace(sample, old, repl, 1)
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	args := []string{"campaign", "-f", writeFile(t, writeBatchesSample, sample), "--fresh-emulator", "--progress", "never", "--out-dir", out}
	if code := dispatch(ctx, args, &stdout, &stderr); code != 0 {
		t.Fatalf("spanbench campaign exited %d:\n%s", code, stderr.String())
	}
	t.Logf("progress:\n%s\ntable:\n%s", stderr.String(), stdout.String())
	files, _ := filepath.Glob(filepath.Join(out, "write-batches-*-r*.json"))
	if len(files) != 4 {
		t.Fatalf("--out-dir holds %v; want the 4 runs' results", files)
	}
	batch := 0
	for _, f := range files {
		d, err := result.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if d.Search == nil || !d.Search.Outcome.Done {
			t.Errorf("%s: not a finished search", filepath.Base(f))
		}
		if o := d.Overall; o.OK > 0 && o.Rows == 100*o.OK {
			batch++
		} else if o.Rows != o.OK {
			t.Errorf("%s: %d rows over %d inserts; want 1 or 100 a commit", filepath.Base(f), o.Rows, o.OK)
		}
	}
	if batch != 2 {
		t.Errorf("%d runs wrote 100 rows a commit; want the batch cell's 2", batch)
	}
	row := func(metric string) []string {
		m := regexp.MustCompile(`(?m)^rows-100\s+search ` + regexp.QuoteMeta(metric) + `\s+(\S+)\s+(\S+)`).FindStringSubmatch(stdout.String())
		if m == nil {
			t.Fatalf("the comparison has no rows-100 row of %q:\n%s", metric, stdout.String())
		}
		return m[1:]
	}
	rows, commits := row("capacity rows/s per node"), row("capacity ops/s per node")
	r, err1 := strconv.ParseFloat(rows[1], 64)
	c, err2 := strconv.ParseFloat(commits[1], 64)
	if err1 != nil || err2 != nil || c > 0 && (r < 99*c || r > 101*c) {
		t.Errorf("rows-100: %s rows/s per node against %s commits/s per node; want 100 times", rows[1], commits[1])
	}
}

package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
)

const searchTokyoSample = "campaign-search-tokyo-vs-asia1.yaml"

// TestSearchTokyoVsAsia1SampleComparesCapacityPerNodeWithAnInterval runs
// config/samples/campaign-search-tokyo-vs-asia1.yaml as written through
// `spanbench campaign --fresh-emulator`: its 4+4 runs are each a capacity
// search that ended with a capacity per node, and the comparison prints,
// for asia1 against tokyo, a verdict on capacity per node and on capacity
// with its 95 % interval around the ratio (four repetitions a cell are
// the fewest whose exact Mann-Whitney interval reaches 95 %).
func TestSearchTokyoVsAsia1SampleComparesCapacityPerNodeWithAnInterval(t *testing.T) {
	if testing.Short() {
		t.Skip("eight capacity searches on the emulator take minutes")
	}
	t.Parallel() // against a fresh emulator of its own
	c, cells, base := plannedSample(t, searchTokyoSample)
	if reps := c.Spec.RepetitionCount(); reps < 4 || len(cells) != 2 || cells[base].Name != "tokyo" {
		t.Fatalf("%d repetitions of %d cells, baseline %q; want at least 4 of tokyo (the baseline) and asia1", reps, len(cells), cells[base].Name)
	}
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	args := []string{"campaign", "-f", filepath.Join("..", "..", "config", "samples", searchTokyoSample), "--fresh-emulator",
		"--progress", "never", "--out-dir", out}
	start := time.Now()
	if code := dispatch(ctx, args, &stdout, &stderr); code != 0 {
		t.Fatalf("spanbench campaign exited %d:\n%s", code, stderr.String())
	}
	t.Logf("%s; progress:\n%s\ntable:\n%s", time.Since(start).Round(time.Second), stderr.String(), stdout.String())

	files, _ := filepath.Glob(filepath.Join(out, c.Name+"-*-r*.json"))
	if len(files) != 8 {
		t.Errorf("--out-dir holds %v; want the 8 runs' results", files)
	}
	for _, f := range files {
		d, err := result.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if s := d.Search; s == nil || !s.Outcome.Done || s.Outcome.CapacityPerNode <= 0 {
			t.Errorf("%s: search %+v; want a finished search with a capacity per node", filepath.Base(f), s)
		}
	}
	for _, metric := range []string{"capacity ops/s per node", "capacity ops/s"} {
		row := regexp.MustCompile(`(?m)^asia1\s+search ` + regexp.QuoteMeta(metric) +
			`\s+\S+\s+\S+\s+(\S+)\s+\[(\S+), (\S+)\] @(\d+)%\s+(\d+\+\d+)\s+\S+\s+(\S+)$`).FindStringSubmatch(stdout.String())
		if row == nil {
			t.Errorf("the comparison has no asia1 row of %q with an interval:\n%s", metric, stdout.String())
			continue
		}
		ratio, lo, hi := parseNum(t, row[1]), parseNum(t, row[2]), parseNum(t, row[3])
		conf, n, verdict := parseNum(t, row[4]), row[5], v1alpha1.CampaignVerdict(row[6])
		if n != "4+4" || conf < 95 || !(lo <= ratio && ratio <= hi) {
			t.Errorf("%s: ratio %g in [%g, %g] @%g%% over %s runs; want the ratio within a 95 %% interval over 4+4 runs", metric, ratio, lo, hi, conf, n)
		}
		if verdict == v1alpha1.VerdictInconclusive || verdict == v1alpha1.VerdictInvalid || verdict == "" {
			t.Errorf("%s: verdict %q; want a verdict from the interval (Neutral, Improved or Regressed)", metric, verdict)
		}
	}
}

// parseNum parses a number the table printed.
func parseNum(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q is not a number: %v", s, err)
	}
	return v
}

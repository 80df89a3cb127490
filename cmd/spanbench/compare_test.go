package main

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/protocol"
)

// runShape describes a synthetic result with a known latency distribution:
// per interval, about perInterval lognormal latencies (median 5 ms, log-sd
// 0.3) around an AR(1) level, all times scale (warmUpScale during warm-up).
// Operation "update" fails 1 % of the time. The random stream depends only
// on seed, so two shapes differing only in scale hold the same operations,
// one slower by exactly that factor.
type runShape struct {
	seed               uint64
	scale, warmUpScale float64
	intervals, warmUp  int
	perInterval        int
	ops                []string
}

func shape(seed uint64, scale float64) runShape {
	return runShape{seed: seed, scale: scale, warmUpScale: scale, intervals: 40, warmUp: 4, perInterval: 400, ops: []string{"read", "update"}}
}

// spec is the recorded spec of the shape's run: its operations, 1 s
// intervals, and a Fixed warm-up that ends on its warmUp-th interval.
func (s runShape) spec(t *testing.T) result.Spec {
	t.Helper()
	// Room for every interval's operations (perInterval ± 20 each):
	// no interval may count more than its schedule's arrivals.
	rate := int32(2000)
	w := v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadYCSB, Load: v1alpha1.LoadSpec{Rate: &rate},
		Duration: &metav1.Duration{Duration: time.Duration(s.intervals) * time.Second},
		Interval: &metav1.Duration{Duration: time.Second}}
	types := map[string]v1alpha1.OperationType{"read": v1alpha1.OpRead, "update": v1alpha1.OpUpdate, "scan": v1alpha1.OpScan}
	for _, op := range s.ops {
		w.Operations = append(w.Operations, v1alpha1.OperationSpec{Name: op, Type: types[op], Weight: 1})
	}
	if s.warmUp > 0 {
		// Rounded up to whole intervals, and shorter than the run.
		fixed := time.Duration(s.warmUp)*time.Second - 500*time.Millisecond
		w.WarmUp = &v1alpha1.WarmUpSpec{Mode: v1alpha1.WarmUpFixed, Duration: &metav1.Duration{Duration: fixed}}
	}
	w = w.Resolved()
	spec, err := protocol.RecordedSpec(&w)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func writeResult(t *testing.T, dir, name string, s runShape) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(s.seed, 1))
	t0 := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	end := t0.Add(time.Duration(s.intervals) * time.Second)
	d := &result.Document{SchemaVersion: result.SchemaVersion, Run: name, Spec: s.spec(t), Start: t0, End: end, IntervalSeconds: 1,
		Shards: []result.Shard{{Index: 0, Count: 1, Started: t0, Ended: end}}}
	level := 0.0
	for i := range s.intervals {
		level = 0.6*level + 0.04*rng.NormFloat64()
		in := result.Interval{Index: i, WarmUp: i < s.warmUp}
		scale := s.scale
		if i < s.warmUp {
			scale = s.warmUpScale
		}
		for _, op := range s.ops {
			lat, errs := histogram.New(), histogram.New()
			n := s.perInterval + rng.IntN(41) - 20
			var c result.Counts
			for range n {
				us := 5000 * math.Exp(level+0.3*rng.NormFloat64()) * scale
				if op == "update" && rng.IntN(100) == 0 {
					c.Errors = map[string]uint64{"ABORTED": c.Errors["ABORTED"] + 1}
					_ = errs.RecordValue(int64(us))
					continue
				}
				c.OK++
				if err := lat.RecordValue(int64(us)); err != nil {
					t.Fatal(err)
				}
			}
			o, err := result.NewIntervalOperation(op, c, lat, lat, errs)
			if err != nil {
				t.Fatal(err)
			}
			in.Operations = append(in.Operations, o)
		}
		d.Intervals = append(d.Intervals, in)
	}
	if err := result.Finalize(d); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".json")
	if err := result.WriteFile(path, d); err != nil {
		t.Fatal(err)
	}
	return path
}

// tableRow finds the table line of variant and metric and returns its
// cells after the metric: baseline, value, ratio, CI (one "-" or three
// words), n, p, verdict.
func tableRow(t *testing.T, out, variant, metric string) []string {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(line, variant+" ")
		if !ok {
			continue
		}
		if rest, ok = strings.CutPrefix(strings.TrimSpace(rest), metric+" "); ok {
			return strings.Fields(rest)
		}
	}
	t.Fatalf("no row for %s, %s in:\n%s", variant, metric, out)
	return nil
}

func verdict(cells []string) string { return cells[len(cells)-1] }
func sampleN(cells []string) string { return cells[len(cells)-3] }

func ratio(t *testing.T, cells []string) float64 {
	t.Helper()
	r, err := strconv.ParseFloat(cells[2], 64)
	if err != nil {
		t.Fatalf("ratio cell %q: %v", cells[2], err)
	}
	return r
}

// TestCompareCallsATwentyPercentSlowerVariantRegressed compares one run
// per side (the bootstrap): a variant whose every latency is 20 % higher
// reads Regressed on each latency percentile, and a copy of the baseline
// reads no change anywhere.
func TestCompareCallsATwentyPercentSlowerVariantRegressed(t *testing.T) {
	dir := t.TempDir()
	base := writeResult(t, dir, "base", shape(1, 1))
	slow := writeResult(t, dir, "slow", shape(1, 1.2))
	same := writeResult(t, dir, "same", shape(1, 1))
	code, out, stderr := runCLI(t, "compare", base, slow, same)
	if code != 0 {
		t.Fatalf("compare exited %d (a regression is a finding, not a failure):\n%s", code, stderr)
	}
	for _, op := range []string{"read", "update"} {
		for _, m := range []string{"p50 (µs)", "p99 (µs)", "p99.9 (µs)"} {
			c := tableRow(t, out, "slow", op+" "+m)
			if verdict(c) != "Regressed" || math.Abs(ratio(t, c)-1.2) > 0.02 || sampleN(c) != "36+36" {
				t.Errorf("slow, %s %s: %v; want Regressed, ratio 1.20 over 36+36 intervals (warm-up left out):\n%s", op, m, c, out)
			}
		}
		if c := tableRow(t, out, "slow", op+" ops/s"); verdict(c) != "Neutral" {
			t.Errorf("slow, %s ops/s: %v; want Neutral (same throughput)", op, c)
		}
		for _, m := range []string{"ops/s", "p50 (µs)", "p99 (µs)", "p99.9 (µs)"} {
			c := tableRow(t, out, "same", op+" "+m)
			if v := verdict(c); (v != "Neutral" && v != "Inconclusive") || ratio(t, c) != 1 {
				t.Errorf("same, %s %s: %v; want ratio 1.000, Neutral or Inconclusive", op, m, c)
			}
		}
	}
	if c := tableRow(t, out, "same", "update errors (%)"); ratio(t, c) != 1 || verdict(c) == "Regressed" {
		t.Errorf("same, update errors: %v; want ratio 1.000 and no regression", c)
	}
	if strings.Contains(out, "read errors") {
		t.Errorf("read has no errors on either side, yet the table compares its error rate:\n%s", out)
	}

	if code, again, _ := runCLI(t, "compare", base, slow, same); code != 0 || again != out {
		t.Errorf("the same seed gave a different table:\n%s\nvs\n%s", out, again)
	}
	code, _, stderr = runCLI(t, "compare", "--fail-on-regression", base, slow)
	if code != exitRegressed || !strings.Contains(stderr, "Regressed") {
		t.Errorf("--fail-on-regression: exit %d, stderr %q; want exit %d naming the regressions", code, stderr, exitRegressed)
	}
}

// TestCompareLeavesTheWarmUpOut: a variant that is slow only while warming
// up is not a regression.
func TestCompareLeavesTheWarmUpOut(t *testing.T) {
	dir := t.TempDir()
	base := writeResult(t, dir, "base", shape(1, 1))
	cold := shape(1, 1)
	cold.warmUpScale = 10
	coldStart := writeResult(t, dir, "coldstart", cold)
	code, out, stderr := runCLI(t, "compare", base, coldStart)
	if code != 0 {
		t.Fatalf("compare exited %d:\n%s", code, stderr)
	}
	for _, m := range []string{"p50 (µs)", "p99 (µs)", "p99.9 (µs)"} {
		if c := tableRow(t, out, "coldstart", "read "+m); ratio(t, c) != 1 {
			t.Errorf("read %s: %v; want ratio 1.000: the 10x slower warm-up intervals leaked into the comparison", m, c)
		}
	}
}

// TestCompareRepetitionsUseEachRunsExactValue compares 5+5 runs by their
// per-run values (Mann–Whitney), and prints each side's figure from the
// merge of its runs' histograms, never an average of percentiles.
func TestCompareRepetitionsUseEachRunsExactValue(t *testing.T) {
	dir := t.TempDir()
	var a, b []string
	for i := range 5 {
		a = append(a, writeResult(t, dir, "a"+strconv.Itoa(i), shape(uint64(10+i), 1)))
		b = append(b, writeResult(t, dir, "b"+strconv.Itoa(i), shape(uint64(20+i), 1.2)))
	}
	code, out, stderr := runCLI(t, "compare", "read="+strings.Join(a, ","), "sql="+strings.Join(b, ","))
	if code != 0 {
		t.Fatalf("compare exited %d:\n%s", code, stderr)
	}
	if !strings.HasPrefix(out, "baseline read: 5 run(s)") {
		t.Errorf("the output does not name the baseline and its runs:\n%s", out)
	}
	c := tableRow(t, out, "sql", "read p99 (µs)")
	if verdict(c) != "Regressed" || sampleN(c) != "5+5" || c[5] != "@97%" || math.Abs(ratio(t, c)-1.2) > 0.05 {
		t.Errorf("sql, read p99: %v; want Regressed over 5+5 runs, ratio ≈ 1.2 with the exact 96.8 %% interval:\n%s", c, out)
	}
	if want := pooledP99(t, a); c[0] != want {
		t.Errorf("baseline p99 printed %s; the p99 of the 5 runs' merged histograms is %s", c[0], want)
	}
}

// pooledP99 is the p99 of read's measured intervals over all files, merged.
func pooledP99(t *testing.T, paths []string) string {
	t.Helper()
	all := histogram.New()
	for _, p := range paths {
		d, err := result.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range d.Intervals[d.WarmUp.Intervals:] {
			h, err := histogram.Decode(in.Operations[0].LatencyHistogram)
			if err != nil {
				t.Fatal(err)
			}
			all.Merge(h)
		}
	}
	return strconv.FormatFloat(float64(all.ValueAtQuantile(99)), 'g', 4, 64)
}

func TestCompareRefusesBadInputClearly(t *testing.T) {
	dir := t.TempDir()
	base := writeResult(t, dir, "base", shape(1, 1))
	other := shape(1, 1)
	other.ops = []string{"read", "scan"}
	scan := writeResult(t, dir, "scan", other)
	allWarm := shape(1, 1)
	allWarm.warmUp = allWarm.intervals
	warm := writeResult(t, dir, "warm", allWarm)
	notResult := filepath.Join(dir, "config.json")
	garbage := filepath.Join(dir, "garbage.json")
	for path, text := range map[string]string{notResult: `{"kind": "BenchmarkRun"}`, garbage: "not json"} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no variant", []string{base}, "give a baseline and at least one variant"},
		{"missing file", []string{base, filepath.Join(dir, "absent.json")}, "absent.json: no such file"},
		{"not a result", []string{base, notResult}, `config.json: result schema version "" is not`},
		{"not JSON", []string{garbage, base}, "garbage.json: decoding result"},
		{"other operations", []string{base, scan}, "scan measured operations [read scan], but the baseline base measured [read update]"},
		{"repetitions of other workloads", []string{base + "," + scan, base}, "repetitions of one cell must run one workload"},
		// A warm-up covering the whole run is refused by the spec's own
		// rule (one interval must be left after it) before the series is read.
		{"only warm-up", []string{base, warm}, "warm.json: the result's spec is not valid: spec.warmUp.duration"},
		{"empty file in a list", []string{base + ",", base}, "names an empty file"},
		{"bad min-effect", []string{"--min-effect", "much", base, base}, `"much" is not a fraction`},
		{"bad confidence", []string{"--confidence", "95", base, base}, "confidence 95 is not in (0, 1)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"compare"}, tc.args...)...)
			if code != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and %q", code, stderr, tc.want)
			}
		})
	}
}

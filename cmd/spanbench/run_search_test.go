package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/capacity"
)

// TestSearchSampleRunsAndEachStepMatchesItsHistograms runs the capacity
// search sample against a fresh emulator, whose SQL path falls behind at
// a few reads per second on this host, so the search meets a knee. It
// checks what a reader of the result relies on: every step's record is
// what its own measured intervals say (re-measured and re-judged from the
// file's histograms, figure by figure), the steps' windows follow each
// other without overlap, each exactly its measured time long; the search
// ended, and its capacity is a rate that passed while its first failing
// rate failed; the run printed the steps and a capacity line, and
// `spanbench report` prints the same from the file.
func TestSearchSampleRunsAndEachStepMatchesItsHistograms(t *testing.T) {
	if testing.Short() {
		t.Skip("a capacity search on the emulator takes minutes")
	}
	t.Parallel() // against a fresh emulator of its own
	out := filepath.Join(t.TempDir(), "search.json")
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	sample := filepath.Join("..", "..", "config", "samples", "search-ycsb-sql.yaml")
	if code := dispatch(ctx, []string{"run", "-f", sample, "--fresh-emulator", "--out", out, "--progress", "never"}, &stdout, &stderr); code != 0 {
		t.Fatalf("spanbench run of the search sample exited %d:\n%s", code, stderr.String())
	}
	doc, err := result.ReadFile(out)
	if err != nil {
		t.Fatalf("reading --out: %v", err)
	}
	s := doc.Search
	if doc.SchemaVersion != result.SchemaVersionSearch || s == nil {
		t.Fatalf("the file is of version %s, search section %v; want %s with one", doc.SchemaVersion, s != nil, result.SchemaVersionSearch)
	}
	t.Logf("steps:\n%s", stderr.String())
	checkStepsAgainstHistograms(t, doc)

	o := s.Outcome
	if !o.Done || len(o.Steps) == 0 || len(o.Steps) > s.MaxSteps {
		t.Fatalf("search done %v after %d steps (at most %d)", o.Done, len(o.Steps), s.MaxSteps)
	}
	passed, failed := map[float64]bool{}, map[float64]bool{}
	for _, st := range o.Steps {
		passed[st.Offered] = passed[st.Offered] || st.Pass
		failed[st.Offered] = failed[st.Offered] || !st.Pass
	}
	if o.Capacity != 0 && !passed[o.Capacity] {
		t.Errorf("capacity %g ops/s: no step at that rate passed", o.Capacity)
	}
	if o.FirstFailing != 0 && (!failed[o.FirstFailing] || len(o.FailedConditions) == 0) {
		t.Errorf("first failing rate %g (conditions %v): no step at that rate failed", o.FirstFailing, o.FailedConditions)
	}
	for _, want := range []string{"capacity search: 2 to 128 ops/s", "offered/s", "capacity: "} {
		if !strings.Contains(stderr.String(), want) || !strings.Contains(stdout.String(), want) {
			t.Errorf("the run's progress and table lack %q:\nprogress:\n%s\ntable:\n%s", want, stderr.String(), stdout.String())
		}
	}
	code, reported, errs := runCLI(t, "report", out)
	if code != 0 || !strings.Contains(reported, "capacity: ") {
		t.Errorf("spanbench report exited %d without the capacity line:\n%s\n%s", code, reported, errs)
	}
}

// checkStepsAgainstHistograms re-measures every step of a search document
// from its intervals and asserts the recorded step is that measurement's
// verdict, and that the steps' windows tile the series in order.
func checkStepsAgainstHistograms(t *testing.T, doc *result.Document) {
	t.Helper()
	s := doc.Search
	slo, err := capacity.ParseSLO(s.SLO)
	if err != nil {
		t.Fatalf("the recorded SLO does not parse: %v", err)
	}
	measured := int(s.StepSeconds / doc.IntervalSeconds)
	prevEnd := 0
	for i, st := range s.Outcome.Steps {
		if st.EndInterval-st.FirstInterval != measured || st.FirstInterval < prevEnd {
			t.Errorf("step %d measures intervals [%d, %d); want %d intervals after %d", i+1, st.FirstInterval, st.EndInterval, measured, prevEnd)
		}
		prevEnd = st.EndInterval
		m, err := capacity.Measure(doc.Intervals, st.FirstInterval, st.EndInterval, doc.IntervalSeconds, st.Offered)
		if err != nil {
			t.Fatalf("step %d: re-measuring its intervals: %v", i+1, err)
		}
		again, err := capacity.Evaluate(slo, m)
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		again.FirstInterval, again.EndInterval = st.FirstInterval, st.EndInterval
		if diff := cmp.Diff(again, st, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
			t.Errorf("step %d's record differs from its intervals' histograms (-intervals +recorded):\n%s", i+1, diff)
		}
		if st.OK == 0 {
			t.Errorf("step %d at %g ops/s recorded no successful operation", i+1, st.Offered)
		}
	}
}

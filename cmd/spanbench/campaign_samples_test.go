package main

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/campaign/plan"
	"github.com/spanbench/spanbench/cmd/spanbench/manifest"
)

// Bounds of a campaign sample scaled for the emulator: a newcomer runs it
// with `spanbench campaign -f` and waits for every run, one at a time.
const (
	sampleRunMax = 30 * time.Second
	// sampleSearchMax bounds a search sample's run: its worst case.
	sampleSearchMax = 5 * time.Minute
	sampleRowsMax   = 10_000
	sampleRunsMax   = 12 // three cells at the fewest repetitions for an exact 95 % interval (4)
	minIntervals    = 10 // what the comparison of one run a cell bootstraps over, at least
	runNameMaxSize  = 50 // a BenchmarkRun's name bound
	// demoEmulatorHost is make demo's emulator, on the local cluster's
	// node address, which every sample's target names.
	demoEmulatorHost = "10.245.255.1:9010"
)

// TestEveryCampaignSamplePlans takes each config/samples/campaign-*.yaml
// through what `spanbench campaign -f` does before its first run — the
// CLI's strict reader and the Go validator (manifest.ReadCampaignFile),
// campaign/plan's cells (each a valid run), baseline, order and run names —
// and checks that the sample is what its comments promise: a comparison
// (two cells or more, every compared operation present in every cell),
// scaled for the emulator (each run well under a minute, small datasets,
// few runs), enough intervals for a one-run-a-cell comparison, and no
// emulatorHost, so that the CLI starts an emulator of its own. The API
// server's view of the samples is test/apivalidation's
// TestCampaignSamplesAreAcceptedAndExpand.
func TestEveryCampaignSamplePlans(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "samples", "campaign-*.yaml"))
	if err != nil || len(files) < 6 {
		t.Fatalf("want the six campaign samples of config/samples, found %v (%v)", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			c, err := manifest.ReadCampaignFile(file)
			if err != nil {
				t.Fatalf("spanbench campaign -f refuses it: %v", err)
			}
			cells, err := plan.Cells(&c.Spec)
			if err != nil {
				t.Fatalf("its matrix does not plan: %v", err)
			}
			if len(cells) < 2 {
				t.Fatalf("%d cell: nothing to compare", len(cells))
			}
			base, err := plan.Baseline(&c.Spec, cells)
			if err != nil {
				t.Fatalf("its baseline: %v", err)
			}
			slots := plan.Order(c.Spec.RunOrder(), c.Spec.OrderSeed(), len(cells), c.Spec.RepetitionCount())
			if len(slots) > sampleRunsMax {
				t.Errorf("%d runs: more than the %d a sample for the emulator may take", len(slots), sampleRunsMax)
			}
			names := map[string]bool{}
			for _, s := range slots {
				n := plan.RunName(c.Name, time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC), &cells[s.Cell], s.Repetition)
				if names[n] || len(n) > runNameMaxSize {
					t.Errorf("run name %q: taken twice or longer than %d", n, runNameMaxSize)
				}
				names[n] = true
			}
			for i := range cells {
				checkSampleCell(t, c, &cells[i])
			}
			t.Logf("%d cells (baseline %s) × %d repetitions, %s order", len(cells), cells[base].Name, c.Spec.RepetitionCount(), c.Spec.RunOrder())
		})
	}
}

// checkSampleCell checks one cell of a campaign sample: scaled for the
// emulator, comparable, and on make demo's emulator.
func checkSampleCell(t *testing.T, c *v1alpha1.BenchmarkCampaign, cell *plan.Cell) {
	t.Helper()
	w := cell.Spec.Workload.Resolved()
	if s := w.Load.Search; s != nil {
		// A search's duration is its bound, not its length: its steps are
		// held to the run's limit, and its worst case to a few minutes.
		if d := s.PerStep(); d > sampleRunMax {
			t.Errorf("cell %s: search steps of %s, more than %s", cell.Name, d, sampleRunMax)
		}
		if d := w.TotalDuration(); d > sampleSearchMax {
			t.Errorf("cell %s: a search bounded by %s, more than %s", cell.Name, d, sampleSearchMax)
		}
	} else if d := w.TotalDuration(); d > sampleRunMax {
		t.Errorf("cell %s: a run of %s, more than %s", cell.Name, d, sampleRunMax)
	}
	if w.Load.Search != nil && c.Spec.RepetitionCount() < 2 {
		t.Errorf("cell %s: one search a cell; its capacity compares run by run, with two or more", cell.Name)
	}
	if n := int(w.TotalDuration() / w.Interval.Duration); c.Spec.RepetitionCount() == 1 && n < minIntervals {
		t.Errorf("cell %s: one run a cell of %d intervals; the comparison needs %d", cell.Name, n, minIntervals)
	}
	if w.Dataset.Rows != nil && *w.Dataset.Rows > sampleRowsMax {
		t.Errorf("cell %s: %d rows, more than %d", cell.Name, *w.Dataset.Rows, sampleRowsMax)
	}
	if h := cell.Spec.Target.EmulatorHost; h != demoEmulatorHost {
		t.Errorf("cell %s names emulatorHost %q; the samples name make demo's emulator, %s, so that they run as written on its cluster",
			cell.Name, h, demoEmulatorHost)
	}
	var ops []string
	for i := range w.Operations {
		ops = append(ops, w.Operations[i].EffectiveName())
	}
	for _, m := range c.Spec.Comparison.Metrics {
		if comparison.IsMonitoring(m.Statistic) {
			continue // its operations name regions or API methods
		}
		for _, op := range m.Operations {
			if !slices.Contains(ops, op) {
				t.Errorf("cell %s: comparison.metrics compares operation %q, which the cell does not run (%v)", cell.Name, op, ops)
			}
		}
	}
}

// plannedSample reads config/samples/<name> as `spanbench campaign -f`
// does and plans its cells and baseline (its index in cells), failing the
// test on any error.
func plannedSample(t *testing.T, name string) (*v1alpha1.BenchmarkCampaign, []plan.Cell, int) {
	t.Helper()
	c, err := manifest.ReadCampaignFile(filepath.Join("..", "..", "config", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	cells, err := plan.Cells(&c.Spec)
	if err != nil {
		t.Fatal(err)
	}
	base, err := plan.Baseline(&c.Spec, cells)
	if err != nil {
		t.Fatal(err)
	}
	return c, cells, base
}

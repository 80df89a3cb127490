package main

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/spanbench/spanbench/campaign/plan"
	"github.com/spanbench/spanbench/cmd/spanbench/manifest"
)

// TestBatchOnlineSampleComparesTheBatchAloneWithTheMix: the cells of
// config/samples/campaign-batch-online.yaml are what its comments promise,
// the batch stream alone (the patch removes the online stream by name) as
// the baseline, and the template's batch and online streams; the batch
// stream is the same in both, so only the online load differs, and it runs
// for the whole run, so that its throughput is its speed.
func TestBatchOnlineSampleComparesTheBatchAloneWithTheMix(t *testing.T) {
	c, err := manifest.ReadCampaignFile(filepath.Join("..", "..", "config", "samples", "campaign-batch-online.yaml"))
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
	want := map[string][]string{"alone": {"batch"}, "mixed": {"batch", "online"}}
	if len(cells) != len(want) || cells[base].Name != "alone" {
		t.Fatalf("cells %d with baseline %q, want alone (the baseline) and mixed", len(cells), cells[base].Name)
	}
	var batch []string
	for _, cell := range cells {
		var names []string
		for _, s := range cell.Spec.Workload.Streams {
			names = append(names, s.Name)
			if s.Name == "batch" {
				batch = append(batch, s.Operations[0].Name)
				// Throughput is per measured second: a batch that ended
				// early would count its idle seconds, not its speed.
				if s.Iterations != nil || s.Load.Concurrency == nil || *s.Load.Concurrency != 1 {
					t.Errorf("cell %s: the batch stream is not one worker back to back for the whole run: %+v", cell.Name, s)
				}
			}
		}
		if !slices.Equal(names, want[cell.Name]) {
			t.Errorf("cell %s runs streams %v, want %v", cell.Name, names, want[cell.Name])
		}
	}
	if len(batch) != 2 || batch[0] != batch[1] {
		t.Errorf("the batch streams of the cells run %v, want the same operation in both", batch)
	}
}

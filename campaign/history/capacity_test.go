package history

import (
	"strings"
	"testing"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/result"
)

// searched gives d a capacity search's outcome: finished or not, its
// capacity, and its capacity per node (0: the instance's size unknown).
func searched(d *result.Document, done bool, capacity, perNode float64) *result.Document {
	d.Search = &result.Search{From: 10, Max: 1000, Resolution: 10, Outcome: result.SearchOutcome{Done: done, Reason: "Resolved",
		Capacity: capacity, CapacityPerNode: perNode}}
	return d
}

// TestSummaryKeepsTheCapacityEveryRunHas: the entry holds the mean of the
// cell's runs' capacities and capacities per node, and survives
// encoding; a cell with an unfinished search has no capacity (not the
// other runs' mean, not zero), one whose instance size is unknown no
// capacity per node, one that is not a search neither; a tampered entry
// is refused.
func TestSummaryKeepsTheCapacityEveryRunHas(t *testing.T) {
	cells := []comparison.Cell{
		{Name: "base", Runs: []*result.Document{searched(runDoc(t, "b1", 1, 1), true, 40, 13), searched(runDoc(t, "b2", 2, 1), true, 44, 15)}},
		{Name: "unfinished", Runs: []*result.Document{searched(runDoc(t, "u1", 3, 1), true, 40, 13), searched(runDoc(t, "u2", 4, 1), false, 20, 7)}},
		{Name: "emulator", Runs: []*result.Document{searched(runDoc(t, "e1", 5, 1), true, 40, 0)}},
		{Name: "fixed", Runs: []*result.Document{runDoc(t, "f1", 6, 1)}},
	}
	e := summarized(t, cells)
	figure := func(cell string, s v1alpha1.CampaignStatistic) (float64, bool) {
		c, _ := e.FindCell(cell)
		return c.Capacity.Figure(s)
	}
	if v, ok := figure("base", v1alpha1.StatisticCapacity); !ok || v != 42 {
		t.Errorf("base cell's capacity %g (%v); want the mean of 40 and 44", v, ok)
	}
	if v, ok := figure("base", v1alpha1.StatisticCapacityPerNode); !ok || v != 14 {
		t.Errorf("base cell's capacity per node %g (%v); want the mean of 13 and 15", v, ok)
	}
	for _, c := range []struct {
		cell string
		s    v1alpha1.CampaignStatistic
	}{
		{"unfinished", v1alpha1.StatisticCapacity}, {"unfinished", v1alpha1.StatisticCapacityPerNode},
		{"emulator", v1alpha1.StatisticCapacityPerNode}, {"fixed", v1alpha1.StatisticCapacity},
	} {
		if v, ok := figure(c.cell, c.s); ok {
			t.Errorf("cell %s has %s %g; want none", c.cell, c.s, v)
		}
	}
	if v, ok := figure("emulator", v1alpha1.StatisticCapacity); !ok || v != 40 {
		t.Errorf("a cell of unknown instance size has capacity %g (%v); want 40", v, ok)
	}
	bad := e
	bad.Cells = append([]Cell(nil), e.Cells...)
	minus := -1.0
	bad.Cells[0].Capacity = &CapacityFigures{Capacity: &minus}
	b, err := encode(&bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decode(b); err == nil || !strings.Contains(err.Error(), "capacity figures") {
		t.Errorf("an entry with a negative capacity decodes (%v); want it refused", err)
	}
}

package history

import (
	"fmt"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/comparison"
	"github.com/spanbench/spanbench/result"
)

// CapacityFigures are a cell's capacity search figures in an iteration:
// the means of its runs' (each run's finished search has one capacity;
// repetitions are independent samples of it, docs/capacity.md). They let
// the trend find a change of capacity across iterations. A figure some
// run lacks (an unfinished search, an instance of unknown size) is left
// out, never kept as the mean of the others or a zero.
type CapacityFigures struct {
	// Capacity is the mean capacity, in operations per second
	// (comparison.Capacity).
	Capacity *float64 `json:"capacity,omitempty"`
	// PerNode is the mean capacity per 1,000 processing units
	// (comparison.CapacityPerNode).
	PerNode *float64 `json:"perNode,omitempty"`
	// RowsPerNode is the mean capacity per node in rows per second
	// (comparison.CapacityRowsPerNode).
	RowsPerNode *float64 `json:"rowsPerNode,omitempty"`
}

// summarizeCapacity is the mean of runs' capacity figures, or nil when
// no figure is had by every run (the cell's runs are not searches, or
// one did not finish).
func summarizeCapacity(runs []*result.Document) *CapacityFigures {
	c := CapacityFigures{
		Capacity:    meanOfEvery(runs, comparison.Capacity),
		PerNode:     meanOfEvery(runs, comparison.CapacityPerNode),
		RowsPerNode: meanOfEvery(runs, comparison.CapacityRowsPerNode),
	}
	if c.Capacity == nil && c.PerNode == nil && c.RowsPerNode == nil {
		return nil
	}
	return &c
}

func meanOfEvery(runs []*result.Document, f func(*result.Document, string) (float64, error)) *float64 {
	var sum float64
	for _, d := range runs {
		v, err := f(d, comparison.CapacityRow)
		if err != nil {
			return nil
		}
		sum += v
	}
	mean := sum / float64(len(runs))
	return &mean
}

// Figure is the cell's figure of capacity statistic s.
func (c *CapacityFigures) Figure(s v1alpha1.CampaignStatistic) (float64, bool) {
	if c == nil {
		return 0, false
	}
	v := c.Capacity
	switch s {
	case v1alpha1.StatisticCapacityPerNode:
		v = c.PerNode
	case v1alpha1.StatisticCapacityRowsPerNode:
		v = c.RowsPerNode
	}
	if v == nil {
		return 0, false
	}
	return *v, true
}

// validate refuses figures no summary writes.
func (c *CapacityFigures) validate() error {
	if c == nil {
		return nil
	}
	for _, v := range []*float64{c.Capacity, c.PerNode, c.RowsPerNode} {
		if v != nil && !finite(*v) {
			return fmt.Errorf("capacity figures %g: want finite figures, not negative", *v)
		}
	}
	return nil
}

package comparison

import (
	"fmt"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
)

// CapacityRow is the name of a capacity statistic's one row: a search
// covers the whole workload, not one operation.
const CapacityRow = "search"

// Capacity is a run's capacity, in operations per second.
func Capacity(d *result.Document, _ string) (float64, error) {
	o, err := searchOutcome(d)
	if err != nil {
		return 0, err
	}
	return o.Capacity, nil
}

// CapacityPerNode is a run's capacity per 1,000 processing units.
func CapacityPerNode(d *result.Document, _ string) (float64, error) {
	o, err := searchOutcome(d)
	if err != nil {
		return 0, err
	}
	if o.CapacityPerNode == 0 && o.Capacity > 0 {
		return 0, fmt.Errorf("run %s: its instance's size is not known, so it has no capacity per node", d.Run)
	}
	return o.CapacityPerNode, nil
}

// CapacityRowsPerNode is a run's capacity per 1,000 processing units in
// rows per second: CapacityPerNode times the rows per successful
// operation over the run's measured operations (exact for an Insert of
// rows: N, N per commit).
func CapacityRowsPerNode(d *result.Document, op string) (float64, error) {
	perNode, err := CapacityPerNode(d, op)
	if err != nil {
		return 0, err
	}
	c := d.Overall.Counts
	if c.OK == 0 {
		return 0, fmt.Errorf("run %s completed no operation, so its rows per operation are not known", d.Run)
	}
	return perNode * float64(c.Rows) / float64(c.OK), nil
}

// overSearch is why statistic s of the cells' runs is Invalid, or "":
// a statistic other than a capacity (v1alpha1.CampaignStatistic.OverSearch)
// over a run that is a capacity search. Admission refuses a campaign that
// asks for one (plan.Admit); a campaign stored before that check still
// compares, and its rows say why they claim nothing.
func overSearch(s v1alpha1.CampaignStatistic, cells ...Cell) string {
	why := s.OverSearch()
	if why == "" {
		return ""
	}
	for _, c := range cells {
		for _, d := range c.Runs {
			if d.Search != nil {
				return fmt.Sprintf("run %s is a capacity search: %s", d.Run, why)
			}
		}
	}
	return ""
}

// searchOutcome is a run's finished search, or why it has none to compare.
func searchOutcome(d *result.Document) (*result.SearchOutcome, error) {
	switch {
	case d.Search == nil:
		return nil, fmt.Errorf("run %s has no capacity: its load is not a search (workload.load.search)", d.Run)
	case !d.Search.Outcome.Done:
		return nil, fmt.Errorf("run %s: its search did not finish, so its capacity is not known", d.Run)
	}
	return &d.Search.Outcome, nil
}

package comparison

import (
	"fmt"
	"strconv"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
)

// CostPerMillionOps is the run's cost per million operations of its
// measured window, from the cost section the manager adds to a run's
// result once the run ended (docs/cost.md). It is the run's figure, the
// same for every operation: op is not read. A run without a price makes
// its row inconclusive and says why.
func CostPerMillionOps(d *result.Document, _ string) (float64, error) {
	if d.Cost == nil {
		return 0, fmt.Errorf("run %s has no cost (not recorded yet, or by a manager without prices)", d.Run)
	}
	f := d.Cost.PerMillionOperations
	if f.Amount == "" {
		return 0, fmt.Errorf("run %s: cost per million operations unknown: %s", d.Run, f.Unknown)
	}
	v, err := strconv.ParseFloat(f.Amount, 64)
	if err != nil {
		return 0, fmt.Errorf("run %s: cost per million operations %q: %w", d.Run, f.Amount, err)
	}
	return v, nil
}

// costOperation names the one row of a cost metric: the run's figure
// covers all its operations.
const costOperation = "overall"

// IsCost says whether s is read from a run's cost.
func IsCost(s v1alpha1.CampaignStatistic) bool { return s == v1alpha1.StatisticCostPerMillionOps }

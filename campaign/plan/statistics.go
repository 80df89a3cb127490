package plan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// Admit is Expand and the checks admission adds over it: what the CLI
// runs and the admission webhook admits. The controller plans a stored
// campaign with Expand alone, so that a campaign stored before a check
// existed still runs and its comparison says what it cannot compare (a
// statistic over a search is an Invalid row); its errors are *Error.
func Admit(spec *v1alpha1.BenchmarkCampaignSpec) (cells []Cell, baseline int, err error) {
	cells, baseline, err = Expand(spec)
	if err != nil {
		return nil, 0, err
	}
	if err := Statistics(spec, cells); err != nil {
		return nil, 0, err
	}
	return cells, baseline, nil
}

// Statistics refuses a campaign that compares its capacity searches on a
// statistic a search does not define (v1alpha1.CampaignStatistic.OverSearch):
// when any cell's runs search, every compared statistic must be a
// capacity, and the default statistics (P50, P99, Throughput) are
// refused too, at comparison.metrics, so that the campaign names its own.
func Statistics(spec *v1alpha1.BenchmarkCampaignSpec, cells []Cell) error {
	searching := ""
	for i := range cells {
		if cells[i].Spec.Workload.Load.Search != nil {
			searching = cells[i].Name
			break
		}
	}
	if searching == "" {
		return nil
	}
	path := field.NewPath("spec", "comparison", "metrics")
	if len(spec.Comparison.Metrics) == 0 {
		var defaults []v1alpha1.CampaignStatistic
		for _, m := range v1alpha1.DefaultMetrics() {
			defaults = append(defaults, m.Statistic)
		}
		return &Error{Field: path, err: fmt.Errorf("%s: the runs of cell %s are capacity searches, and the default statistics (%s) are not defined over a capacity search: name the statistics to compare among %s",
			path, searching, v1alpha1.StatisticNames(defaults), v1alpha1.StatisticNames(v1alpha1.CapacityStatistics()))}
	}
	for i, m := range spec.Comparison.Metrics {
		if why := m.Statistic.OverSearch(); why != "" {
			p := path.Index(i).Child("statistic")
			return &Error{Field: p, Value: string(m.Statistic), err: fmt.Errorf("%s: the runs of cell %s are capacity searches, and %s", p, searching, why)}
		}
	}
	return nil
}

package webhook

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// SearchCampaignUnavailable is the refusal of a campaign whose template
// holds a capacity search: the manager runs a search as a BenchmarkRun
// (docs/capacity.md), but its campaign reconciler has not been shown to
// compare and trend capacities across the runs it stamps out, so such a
// campaign is refused rather than accepted and compared on figures that
// mix a search's steps. `spanbench campaign` runs it.
const SearchCampaignUnavailable = "capacity search campaigns are available through spanbench campaign only in this release; " +
	"a single search runs in the cluster as a BenchmarkRun"

// searchInCampaign refuses a campaign template's workload with a capacity
// search at path (the workload's), once it is otherwise valid: a user
// fixes what is wrong with the search first, whether they then run it
// with spanbench campaign or not.
func searchInCampaign(path *field.Path, w *v1alpha1.WorkloadSpec) field.ErrorList {
	if w.Load.Search == nil {
		return nil
	}
	return field.ErrorList{field.Forbidden(path.Child("load", "search"), SearchCampaignUnavailable)}
}

package webhook

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// SearchUnavailable is the refusal of a capacity search applied to the
// cluster: the manager cannot yet run one (its runner pods would need to
// change rate at the controller's step instants, docs/capacity.md), so a
// BenchmarkRun or campaign template with load.search is refused rather
// than accepted and run as something else.
const SearchUnavailable = "search runs are available through spanbench run only in this release"

// searchInCluster refuses a workload with a capacity search at path (the
// workload's), once it is otherwise valid: a user fixes what is wrong with
// the search first, whether they then run it with spanbench run or not.
func searchInCluster(path *field.Path, w *v1alpha1.WorkloadSpec) field.ErrorList {
	if w.Load.Search == nil {
		return nil
	}
	return field.ErrorList{field.Forbidden(path.Child("load", "search"), SearchUnavailable)}
}

package benchmarkcampaign

import (
	"fmt"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
)

// A capacity search's runs are compared by the capacity in their reports'
// search sections (comparison.Capacity). The section is the manager's
// record of the steps it judged, which the report's intervals do not
// re-derive by themselves (a step's CPU figure is Cloud Monitoring's), so
// the campaign holds it to what the run controller wrote into the run's
// status.search, which only the manager writes: a report ConfigMap edited
// to another capacity makes its cell Invalid instead of a verdict.

// checkSearch says whether doc's search section agrees with run's status.
func checkSearch(run *v1alpha1.BenchmarkRun, doc *result.Document) error {
	sec, st := doc.Search, run.Status.Search
	switch {
	case run.Spec.Workload.Load.Search == nil && sec != nil:
		return fmt.Errorf("the report holds a capacity search; the run's workload has none")
	case sec == nil:
		return nil // no capacity: the comparison says the run has none
	case st == nil:
		return fmt.Errorf("the report holds a capacity search; the run's status has none to hold it to")
	}
	o := sec.Outcome
	capacity := ""
	if o.Capacity > 0 {
		capacity = v1alpha1.FormatThroughput(o.Capacity)
	}
	if o.Done != st.Done || o.Reason != st.Reason || capacity != st.Capacity || len(o.Steps) != len(st.Steps) {
		return fmt.Errorf("the report's capacity search (capacity %q, %s, %d steps) is not the run's status's (capacity %q, %s, %d steps)",
			capacity, o.Reason, len(o.Steps), st.Capacity, st.Reason, len(st.Steps))
	}
	return nil
}

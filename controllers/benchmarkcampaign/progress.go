package benchmarkcampaign

import (
	"fmt"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// campaignProgress is where iteration it is, for status.progress: started
// of its runs have started (their BenchmarkRuns exist). The latest running
// iteration advanced writes it last, and it stays after the iteration
// ends, until the next one starts.
func campaignProgress(it *v1alpha1.IterationStatus, started int32) *v1alpha1.CampaignProgress {
	return &v1alpha1.CampaignProgress{
		Iteration: it.Name,
		Run:       started,
		Runs:      it.Runs,
		Summary:   fmt.Sprintf("%d/%d", started, it.Runs),
	}
}

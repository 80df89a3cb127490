//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// TestDemoRunCarriesItsCost: the demo run's status carries its cost from
// the installed manager. The embedded catalog prices nothing yet, so the
// estimate and the run's cost are unknown, with the reason, never 0, and
// the Cost column says so; the cost is recorded once the run ended.
func TestDemoRunCarriesItsCost(t *testing.T) {
	kustomizePassOnly(t)
	t.Parallel()
	ns := newNamespace(t, "e2e-cost")
	run := demoRun(t, ns, "cost")
	create(t, run)
	run = waitFinished(t, ns, run.Name, runTimeout)
	requireSucceeded(t, run, v1alpha1.ReasonCompleted)
	eventually(t, runTimeout, "the run's cost to be recorded", func(ctx context.Context) (bool, string) {
		got := &v1alpha1.BenchmarkRun{}
		if err := suite.c.Get(ctx, client.ObjectKeyFromObject(run), got); err != nil {
			return false, err.Error()
		}
		c := got.Status.Cost
		if c == nil || c.Total == nil {
			return false, fmt.Sprintf("status.cost = %+v", c)
		}
		run = got
		return true, ""
	})
	c := run.Status.Cost
	const why = "no price for regional-asia-northeast1"
	if c.Estimate == nil || c.Estimate.Amount != "" || !strings.Contains(c.Estimate.UnknownReason, why) ||
		c.Total.Amount != "" || !strings.Contains(c.Total.UnknownReason, why) || c.Summary != "unknown" || c.Holding == "" {
		t.Errorf("status.cost = %+v (estimate %+v, total %+v); want both unknown because %s, the holding said", c, c.Estimate, c.Total, why)
	}
}

//go:build !runner

package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/plan"
	"github.com/spanbench/spanbench/spanner/pricing"
	"github.com/spanbench/spanbench/spanner/runcost"
)

// printCampaignEstimate writes a campaign's estimated cost before it runs,
// as the manager estimates it: one iteration (every cell's run, repeated)
// and, with a schedule, its next 30 days.
func printCampaignEstimate(w io.Writer, c *v1alpha1.BenchmarkCampaign, cells []plan.Cell, priceFile string) error {
	prices, from, err := priceCatalog(priceFile)
	if err != nil {
		return err
	}
	specs, names := make([]v1alpha1.BenchmarkRunSpec, len(cells)), make([]string, len(cells))
	for i := range cells {
		specs[i], names[i] = cells[i].Spec, cells[i].Name
	}
	now := time.Now()
	iteration := runcost.EstimateIteration(prices, specs, names, c.Spec.RepetitionCount(), now)
	fmt.Fprintf(w, "estimated cost of an iteration: %s (%d runs; prices: %s)\n", costText(iteration, true), len(cells)*c.Spec.RepetitionCount(), from)
	if c.Spec.Schedule == "" {
		return nil
	}
	sched, loc, err := plan.ParseSchedule(&c.Spec)
	if err != nil {
		return err
	}
	month, n, err := pricing.Monthly(iteration, sched, loc, now)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "estimated cost of 30 days at its schedule (%d iterations): %s\n", n, costText(month, true))
	return nil
}

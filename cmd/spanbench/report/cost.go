package report

import (
	"time"

	"github.com/spanbench/spanbench/result"
)

// The page shows what a run cost when its document has a cost section
// (the manager adds it once the run ended; docs/cost.md). An unknown
// figure is said with its reason, never shown as zero: with no price for
// the instance's configuration in the catalog, it is the common case.

// costView is a run's cost section.
type costView struct {
	Currency, Catalog, Holding string
	// Held is the time charged, from and to, and how long.
	Held            string
	ProcessingUnits int64
	Lines           []costLine
	Notes           []string
}

// costLine is one line of the cost table: its amount, or why it is
// unknown.
type costLine struct {
	Name, What      string
	Amount, Unknown string
}

func newCostView(c *result.Cost) *costView {
	if c == nil {
		return nil
	}
	v := &costView{Currency: c.Currency, Catalog: c.Catalog, Holding: c.Holding, ProcessingUnits: c.ProcessingUnits, Notes: c.Notes}
	if !c.HeldFrom.IsZero() && !c.HeldTo.IsZero() {
		v.Held = c.HeldFrom.UTC().Format("2006-01-02 15:04:05") + " to " + c.HeldTo.UTC().Format("15:04:05 MST") +
			" (" + c.HeldTo.Sub(c.HeldFrom).Round(time.Second).String() + ")"
	}
	for _, l := range []struct {
		name, what string
		f          result.CostFigure
	}{
		{"estimate", "made before the run, from its spec", c.Estimate},
		{"instance", "compute: processing units × the time held × the price", c.Instance},
		{"storage", "the loaded dataset for the time held", c.Storage},
		{"runners", "the runner pods' vCPU-hours, where the admin priced them", c.Runners},
		{"total", "instance + storage (+ runners where priced)", c.Total},
		{"per million operations", "the measured window's share of the total, per million operations measured", c.PerMillionOperations},
	} {
		line := costLine{Name: l.name, What: l.what, Unknown: l.f.Unknown}
		switch {
		case l.f.Amount != "":
			line.Amount = l.f.Amount + " " + c.Currency
		case line.Unknown == "":
			line.Unknown = "not given"
		}
		v.Lines = append(v.Lines, line)
	}
	return v
}

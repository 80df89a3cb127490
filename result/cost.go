package result

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Cost is what a run cost in Cloud Spanner prices, added to a run's merged
// result once the run ended and what it held is known; nil before, and in
// a shard's result. Amounts are decimals in Currency ("12.50"); an empty
// amount is unknown, and its Unknown field says why (never 0).
type Cost struct {
	// Currency is the ISO 4217 code of every amount.
	Currency string `json:"currency"`
	// Catalog says where the prices come from.
	Catalog string `json:"catalog"`
	// Holding is Ephemeral (the instance charged from creation to
	// deletion) or Existing (the run's window).
	Holding string `json:"holding"`
	// HeldFrom and HeldTo bound the time charged.
	HeldFrom time.Time `json:"heldFrom"`
	HeldTo   time.Time `json:"heldTo"`
	// ProcessingUnits is the instance's compute charged.
	ProcessingUnits int64 `json:"processingUnits"`
	// Estimate is the estimate made before the run.
	Estimate CostFigure `json:"estimate"`
	// Instance, Storage, Runners and Total are the cost's lines; Runners
	// is left out of Total when unpriced.
	Instance CostFigure `json:"instance"`
	Storage  CostFigure `json:"storage"`
	Runners  CostFigure `json:"runners"`
	Total    CostFigure `json:"total"`
	// PerMillionOperations is the measured window's share of Total per
	// million operations measured.
	PerMillionOperations CostFigure `json:"perMillionOperations"`
	// Notes say what the figures assume.
	Notes []string `json:"notes,omitempty"`
}

// CostFigure is an amount, or why it is unknown.
type CostFigure struct {
	Amount  string `json:"amount,omitempty"`
	Unknown string `json:"unknown,omitempty"`
}

// Bounds of a cost section read back: what a run's status keeps.
const (
	maxCostNotes  = 8
	maxCostString = 512
)

// costAmount is an amount as the manager writes it (pricing.Money.Decimal).
var costAmount = regexp.MustCompile(`^-?[0-9]{1,15}[.][0-9]{2,6}$`)

// Check refuses a cost section no manager writes: an amount that is not a
// decimal, or more or longer notes than a status keeps. nil passes.
func (c *Cost) Check() error {
	if c == nil {
		return nil
	}
	if len(c.Notes) > maxCostNotes {
		return errors.New("cost section: more notes than a run's status keeps")
	}
	for _, s := range append([]string{c.Currency, c.Catalog, c.Holding}, c.Notes...) {
		if len(s) > maxCostString {
			return errors.New("cost section: a text longer than a run's status keeps")
		}
	}
	for name, f := range map[string]CostFigure{"estimate": c.Estimate, "instance": c.Instance, "storage": c.Storage,
		"runners": c.Runners, "total": c.Total, "perMillionOperations": c.PerMillionOperations} {
		if f.Amount != "" && !costAmount.MatchString(f.Amount) {
			return fmt.Errorf("cost section: %s amount %q is not a decimal amount", name, f.Amount)
		}
		if len(f.Unknown) > maxCostString {
			return fmt.Errorf("cost section: %s: a reason longer than a run's status keeps", name)
		}
	}
	return nil
}

// keepCost carries a document's cost through a merge of that one document
// (a run's report read back); merged with others it is dropped: it prices
// one run, not the merge.
func (m *Merger) keepCost(d *Document, first bool) {
	switch {
	case first:
		m.out.Cost = d.Cost
	case m.out.Cost != nil || d.Cost != nil:
		m.out.Cost = nil
		m.out.Notes = appendNew(m.out.Notes, "cost left out: it priced one run, not this merge")
	}
}

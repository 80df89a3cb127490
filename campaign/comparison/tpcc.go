package comparison

import (
	"fmt"
	"strings"

	"github.com/spanbench/spanbench/result"
)

// tpmC is one figure per TPCC run (the result's tpcc.tpmC: New-Order
// transactions per minute after the warm-up). Compared run by run it is
// that figure; with one run per cell, by sectioning the
// NewOrder operation's measured intervals, whose throughput ratio is
// tpmC's. A run whose consistency checks failed lost or duplicated work:
// its tpmC is not a result, and its row says so rather than compare it.

// TpmC is the run's tpmC, read for its NewOrder operation op.
func TpmC(d *result.Document, op string) (float64, error) {
	if err := tpmCComparable(op, d); err != nil {
		return 0, err
	}
	return d.TPCC.TpmC, nil
}

// tpmCComparable says why a run's tpmC cannot be compared, or nil.
func tpmCComparable(op string, docs ...*result.Document) error {
	for _, d := range docs {
		if d.TPCC == nil {
			return fmt.Errorf("run %s has no tpmC: it is not a TPC-C run", d.Run)
		}
		t, err := totals(d, op)
		if err != nil {
			return err
		}
		if t.Type != "NewOrder" {
			return fmt.Errorf("run %s: tpmC counts New-Order transactions; operation %s is a %s", d.Run, op, t.Type)
		}
	}
	return unverified(docs...)
}

// unverified says why a TPC-C run among docs is not a result, or nil: its
// consistency conditions failed (the database lost or duplicated work its
// figures counted), or were asked for and not checked (the check could
// not run): no figure of such a run is compared, not only its tpmC — its
// New-Order throughput is tpmC by another name, and its latencies are of
// the same unverified work.
func unverified(docs ...*result.Document) error {
	for _, d := range docs {
		if d.TPCC == nil {
			continue
		}
		if d.TPCC.NotChecked != "" {
			return fmt.Errorf("run %s: its TPC-C consistency was not checked (%s): its figures are not a verified result", d.Run, d.TPCC.NotChecked)
		}
		var failed []string
		for _, c := range d.TPCC.Checks {
			if !c.Passed {
				failed = append(failed, c.Name)
			}
		}
		if len(failed) > 0 {
			return fmt.Errorf("run %s failed TPC-C consistency condition(s) %s: its figures are not a result", d.Run, strings.Join(failed, "; "))
		}
	}
	return nil
}

// newOrderOperations are the run's NewOrder operations, which tpmC is
// read for.
func newOrderOperations(d *result.Document) []string {
	var out []string
	for _, o := range d.Totals {
		if o.Type == "NewOrder" {
			out = append(out, o.Name)
		}
	}
	return out
}

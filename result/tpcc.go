package result

import (
	"fmt"
	"io"
	"slices"
)

// TPCCTypes are the TPC-C transactions' operation types, as the API names
// them, in the specification's order.
var TPCCTypes = []OperationType{"NewOrder", "Payment", "OrderStatus", "Delivery", "StockLevel"}

// TPCC is a TPC-C run's headline figures ("tpcc" in the document): tpmC
// and the executed mix, which Finalize derives from the totals, and the
// consistency conditions checked after the run.
type TPCC struct {
	// TpmC is the New-Order transactions completed per minute after the
	// warm-up, across all runners, the 1 % rolled back by design (an
	// unused item) included: TPC-C revision 5.11, clause 5.4.2, "New-Order
	// transactions that rollback, as required by Clause 2.4.1.4, must be
	// included in the reported MQTh" (clause 5.4.3 names it tpmC;
	// docs/workloads.md#tpmc says where the text was read).
	TpmC float64 `json:"tpmC"`
	// CommittedTpmC is TpmC without the rolled-back New-Orders: the
	// New-Order transactions that committed, per minute. It is not the
	// specification's figure; it is kept for comparison with
	// committed-only counts such as HammerDB's NOPM.
	CommittedTpmC float64 `json:"committedTpmC,omitempty"`
	// Mix is each transaction type's share of the transactions completed
	// after the warm-up, in the specification's order.
	Mix []TPCCShare `json:"mix"`
	// Checks are the consistency conditions checked after the run, when
	// the spec asked for them (tpcc.consistencyChecks).
	Checks []Check `json:"checks,omitempty"`
	// NotChecked says why the consistency conditions the spec asked for
	// were not checked (the database unreadable, the check's time limit
	// passed): the run's figures are unverified, and a campaign compares
	// no tpmC of it. Empty when they were checked or not asked for.
	NotChecked string `json:"notChecked,omitempty"`
}

// TPCCShare is one transaction type's part of the executed mix.
type TPCCShare struct {
	// Type is the transaction's operation type.
	Type OperationType `json:"type"`
	// Completed counts its successful transactions after the warm-up.
	Completed uint64 `json:"completed"`
	// Percent is Completed's share of all completed transactions.
	Percent float64 `json:"percent"`
}

// Check is one consistency condition and whether it held.
type Check struct {
	// Name is the condition, such as "W_YTD = sum(D_YTD)".
	Name string `json:"name"`
	// Passed is true when it held everywhere.
	Passed bool `json:"passed"`
	// Detail says where it failed.
	Detail string `json:"detail,omitempty"`
}

// maxChecks bounds a document's checks (untrusted input, as notes are).
const maxChecks = 16

// deriveTPCC sets d.TPCC from the totals when the spec's operations are
// TPC-C transactions, keeping checks already recorded.
func deriveTPCC(d *Document) {
	completed := map[OperationType]uint64{}
	var all, rolledBack uint64
	for _, op := range d.Totals {
		if slices.Contains(TPCCTypes, op.Type) {
			completed[op.Type] += op.OK
			all += op.OK
		}
		if op.Type == "NewOrder" {
			rolledBack += min(op.Rollbacks, op.OK)
		}
	}
	if len(completed) == 0 {
		d.TPCC = nil
		return
	}
	t := &TPCC{}
	if d.TPCC != nil {
		t.Checks, t.NotChecked = d.TPCC.Checks, d.TPCC.NotChecked
	}
	if minutes := d.End.Sub(d.WarmUp.End).Minutes(); minutes > 0 {
		t.TpmC = float64(completed["NewOrder"]) / minutes
		t.CommittedTpmC = float64(completed["NewOrder"]-rolledBack) / minutes
	}
	for _, typ := range TPCCTypes {
		if n, ok := completed[typ]; ok {
			s := TPCCShare{Type: typ, Completed: n}
			if all > 0 {
				s.Percent = 100 * float64(n) / float64(all)
			}
			t.Mix = append(t.Mix, s)
		}
	}
	d.TPCC = t
}

// keepTPCCChecks carries a document's consistency checks through a merge
// of that one document (a run's report read back, to which the manager
// added them); merged with others they are dropped: they were checked
// after that document's run, not after the merge's.
func (m *Merger) keepTPCCChecks(d *Document, first bool) {
	var checks []Check
	var notChecked string
	if d.TPCC != nil {
		checks, notChecked = d.TPCC.Checks, d.TPCC.NotChecked
	}
	switch {
	case first && (len(checks) > 0 || notChecked != ""):
		m.out.TPCC = &TPCC{Checks: slices.Clone(checks), NotChecked: notChecked}
	case !first && (len(checks) > 0 || notChecked != "" || (m.out.TPCC != nil && (len(m.out.TPCC.Checks) > 0 || m.out.TPCC.NotChecked != ""))):
		m.out.TPCC = nil
		m.out.Notes = appendNew(m.out.Notes, "TPC-C consistency checks left out: they were checked after one document's run, not this merge's")
	}
}

// checkTPCC bounds the checks' count and text.
func checkTPCC(d *Document) error {
	if d.TPCC == nil {
		return nil
	}
	if len(d.TPCC.Checks) > maxChecks || len(d.TPCC.Mix) > len(TPCCTypes) {
		return invalid("the result has %d TPC-C checks and %d mix entries, more than %d and %d", len(d.TPCC.Checks), len(d.TPCC.Mix), maxChecks, len(TPCCTypes))
	}
	if len(d.TPCC.NotChecked) > maxNoteBytes {
		return invalid("the reason the TPC-C checks did not run is %d bytes, more than %d", len(d.TPCC.NotChecked), maxNoteBytes)
	}
	for _, c := range d.TPCC.Checks {
		if len(c.Name)+len(c.Detail) > maxNoteBytes {
			return invalid("a TPC-C check is %d bytes, more than %d", len(c.Name)+len(c.Detail), maxNoteBytes)
		}
	}
	return nil
}

// writeTPCC prints tpmC, the executed mix and the checks.
func writeTPCC(w io.Writer, t *TPCC) {
	if t == nil {
		return
	}
	fmt.Fprintf(w, "tpmC: %.1f (New-Order transactions per minute after the warm-up, rolled-back ones included, as TPC-C clause 5.4.2 requires; %.1f committed)\nmix executed:", t.TpmC, t.CommittedTpmC)
	for _, s := range t.Mix {
		fmt.Fprintf(w, " %s %.1f %%", s.Type, s.Percent)
	}
	fmt.Fprintln(w)
	if t.NotChecked != "" {
		fmt.Fprintf(w, "consistency NOT CHECKED: %s\n", t.NotChecked)
	}
	for _, c := range t.Checks {
		verdict := "passed"
		if !c.Passed {
			verdict = "FAILED: " + c.Detail
		}
		fmt.Fprintf(w, "consistency %s: %s\n", c.Name, verdict)
	}
}

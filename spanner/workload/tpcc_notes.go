package workload

import (
	"context"
	"fmt"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/spanner/workload/tpcc"
)

// Notes are the caveats a result of this resolved workload carries: for
// TPCC, the run's NURand constants and, for the Test population, that it
// is not the specification's.
func Notes(spec *v1alpha1.WorkloadSpec, run string) []string {
	if spec.Type != v1alpha1.WorkloadTPCC {
		return nil
	}
	c, l := tpcc.RunConstants(run), tpcc.LoadConstants
	notes := []string{fmt.Sprintf("TPC-C NURand constants: C_LAST %d (population %d), C_ID %d, OL_I_ID %d", c.CLast, l.CLast, c.CCustomer, c.CItem)}
	if s := spec.TPCC.Scale(); s.Test {
		notes = append(notes, fmt.Sprintf("TPC-C Test population (%d items and stock rows per warehouse, %d customers and orders per district): "+
			"not the specification's population; tpmC is not comparable with published results", s.Items, s.Customers))
	}
	return notes
}

// CheckTPCCInto runs the consistency conditions (CheckTPCC) and records
// them in doc, whose totals Finalize has derived.
func CheckTPCCInto(ctx context.Context, c *spanner.Client, doc *result.Document) (TPCCCheck, error) {
	check, err := CheckTPCC(ctx, c)
	if err != nil {
		return check, err
	}
	if doc.TPCC == nil {
		doc.TPCC = &result.TPCC{}
	}
	doc.TPCC.Checks = doc.TPCC.Checks[:0]
	for _, cond := range check.Conditions {
		doc.TPCC.Checks = append(doc.TPCC.Checks, result.Check{Name: cond.Name, Passed: cond.Passed, Detail: cond.Detail})
	}
	return check, nil
}

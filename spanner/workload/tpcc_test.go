package workload_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/spanner/workload/tpcc"
)

// tpccSpec is a Test-population TPCC workload of the given warehouses and
// operations (the standard mix when none).
func tpccSpec(warehouses int32, ops ...v1alpha1.OperationSpec) *v1alpha1.WorkloadSpec {
	rate := int32(1)
	s := &v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadTPCC, Operations: ops,
		TPCC:     &v1alpha1.TPCCSpec{Warehouses: &warehouses, Population: v1alpha1.TPCCTest},
		Load:     v1alpha1.LoadSpec{Rate: &rate},
		Duration: &metav1.Duration{Duration: time.Second}}
	*s = s.Resolved()
	return s
}

// countRows counts a table's rows with a strong read.
func countRows(t *testing.T, c *spanner.Client, table string) int64 {
	t.Helper()
	var n int64
	err := c.Single().Query(context.Background(), spanner.Statement{SQL: "SELECT COUNT(*) FROM " + table}).Do(func(r *spanner.Row) error {
		return r.Columns(&n)
	})
	if err != nil {
		t.Fatalf("counting %s: %v", table, err)
	}
	return n
}

// TestTPCCLoadsThePopulationInBothDialects loads one Test warehouse into
// a database of each dialect and counts every table's rows.
func TestTPCCLoadsThePopulationInBothDialects(t *testing.T) {
	for _, d := range dialects {
		t.Run(string(d), func(t *testing.T) {
			s := sessiontest.StartDialect(t, tpccSpec(1), d)
			want := map[string]int64{tpcc.TableItem: 1000, tpcc.TableWarehouse: 1, tpcc.TableDistrict: 10, tpcc.TableStock: 1000,
				tpcc.TableCustomer: 300, tpcc.TableHistory: 300, tpcc.TableOrders: 300, tpcc.TableNewOrder: 90}
			for table, n := range want {
				if got := countRows(t, s.Client, table); got != n {
					t.Errorf("%s holds %d rows after the load, want %d", table, got, n)
				}
			}
			if lines := countRows(t, s.Client, tpcc.TableOrderLine); lines < 300*5 || lines > 300*15 {
				t.Errorf("order_line holds %d rows, want 5 to 15 per order", lines)
			}
		})
	}
}

package workload

import (
	"context"
	"fmt"
	"strings"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// TPCC consistency conditions (clause 3.3.2), by the name results record.
const (
	// ConditionWarehouseYTD is condition 1: W_YTD = sum(D_YTD).
	ConditionWarehouseYTD = "W_YTD = sum(D_YTD)"
	// ConditionNextOrder is condition 2: D_NEXT_O_ID - 1 = max(O_ID) =
	// max(NO_O_ID).
	ConditionNextOrder = "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)"
	// ConditionNewOrders is condition 3: count(NO_O_ID) = max(NO_O_ID) -
	// min(NO_O_ID) + 1.
	ConditionNewOrders = "count(NO_O_ID) = max(NO_O_ID) - min(NO_O_ID) + 1"
	// ConditionOrderLines is condition 4: sum(O_OL_CNT) = count(order
	// lines).
	ConditionOrderLines = "sum(O_OL_CNT) = count(OL)"
)

// TPCCCondition is the outcome of one consistency condition over every
// warehouse or district.
type TPCCCondition struct {
	// Name is the condition (Condition* constants).
	Name string
	// Passed is true when it held everywhere.
	Passed bool
	// Detail names the first places it failed, empty when it passed.
	Detail string
}

// tpccCheckQueries are the aggregates the conditions compare, the same
// text in both dialects (lower-case names, no parameters) but for the sum:
// PostgreSQL's SUM of a bigint is a numeric.
func tpccCheckQueries(d v1alpha1.Dialect) struct{ warehouses, districts, orders, newOrders, lines string } {
	sum := "SUM(o_ol_cnt)"
	if d == v1alpha1.DialectPostgreSQL {
		sum = "CAST(SUM(o_ol_cnt) AS bigint)"
	}
	return struct{ warehouses, districts, orders, newOrders, lines string }{
		warehouses: "SELECT w_id, w_ytd FROM warehouse",
		districts:  "SELECT w_id, d_id, d_ytd, d_next_o_id FROM district",
		orders:     "SELECT w_id, d_id, MAX(o_id), " + sum + " FROM orders GROUP BY w_id, d_id",
		newOrders:  "SELECT w_id, d_id, MAX(o_id), MIN(o_id), COUNT(*) FROM new_order GROUP BY w_id, d_id",
		lines:      "SELECT w_id, d_id, COUNT(*) FROM order_line GROUP BY w_id, d_id",
	}
}

// CheckTPCC runs the TPC-C consistency conditions 1 to 4 in one strong
// read-only transaction, so that all of them see one snapshot, in a
// database of dialect d ("" is GoogleSQL).
func CheckTPCC(ctx context.Context, c *spanner.Client, d v1alpha1.Dialect) ([]TPCCCondition, error) {
	txn := c.ReadOnlyTransaction()
	defer txn.Close()
	q := tpccCheckQueries(d.OrDefault())
	wYTD := map[int64]int64{}
	if err := query(ctx, txn, q.warehouses, func(v []int64) { wYTD[v[0]] = v[1] }); err != nil {
		return nil, err
	}
	type district struct{ ytd, next, maxO, olCnt, maxNO, minNO, countNO, lines int64 }
	ds := map[[2]int64]*district{}
	dYTD := map[int64]int64{}
	if err := query(ctx, txn, q.districts, func(v []int64) {
		ds[[2]int64{v[0], v[1]}] = &district{ytd: v[2], next: v[3]}
		dYTD[v[0]] += v[2]
	}); err != nil {
		return nil, err
	}
	at := func(v []int64) *district {
		if d := ds[[2]int64{v[0], v[1]}]; d != nil {
			return d
		}
		d := &district{}
		ds[[2]int64{v[0], v[1]}] = d
		return d
	}
	for _, step := range []struct {
		sql string
		set func(d *district, v []int64)
	}{
		{q.orders, func(d *district, v []int64) { d.maxO, d.olCnt = v[2], v[3] }},
		{q.newOrders, func(d *district, v []int64) { d.maxNO, d.minNO, d.countNO = v[2], v[3], v[4] }},
		{q.lines, func(d *district, v []int64) { d.lines = v[2] }},
	} {
		if err := query(ctx, txn, step.sql, func(v []int64) { step.set(at(v), v) }); err != nil {
			return nil, err
		}
	}
	conds := []*failures{{name: ConditionWarehouseYTD}, {name: ConditionNextOrder}, {name: ConditionNewOrders}, {name: ConditionOrderLines}}
	for w, ytd := range wYTD {
		conds[0].check(ytd == dYTD[w], "warehouse %d: W_YTD %d, sum(D_YTD) %d", w, ytd, dYTD[w])
	}
	for k, d := range ds {
		conds[1].check(d.next-1 == d.maxO && (d.countNO == 0 || d.maxNO == d.maxO), "district %d/%d: D_NEXT_O_ID %d, max(O_ID) %d, max(NO_O_ID) %d", k[0], k[1], d.next, d.maxO, d.maxNO)
		conds[2].check(d.countNO == 0 || d.countNO == d.maxNO-d.minNO+1, "district %d/%d: %d new orders from %d to %d", k[0], k[1], d.countNO, d.minNO, d.maxNO)
		conds[3].check(d.olCnt == d.lines, "district %d/%d: sum(O_OL_CNT) %d, %d order lines", k[0], k[1], d.olCnt, d.lines)
	}
	out := make([]TPCCCondition, len(conds))
	for i, f := range conds {
		out[i] = f.result()
	}
	return out, nil
}

// query runs sql and hands each row's INT64 columns to each.
func query(ctx context.Context, txn *spanner.ReadOnlyTransaction, sql string, each func([]int64)) error {
	err := txn.Query(ctx, spanner.Statement{SQL: sql}).Do(func(r *spanner.Row) error {
		v := make([]spanner.NullInt64, r.Size())
		ptrs := make([]any, len(v))
		for i := range v {
			ptrs[i] = &v[i]
		}
		if err := r.Columns(ptrs...); err != nil {
			return err
		}
		ints := make([]int64, len(v))
		for i, n := range v {
			ints[i] = n.Int64
		}
		each(ints)
		return nil
	})
	if err != nil {
		return fmt.Errorf("consistency check %q: %w", sql, err)
	}
	return nil
}

// failures collects where a condition failed, keeping the first few.
type failures struct {
	name   string
	failed int
	first  []string
}

func (f *failures) check(ok bool, format string, args ...any) {
	if ok {
		return
	}
	f.failed++
	if len(f.first) < 3 {
		f.first = append(f.first, fmt.Sprintf(format, args...))
	}
}

func (f *failures) result() TPCCCondition {
	if f.failed == 0 {
		return TPCCCondition{Name: f.name, Passed: true}
	}
	return TPCCCondition{Name: f.name, Detail: fmt.Sprintf("failed in %d places: %s", f.failed, strings.Join(f.first, "; "))}
}

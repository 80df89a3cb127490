package workload_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
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

// tpccTxnTimeout bounds one transaction, so that a hung one fails the
// test and a slow host does not. It bounds each transaction rather than
// a run of them because the emulator's cost of a DML transaction grows
// with the tables: it scans a whole table for each statement
// (EMULATOR.md), and a Delivery on the DML path is some 130 UPDATEs,
// most of them on order_line. Measured at load average 30 on 2 cores:
// 17-57 s per Delivery, where the 5 minutes this test once gave all 20
// Deliveries together ran out after 12 (DeadlineExceeded).
const tpccTxnTimeout = 3 * time.Minute

// doTPCC runs one transaction within tpccTxnTimeout.
func doTPCC(op *workload.Op, rng *rand.Rand) (workload.Outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), tpccTxnTimeout)
	defer cancel()
	return op.Do(ctx, rng)
}

// runTPCC runs n transactions of w's mix, weighted, and counts outcomes by
// operation name; it fails the test on any error.
func runTPCC(t *testing.T, rng *rand.Rand, n int, shards ...*workload.Workload) map[string]int {
	t.Helper()
	done := map[string]int{}
	for i := range n {
		ops := shards[i%len(shards)].Ops()
		var total int32
		for _, o := range ops {
			total += o.Spec.Weight
		}
		x := rng.Int32N(total)
		op := ops[0]
		for _, o := range ops {
			if x < o.Spec.Weight {
				op = o
				break
			}
			x -= o.Spec.Weight
		}
		out, err := doTPCC(op, rng)
		if err != nil {
			t.Fatalf("%s (shard %d): %v", op.Spec.Name, i%len(shards), err)
		}
		done[op.Spec.Name]++
		if out.RolledBack {
			done["rolled-back"]++
		}
	}
	return done
}

// runConcurrently runs n transactions of w's mix on each of `workers`
// goroutines, as the engine's closed loop does: against the emulator the
// workload must serialise its transactions, read-only ones included, or
// they fail (FailedPrecondition, NotFound).
func runConcurrently(t *testing.T, w *workload.Workload, workers, n int) {
	t.Helper()
	var g errgroup.Group
	for i := range workers {
		g.Go(func() error {
			rng := rand.New(rand.NewPCG(uint64(i), 99))
			for j := range n {
				op := w.Ops()[j%len(w.Ops())]
				if _, err := doTPCC(op, rng); err != nil {
					return fmt.Errorf("worker %d, %s: %w", i, op.Spec.Name, err)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Errorf("%d concurrent workers of one shard: %v", workers, err)
	}
}

// tpccConditions is how many of TPC-C's twelve consistency conditions a
// check checks: all but the 11th.
const tpccConditions = 11

// tpccCheckTimeout bounds a consistency check, which was unbounded: its
// queries stream, and a streaming call has no default deadline.
const tpccCheckTimeout = 5 * time.Minute

// checkTPCC runs the consistency conditions and returns them by name.
func checkTPCC(t *testing.T, s *session.Session) map[string]workload.TPCCCondition {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), tpccCheckTimeout)
	defer cancel()
	check, err := workload.CheckTPCC(ctx, s.Client)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]workload.TPCCCondition{}
	for _, c := range check.Conditions {
		byName[c.Name] = c
	}
	if len(byName) != tpccConditions {
		t.Fatalf("%d consistency conditions, want %d: %+v", len(byName), tpccConditions, check.Conditions)
	}
	return byName
}

// TestTPCCTransactionsKeepTheDatabaseConsistent loads two Test
// warehouses, runs each transaction alone (both write paths, so that
// Payments and New-Order supply lines for the other warehouse go through
// each; New-Order long enough to roll back), then the standard mix across
// 2 shards, and checks that every consistency condition holds: a rollback
// left no trace.
func TestTPCCTransactionsKeepTheDatabaseConsistent(t *testing.T) {
	for _, d := range dialects {
		t.Run(string(d), func(t *testing.T) {
			s := sessiontest.StartDialect(t, tpccSpec(2), d)
			rng := rand.New(rand.NewPCG(16, 16))
			for _, name := range checkTPCC(t, s) {
				if !name.Passed {
					t.Fatalf("the loaded population fails %s: %s", name.Name, name.Detail)
				}
			}
			for _, typ := range []v1alpha1.OperationType{v1alpha1.OpNewOrder, v1alpha1.OpPayment, v1alpha1.OpOrderStatus, v1alpha1.OpDelivery, v1alpha1.OpStockLevel} {
				for _, path := range []v1alpha1.WritePath{v1alpha1.WriteMutation, v1alpha1.WriteDML} {
					op := v1alpha1.OperationSpec{Type: typ, Weight: 1}
					if typ.HasWritePath() {
						op.WritePath = path
					} else if path == v1alpha1.WriteDML {
						continue
					}
					w, err := s.Workload(tpccSpec(2, op), "tpcc-test", 0, 1)
					if err != nil {
						t.Fatal(err)
					}
					n := 20
					switch {
					case typ == v1alpha1.OpNewOrder && path == v1alpha1.WriteMutation && d == v1alpha1.DialectGoogleSQL:
						// Enough for New-Order's 1 % rollbacks; the
						// rollback is the same Read API call and mutation
						// in both dialects, so one of them proves it.
						n = 300
					case typ == v1alpha1.OpDelivery && path == v1alpha1.WriteDML:
						// Each delivers ten orders with the same four
						// statement kinds, some 130 statements, each a
						// whole-table scan on the emulator (tpccTxnTimeout):
						// five deliver 50 orders, across both warehouses;
						// 20 took some 10 minutes at load average 30.
						n = 5
					}
					got := runTPCC(t, rng, n, w)
					if got[op.Type.DefaultName()] != n {
						t.Errorf("%s alone (%s): ran %v", typ, path, got)
					}
					if n == 300 && got["rolled-back"] == 0 {
						t.Errorf("300 New-Orders and not one rolled back: %v", got)
					}
				}
			}
			mix := tpccSpec(2)
			var shards []*workload.Workload
			for i := range 2 {
				w, err := s.Workload(mix, "tpcc-test", i, 2)
				if err != nil {
					t.Fatal(err)
				}
				shards = append(shards, w)
			}
			got := runTPCC(t, rng, 200, shards...)
			if got["new-order"] == 0 || got["payment"] == 0 {
				t.Errorf("the standard mix ran %v", got)
			}
			runConcurrently(t, shards[0], 4, 25)
			for _, c := range checkTPCC(t, s) {
				if !c.Passed {
					t.Errorf("after the runs, %s fails: %s", c.Name, c.Detail)
				}
			}
		})
	}
}

// TestTPCCRemotePaymentsKeepTheDatabaseConsistent runs the standard mix
// on two Test warehouses, one shard each, until some Payments paid
// customers of the other warehouse (clause 2.5.1.2's 15 %), and checks
// that every condition holds: condition 10 meets those payments, read in
// the paying warehouse's partition, with their customers' balances, read
// in the other's.
func TestTPCCRemotePaymentsKeepTheDatabaseConsistent(t *testing.T) {
	s := sessiontest.Start(t, tpccSpec(2))
	var shards []*workload.Workload
	for i := range 2 {
		w, err := s.Workload(tpccSpec(2), "tpcc-remote", i, 2)
		if err != nil {
			t.Fatal(err)
		}
		shards = append(shards, w)
	}
	runTPCC(t, rand.New(rand.NewPCG(25, 4)), 120, shards...)
	var remote int64
	err := s.Client.Single().Query(context.Background(), spanner.Statement{SQL: "SELECT COUNT(*) FROM history WHERE h_c_w_id != w_id"}).
		Do(func(r *spanner.Row) error { return r.Columns(&remote) })
	if err != nil || remote == 0 {
		t.Fatalf("no payment paid another warehouse's customer (%d, %v): the test checks nothing across partitions", remote, err)
	}
	for _, c := range checkTPCC(t, s) {
		if !c.Passed {
			t.Errorf("after %d payments to other warehouses' customers, %s fails: %s", remote, c.Name, c.Detail)
		}
	}
}

// TestTPCCConsistencyCatchesALostUpdate breaks Payment (it skips D_YTD)
// and expects conditions 1 (W_YTD = sum(D_YTD)) and 9 (D_YTD =
// sum(H_AMOUNT)), and only them, to fail: the lost update breaks both.
func TestTPCCConsistencyCatchesALostUpdate(t *testing.T) {
	s := sessiontest.Start(t, tpccSpec(1))
	w, err := s.Workload(tpccSpec(1, v1alpha1.OperationSpec{Type: v1alpha1.OpPayment, Weight: 1}), "broken", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	w.BreakTPCCPayment()
	runTPCC(t, rand.New(rand.NewPCG(1, 1)), 5, w)
	conds := checkTPCC(t, s)
	broken := map[string]bool{workload.ConditionWarehouseYTD: true, workload.ConditionDistrictHistory: true}
	for name := range broken {
		if c := conds[name]; c.Passed || c.Detail == "" {
			t.Errorf("Payment without D_YTD: %s passed (%+v), want it failed", c.Name, c)
		}
	}
	for name, c := range conds {
		if !broken[name] && !c.Passed {
			t.Errorf("Payment without D_YTD: %s failed too: %s", name, c.Detail)
		}
	}
}

// TestTPCCConsistencyCatchesEachBrokenCondition breaks, one at a time,
// exactly what each of conditions 1 to 10 and 12 guards in a loaded
// database of two warehouses — a payment counted by its warehouse and no
// district, a district's next order id off by one, its
// newest new order gone, a gap in its new orders, an order's line count
// off by one, a delivered order made undelivered without its new-order
// row, an order line moved to another order, a delivered order's line
// undelivered, a payment at a district that does not exist, a payment
// moved between districts, a payment moved between customers, one made at
// the other warehouse that its customer never saw, a customer's
// year-to-date payment off — and expects that condition, and only it, to
// fail with a detail naming where; repaired, all hold again (so each
// failure was the break's, not the data's).
func TestTPCCConsistencyCatchesEachBrokenCondition(t *testing.T) {
	s := sessiontest.Start(t, tpccSpec(2))
	ctx := context.Background()
	dml := func(stmts ...string) {
		t.Helper()
		_, err := s.Client.ReadWriteTransaction(ctx, func(ctx context.Context, txn *spanner.ReadWriteTransaction) error {
			for _, sql := range stmts {
				n, err := txn.Update(ctx, spanner.Statement{SQL: sql})
				if err == nil && n == 0 {
					err = fmt.Errorf("%s changed no row", sql)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%q: %v", stmts, err)
		}
	}
	// A new order of district 1/1 between its lowest and highest, and its
	// highest; order 1 and 2 of every district are delivered (carrier set,
	// lines dated, amounts 0).
	var highest, customer, amount int64
	err := s.Client.Single().Query(ctx, spanner.Statement{SQL: "SELECT o.o_id, o.o_c_id, (SELECT SUM(l.ol_amount) FROM order_line l " +
		"WHERE l.w_id = 1 AND l.d_id = 1 AND l.o_id = o.o_id) FROM orders o WHERE o.w_id = 1 AND o.d_id = 1 ORDER BY o.o_id DESC LIMIT 1"}).
		Do(func(r *spanner.Row) error { return r.Columns(&highest, &customer, &amount) })
	if err != nil {
		t.Fatal(err)
	}
	loaded := "TIMESTAMP '" + tpcc.LoadedAt.Format(time.RFC3339) + "'"
	line := func(o, n int64) string {
		return fmt.Sprintf("INSERT INTO order_line (w_id, d_id, o_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) "+
			"VALUES (1, 1, %d, %d, 1, 1, %s, 5, 0, 'x')", o, n, loaded)
	}
	payment := func(w, h, d, cw int64) string {
		return fmt.Sprintf("INSERT INTO history (w_id, h_id, h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_date, h_amount, h_data) "+
			"VALUES (%d, %d, 1, 1, %d, %d, %s, 100, 'x')", w, h, cw, d, loaded)
	}
	const customerPaid = "UPDATE customer SET c_balance = c_balance - 100, c_ytd_payment = c_ytd_payment + 100 WHERE w_id = 1 AND d_id = 1 AND c_id = 1"
	// deliver is what Delivery writes for the district's newest order,
	// undeliver its reverse.
	deliver := []string{
		fmt.Sprintf("DELETE FROM new_order WHERE w_id = 1 AND d_id = 1 AND o_id = %d", highest),
		fmt.Sprintf("UPDATE orders SET o_carrier_id = 1 WHERE w_id = 1 AND d_id = 1 AND o_id = %d", highest),
		fmt.Sprintf("UPDATE order_line SET ol_delivery_d = %s WHERE w_id = 1 AND d_id = 1 AND o_id = %d", loaded, highest),
		fmt.Sprintf("UPDATE customer SET c_balance = c_balance + %d WHERE w_id = 1 AND d_id = 1 AND c_id = %d", amount, customer)}
	undeliver := []string{
		fmt.Sprintf("INSERT INTO new_order (w_id, d_id, o_id) VALUES (1, 1, %d)", highest),
		fmt.Sprintf("UPDATE orders SET o_carrier_id = NULL WHERE w_id = 1 AND d_id = 1 AND o_id = %d", highest),
		fmt.Sprintf("UPDATE order_line SET ol_delivery_d = NULL WHERE w_id = 1 AND d_id = 1 AND o_id = %d", highest),
		fmt.Sprintf("UPDATE customer SET c_balance = c_balance - %d WHERE w_id = 1 AND d_id = 1 AND c_id = %d", amount, customer)}
	for _, tc := range []struct {
		condition, where string
		// also are the conditions the break fails too, because the
		// schema makes the condition follow from them.
		also         []string
		break_, mend []string
	}{
		{workload.ConditionWarehouseYTD, "warehouse 1", nil, // a payment whose district is none of the warehouse's: W_YTD and the history agree, the districts do not
			[]string{payment(1, 1<<51, 11, 1), customerPaid, "UPDATE warehouse SET w_ytd = w_ytd + 100 WHERE w_id = 1"},
			[]string{"UPDATE district SET d_ytd = d_ytd + 100 WHERE w_id = 1 AND d_id = 1",
				"UPDATE history SET h_d_id = 1 WHERE w_id = 1 AND h_id = " + strconv.FormatInt(1<<51, 10)}},
		{workload.ConditionNextOrder, "district 1/1", nil,
			[]string{"UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE w_id = 1 AND d_id = 1"},
			[]string{"UPDATE district SET d_next_o_id = d_next_o_id - 1 WHERE w_id = 1 AND d_id = 1"}},
		{workload.ConditionNextOrder, "district 1/1", nil, // the newest order delivered first: max(NO_O_ID) < max(O_ID)
			deliver, undeliver},
		{workload.ConditionNewOrders, "district 1/1", nil, // order 1 undelivered again: a gap below the oldest new order
			[]string{"INSERT INTO new_order (w_id, d_id, o_id) VALUES (1, 1, 1)",
				"UPDATE orders SET o_carrier_id = NULL WHERE w_id = 1 AND d_id = 1 AND o_id = 1",
				"UPDATE order_line SET ol_delivery_d = NULL WHERE w_id = 1 AND d_id = 1 AND o_id = 1"},
			[]string{"DELETE FROM new_order WHERE w_id = 1 AND d_id = 1 AND o_id = 1",
				"UPDATE orders SET o_carrier_id = 1 WHERE w_id = 1 AND d_id = 1 AND o_id = 1",
				"UPDATE order_line SET ol_delivery_d = " + loaded + " WHERE w_id = 1 AND d_id = 1 AND o_id = 1"}},
		// An order line is its order's child (interleaved): a district's
		// sum is off only with an order's count.
		{workload.ConditionOrderLines, "district 1/1", []string{workload.ConditionOrderLineCount},
			[]string{"UPDATE orders SET o_ol_cnt = o_ol_cnt + 1 WHERE w_id = 1 AND d_id = 1 AND o_id = 1"},
			[]string{"UPDATE orders SET o_ol_cnt = o_ol_cnt - 1 WHERE w_id = 1 AND d_id = 1 AND o_id = 1"}},
		{workload.ConditionCarrier, "order 1/1/1", nil, // undelivered, lines too, but no new-order row
			[]string{"UPDATE orders SET o_carrier_id = NULL WHERE w_id = 1 AND d_id = 1 AND o_id = 1",
				"UPDATE order_line SET ol_delivery_d = NULL WHERE w_id = 1 AND d_id = 1 AND o_id = 1"},
			[]string{"UPDATE orders SET o_carrier_id = 1 WHERE w_id = 1 AND d_id = 1 AND o_id = 1",
				"UPDATE order_line SET ol_delivery_d = " + loaded + " WHERE w_id = 1 AND d_id = 1 AND o_id = 1"}},
		{workload.ConditionOrderLineCount, "order 1/1/1", nil, // a line moved from order 1 to order 2: the district's sum holds
			[]string{"DELETE FROM order_line WHERE w_id = 1 AND d_id = 1 AND o_id = 1 AND ol_number = 1", line(2, 100)},
			[]string{"DELETE FROM order_line WHERE w_id = 1 AND d_id = 1 AND o_id = 2 AND ol_number = 100", line(1, 1)}},
		{workload.ConditionDeliveryDate, "order 1/1/1", nil,
			[]string{"UPDATE order_line SET ol_delivery_d = NULL WHERE w_id = 1 AND d_id = 1 AND o_id = 1 AND ol_number = 1"},
			[]string{"UPDATE order_line SET ol_delivery_d = " + loaded + " WHERE w_id = 1 AND d_id = 1 AND o_id = 1 AND ol_number = 1"}},
		{workload.ConditionWarehouseHistory, "warehouse 1", nil, // paid at district 11, which no row has: only the warehouse's sum sees it
			[]string{payment(1, 1<<50, 11, 1), customerPaid},
			[]string{"UPDATE warehouse SET w_ytd = w_ytd + 100 WHERE w_id = 1", "UPDATE district SET d_ytd = d_ytd + 100 WHERE w_id = 1 AND d_id = 1",
				"UPDATE history SET h_d_id = 1 WHERE w_id = 1 AND h_id = " + strconv.FormatInt(1<<50, 10)}},
		{workload.ConditionDistrictHistory, "district 1/1", nil, // 1.00 of district 2's year moved to district 1
			[]string{"UPDATE district SET d_ytd = d_ytd + 100 WHERE w_id = 1 AND d_id = 1", "UPDATE district SET d_ytd = d_ytd - 100 WHERE w_id = 1 AND d_id = 2"},
			[]string{"UPDATE district SET d_ytd = d_ytd - 100 WHERE w_id = 1 AND d_id = 1", "UPDATE district SET d_ytd = d_ytd + 100 WHERE w_id = 1 AND d_id = 2"}},
		{workload.ConditionCustomerBalance, "customer 1/1/1", nil, // a payment recorded for customer 2 moved to customer 1
			[]string{"UPDATE history SET h_amount = h_amount + 100 WHERE w_id = 1 AND h_id = 1", "UPDATE history SET h_amount = h_amount - 100 WHERE w_id = 1 AND h_id = 2"},
			[]string{"UPDATE history SET h_amount = h_amount - 100 WHERE w_id = 1 AND h_id = 1", "UPDATE history SET h_amount = h_amount + 100 WHERE w_id = 1 AND h_id = 2"}},
		{workload.ConditionCustomerBalance, "customer 1/1/1", nil, // paid at warehouse 2, which another partition reads; its customer never saw it
			[]string{payment(2, 1<<50, 1, 1), "UPDATE warehouse SET w_ytd = w_ytd + 100 WHERE w_id = 2", "UPDATE district SET d_ytd = d_ytd + 100 WHERE w_id = 2 AND d_id = 1"},
			[]string{customerPaid}},
		{workload.ConditionCustomerPayments, "customer 1/1/1", nil,
			[]string{"UPDATE customer SET c_ytd_payment = c_ytd_payment + 100 WHERE w_id = 1 AND d_id = 1 AND c_id = 1"},
			[]string{"UPDATE customer SET c_ytd_payment = c_ytd_payment - 100 WHERE w_id = 1 AND d_id = 1 AND c_id = 1"}},
	} {
		dml(tc.break_...)
		for name, c := range checkTPCC(t, s) {
			switch {
			case name == tc.condition && (c.Passed || !strings.Contains(c.Detail, tc.where)):
				t.Errorf("after %q: %s passed or does not name %s: %+v", tc.break_, name, tc.where, c)
			case slices.Contains(tc.also, name) && c.Passed:
				t.Errorf("after %q: %s passed; it follows from %s, which failed", tc.break_, name, tc.condition)
			case name != tc.condition && !slices.Contains(tc.also, name) && !c.Passed:
				t.Errorf("after %q, which breaks only %s: %s failed too: %s", tc.break_, tc.condition, name, c.Detail)
			}
		}
		dml(tc.mend...)
		for name, c := range checkTPCC(t, s) {
			if !c.Passed {
				t.Fatalf("after mending %q: %s still fails: %s", tc.break_, name, c.Detail)
			}
		}
	}
}

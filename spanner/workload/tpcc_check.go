package workload

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"cloud.google.com/go/spanner"
	"golang.org/x/sync/errgroup"

	"github.com/spanbench/spanbench/spanner/workload/tpcc"
)

// TPCC consistency conditions (TPC-C clause 3.3.2), by the name results
// record. Condition 11 (count(ORDER) - count(NEW-ORDER) = 2,100 per
// district) is not checked: it holds for the loaded population only, since
// every Delivery removes a new-order row and no order (docs/workloads.md).
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
	// lines) per district.
	ConditionOrderLines = "sum(O_OL_CNT) = count(OL)"
	// ConditionCarrier is condition 5: an order's O_CARRIER_ID is null if
	// and only if it has a new-order row (a new-order row without its
	// order fails it too).
	ConditionCarrier = "O_CARRIER_ID null = NEW-ORDER row exists"
	// ConditionOrderLineCount is condition 6: each order's O_OL_CNT is the
	// count of its order lines.
	ConditionOrderLineCount = "O_OL_CNT = count(OL) per order"
	// ConditionDeliveryDate is condition 7: an order line's OL_DELIVERY_D
	// is null if and only if its order's O_CARRIER_ID is.
	ConditionDeliveryDate = "OL_DELIVERY_D null = O_CARRIER_ID null"
	// ConditionWarehouseHistory is condition 8: W_YTD = sum(H_AMOUNT) of
	// the warehouse's history rows.
	ConditionWarehouseHistory = "W_YTD = sum(H_AMOUNT)"
	// ConditionDistrictHistory is condition 9: D_YTD = sum(H_AMOUNT) of
	// the district's history rows.
	ConditionDistrictHistory = "D_YTD = sum(H_AMOUNT)"
	// ConditionCustomerBalance is condition 10: a customer's C_BALANCE is
	// the sum of its delivered order lines' OL_AMOUNT less the sum of its
	// history rows' H_AMOUNT (paid at any warehouse).
	ConditionCustomerBalance = "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)"
	// ConditionCustomerPayments is condition 12: a customer's C_BALANCE +
	// C_YTD_PAYMENT is the sum of its delivered order lines' OL_AMOUNT.
	ConditionCustomerPayments = "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)"
)

// The conditions' places in a check, in the specification's order.
const (
	condWarehouseYTD = iota
	condNextOrder
	condNewOrders
	condOrderLines
	condCarrier
	condOrderLineCount
	condDeliveryDate
	condWarehouseHistory
	condDistrictHistory
	condCustomerBalance
	condCustomerPayments
	numConditions
)

var conditionNames = [numConditions]string{ConditionWarehouseYTD, ConditionNextOrder, ConditionNewOrders, ConditionOrderLines,
	ConditionCarrier, ConditionOrderLineCount, ConditionDeliveryDate, ConditionWarehouseHistory, ConditionDistrictHistory,
	ConditionCustomerBalance, ConditionCustomerPayments}

// TPCCCondition is the outcome of one consistency condition over the
// whole database.
type TPCCCondition struct {
	// Name is the condition (Condition* constants).
	Name string
	// Passed is true when it held everywhere.
	Passed bool
	// Detail names the first places it failed, empty when it passed.
	Detail string
}

// TPCCCheck is what a consistency check found and read.
type TPCCCheck struct {
	// Conditions are the conditions' outcomes, in the specification's
	// order.
	Conditions []TPCCCondition
	// Warehouses is the number of warehouses (partitions) checked.
	Warehouses int
	// Rows is the number of rows read.
	Rows int64
}

// checkParallel is how many warehouses a check reads at once.
const checkParallel = 8

// CheckTPCC checks the TPC-C consistency conditions 1 to 10 and 12,
// partitioned by warehouse: it reads the warehouse table strongly, and
// every warehouse's rows (each table's key prefix, through the Read API:
// no query plan, no full scan per partition) at that read's timestamp, so
// that all partitions see one snapshot, checkParallel at a time. Memory
// follows the warehouses read at once, plus one entry per customer paid
// from another warehouse (condition 10 meets those payments across
// partitions). The snapshot must stay readable until the last partition
// is read: within the database's version retention period (one hour by
// default).
func CheckTPCC(ctx context.Context, c *spanner.Client) (TPCCCheck, error) {
	type warehouseRow struct{ id, ytd int64 }
	var warehouses []warehouseRow
	first := c.Single()
	err := first.Read(ctx, tpcc.TableWarehouse, spanner.AllKeys(), []string{"w_id", "w_ytd"}).Do(func(r *spanner.Row) error {
		var id, ytd spanner.NullInt64
		err := r.Columns(&id, &ytd)
		warehouses = append(warehouses, warehouseRow{id.Int64, ytd.Int64})
		return err
	})
	if err != nil {
		return TPCCCheck{}, fmt.Errorf("consistency check: reading the warehouses: %w", err)
	}
	ts, err := first.Timestamp()
	if err != nil {
		return TPCCCheck{}, fmt.Errorf("consistency check: the warehouses' read timestamp: %w", err)
	}
	ch := &tpccChecker{c: c, at: spanner.ReadTimestamp(ts), pending: map[[3]int64]int64{}, remote: map[[3]int64]int64{}}
	ch.rows.Store(int64(len(warehouses)))
	parts := make([]*[numConditions]failures, len(warehouses))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(checkParallel)
	for i, w := range warehouses {
		g.Go(func() error {
			f, err := ch.warehouse(gctx, w.id, w.ytd)
			parts[i] = f
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return TPCCCheck{}, err
	}
	var all [numConditions]failures
	for _, p := range parts {
		for i := range all {
			all[i].merge(&p[i])
		}
	}
	ch.customerBalances(&all[condCustomerBalance])
	out := TPCCCheck{Warehouses: len(warehouses), Rows: ch.rows.Load()}
	for i := range all {
		all[i].name = conditionNames[i]
		out.Conditions = append(out.Conditions, all[i].result())
	}
	return out, nil
}

// tpccChecker is one check's snapshot and what its partitions share:
// condition 10's customers whose balance their own warehouse's history
// does not explain (pending: C_BALANCE - delivered + local payments, by
// customer), and the payments made to customers from other warehouses
// (remote: their sum, by customer).
type tpccChecker struct {
	c    *spanner.Client
	at   spanner.TimestampBound
	rows atomic.Int64

	mu              sync.Mutex
	pending, remote map[[3]int64]int64
}

// read reads every row of table under warehouse w at the snapshot.
func (ch *tpccChecker) read(ctx context.Context, w int64, table string, cols []string, each func(r *spanner.Row) error) error {
	var n int64
	err := ch.c.Single().WithTimestampBound(ch.at).Read(ctx, table, spanner.KeySets(prefix(w)), cols).Do(func(r *spanner.Row) error {
		n++
		return each(r)
	})
	ch.rows.Add(n)
	if err != nil {
		return fmt.Errorf("consistency check: reading warehouse %d's %s: %w", w, table, err)
	}
	return nil
}

// checkedWarehouse is what one warehouse's conditions compare.
type checkedWarehouse struct {
	w, ytd    int64
	districts map[int64]*checkedDistrict
	// customers are by (district, customer); paid sums the history rows
	// of this warehouse's customers paid here, remote those of other
	// warehouses' customers, by (warehouse, district, customer); history
	// sums every history row here.
	customers map[[2]int64]checkedCustomer
	paid      map[[2]int64]int64
	remote    map[[3]int64]int64
	history   int64
}

// checkedDistrict is what the district-wide conditions compare.
type checkedDistrict struct {
	exists                                 bool
	ytd, next, maxO, olCnt, lines, history int64
	countNO, minNO, maxNO                  int64
	orders                                 map[int64]*checkedOrder
	// Rows whose order is missing: new-order rows, and the orders of
	// order lines (interleaving forbids those; counted should they be).
	orphanNewOrders, orphanLines []int64
}

// checkedOrder is what the order-wide conditions compare.
type checkedOrder struct {
	customer, olCnt, lines, delivered, deliveredAmount int64
	carrierNull, newOrder                              bool
}

// checkedCustomer is what the customer-wide conditions compare.
type checkedCustomer struct{ balance, ytd int64 }

func (cw *checkedWarehouse) district(d int64) *checkedDistrict {
	if cw.districts[d] == nil {
		cw.districts[d] = &checkedDistrict{orders: map[int64]*checkedOrder{}}
	}
	return cw.districts[d]
}

// ints reads a row's INT64 columns, NULL as 0.
func ints(r *spanner.Row, dst ...*int64) error {
	v := make([]spanner.NullInt64, len(dst))
	ptrs := make([]any, len(v))
	for i := range v {
		ptrs[i] = &v[i]
	}
	if err := r.Columns(ptrs...); err != nil {
		return err
	}
	for i, n := range v {
		*dst[i] = n.Int64
	}
	return nil
}

// warehouse checks warehouse w (W_YTD ytd) and returns where each
// condition failed; condition 10 is completed by customerBalances.
func (ch *tpccChecker) warehouse(ctx context.Context, w, ytd int64) (*[numConditions]failures, error) {
	cw := &checkedWarehouse{w: w, ytd: ytd, districts: map[int64]*checkedDistrict{}, customers: map[[2]int64]checkedCustomer{},
		paid: map[[2]int64]int64{}, remote: map[[3]int64]int64{}}
	for _, read := range []func(context.Context, *checkedWarehouse) error{ch.readDistricts, ch.readOrders, ch.readNewOrders, ch.readOrderLines,
		ch.readCustomers, ch.readHistory} {
		if err := read(ctx, cw); err != nil {
			return nil, err
		}
	}
	var f [numConditions]failures
	cw.districtConditions(&f)
	pending := cw.customerConditions(&f)
	ch.mu.Lock()
	defer ch.mu.Unlock()
	for k, r := range pending {
		ch.pending[k] += r
	}
	for k, amount := range cw.remote {
		ch.remote[k] += amount
	}
	return &f, nil
}

func (ch *tpccChecker) readDistricts(ctx context.Context, cw *checkedWarehouse) error {
	return ch.read(ctx, cw.w, tpcc.TableDistrict, []string{"d_id", "d_ytd", "d_next_o_id"}, func(r *spanner.Row) error {
		var d, ytd, next int64
		err := ints(r, &d, &ytd, &next)
		dd := cw.district(d)
		dd.exists, dd.ytd, dd.next = true, ytd, next
		return err
	})
}

func (ch *tpccChecker) readOrders(ctx context.Context, cw *checkedWarehouse) error {
	return ch.read(ctx, cw.w, tpcc.TableOrders, []string{"d_id", "o_id", "o_c_id", "o_carrier_id", "o_ol_cnt"}, func(r *spanner.Row) error {
		var d, o, c, carrier, olCnt spanner.NullInt64
		if err := r.Columns(&d, &o, &c, &carrier, &olCnt); err != nil {
			return err
		}
		dd := cw.district(d.Int64)
		dd.maxO, dd.olCnt = max(dd.maxO, o.Int64), dd.olCnt+olCnt.Int64
		dd.orders[o.Int64] = &checkedOrder{customer: c.Int64, olCnt: olCnt.Int64, carrierNull: !carrier.Valid}
		return nil
	})
}

func (ch *tpccChecker) readNewOrders(ctx context.Context, cw *checkedWarehouse) error {
	return ch.read(ctx, cw.w, tpcc.TableNewOrder, []string{"d_id", "o_id"}, func(r *spanner.Row) error {
		var d, o int64
		err := ints(r, &d, &o)
		dd := cw.district(d)
		if dd.countNO == 0 || o < dd.minNO {
			dd.minNO = o
		}
		dd.countNO, dd.maxNO = dd.countNO+1, max(dd.maxNO, o)
		if ord := dd.orders[o]; ord != nil {
			ord.newOrder = true
		} else {
			dd.orphanNewOrders = append(dd.orphanNewOrders, o)
		}
		return err
	})
}

func (ch *tpccChecker) readOrderLines(ctx context.Context, cw *checkedWarehouse) error {
	return ch.read(ctx, cw.w, tpcc.TableOrderLine, []string{"d_id", "o_id", "ol_delivery_d", "ol_amount"}, func(r *spanner.Row) error {
		var d, o, amount spanner.NullInt64
		var deliveredAt spanner.NullTime
		if err := r.Columns(&d, &o, &deliveredAt, &amount); err != nil {
			return err
		}
		dd := cw.district(d.Int64)
		dd.lines++
		ord := dd.orders[o.Int64]
		if ord == nil {
			dd.orphanLines = append(dd.orphanLines, o.Int64)
			return nil
		}
		ord.lines++
		if deliveredAt.Valid {
			ord.delivered++
			ord.deliveredAmount += amount.Int64
		}
		return nil
	})
}

func (ch *tpccChecker) readCustomers(ctx context.Context, cw *checkedWarehouse) error {
	return ch.read(ctx, cw.w, tpcc.TableCustomer, []string{"d_id", "c_id", "c_balance", "c_ytd_payment"}, func(r *spanner.Row) error {
		var d, c, balance, ytd int64
		err := ints(r, &d, &c, &balance, &ytd)
		cw.customers[[2]int64{d, c}] = checkedCustomer{balance, ytd}
		return err
	})
}

func (ch *tpccChecker) readHistory(ctx context.Context, cw *checkedWarehouse) error {
	return ch.read(ctx, cw.w, tpcc.TableHistory, []string{"h_d_id", "h_c_w_id", "h_c_d_id", "h_c_id", "h_amount"}, func(r *spanner.Row) error {
		var d, w, cd, c, amount int64
		err := ints(r, &d, &w, &cd, &c, &amount)
		cw.history += amount
		cw.district(d).history += amount
		if w == cw.w {
			cw.paid[[2]int64{cd, c}] += amount
		} else {
			cw.remote[[3]int64{w, cd, c}] += amount
		}
		return err
	})
}

// districtConditions checks conditions 1 to 9: the warehouse's, its
// districts' and its orders'.
func (cw *checkedWarehouse) districtConditions(f *[numConditions]failures) {
	w := cw.w
	var sumYTD int64
	for _, d := range sortedKeys(cw.districts) {
		dd := cw.districts[d]
		if !dd.exists {
			// Only history rows name it: condition 9 is per district
			// row; condition 8 counts their amounts.
			continue
		}
		sumYTD += dd.ytd
		f[condNextOrder].check(dd.next-1 == dd.maxO && (dd.countNO == 0 || dd.maxNO == dd.maxO),
			"district %d/%d: D_NEXT_O_ID %d, max(O_ID) %d, max(NO_O_ID) %d", w, d, dd.next, dd.maxO, dd.maxNO)
		f[condNewOrders].check(dd.countNO == 0 || dd.countNO == dd.maxNO-dd.minNO+1, "district %d/%d: %d new orders from %d to %d", w, d, dd.countNO, dd.minNO, dd.maxNO)
		f[condOrderLines].check(dd.olCnt == dd.lines, "district %d/%d: sum(O_OL_CNT) %d, %d order lines", w, d, dd.olCnt, dd.lines)
		f[condDistrictHistory].check(dd.ytd == dd.history, "district %d/%d: D_YTD %d, sum(H_AMOUNT) %d", w, d, dd.ytd, dd.history)
		dd.orderConditions(f, w, d)
	}
	f[condWarehouseYTD].check(cw.ytd == sumYTD, "warehouse %d: W_YTD %d, sum(D_YTD) %d", w, cw.ytd, sumYTD)
	f[condWarehouseHistory].check(cw.ytd == cw.history, "warehouse %d: W_YTD %d, sum(H_AMOUNT) %d", w, cw.ytd, cw.history)
}

// orderConditions checks conditions 5 to 7 on district (w, d)'s orders.
func (dd *checkedDistrict) orderConditions(f *[numConditions]failures, w, d int64) {
	for _, o := range dd.orphanNewOrders {
		f[condCarrier].check(false, "order %d/%d/%d: a new-order row without its order", w, d, o)
	}
	for _, o := range dd.orphanLines {
		f[condOrderLineCount].check(false, "order %d/%d/%d: an order line without its order", w, d, o)
	}
	for _, o := range sortedKeys(dd.orders) {
		ord := dd.orders[o]
		f[condCarrier].check(ord.carrierNull == ord.newOrder, "order %d/%d/%d: O_CARRIER_ID null %t, new-order row %t", w, d, o, ord.carrierNull, ord.newOrder)
		f[condOrderLineCount].check(ord.olCnt == ord.lines, "order %d/%d/%d: O_OL_CNT %d, %d order lines", w, d, o, ord.olCnt, ord.lines)
		wrong := ord.delivered // lines delivered of an undelivered order
		if !ord.carrierNull {
			wrong = ord.lines - ord.delivered
		}
		f[condDeliveryDate].check(wrong == 0, "order %d/%d/%d: O_CARRIER_ID null %t, %d of its %d order lines have OL_DELIVERY_D", w, d, o, ord.carrierNull, ord.delivered, ord.lines)
	}
}

// customerConditions checks condition 12, which is the customer's own,
// and returns condition 10's customers whose balance this warehouse's
// history does not explain: they wait for the payments made at other
// warehouses.
func (cw *checkedWarehouse) customerConditions(f *[numConditions]failures) map[[3]int64]int64 {
	delivered := map[[2]int64]int64{}
	for d, dd := range cw.districts {
		for _, ord := range dd.orders {
			delivered[[2]int64{d, ord.customer}] += ord.deliveredAmount
		}
	}
	pending := map[[3]int64]int64{}
	for _, k := range sortedPairs(cw.customers) {
		cu := cw.customers[k]
		f[condCustomerPayments].check(cu.balance+cu.ytd == delivered[k], "customer %d/%d/%d: C_BALANCE %d + C_YTD_PAYMENT %d, sum(delivered OL_AMOUNT) %d",
			cw.w, k[0], k[1], cu.balance, cu.ytd, delivered[k])
		if r := cu.balance - delivered[k] + cw.paid[k]; r != 0 {
			pending[[3]int64{cw.w, k[0], k[1]}] = r
		}
	}
	for _, k := range sortedPairs(cw.paid) {
		if _, ok := cw.customers[k]; !ok {
			f[condCustomerBalance].check(false, "customer %d/%d/%d: history rows of a customer that does not exist", cw.w, k[0], k[1])
		}
	}
	return pending
}

// customerBalances completes condition 10 once every warehouse is read:
// a customer's balance that its own warehouse's history left unexplained
// must be what the other warehouses' history rows paid it.
func (ch *tpccChecker) customerBalances(f *failures) {
	keys := map[[3]int64]bool{}
	for k := range ch.pending {
		keys[k] = true
	}
	for k := range ch.remote {
		keys[k] = true
	}
	sorted := make([][3]int64, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.SortFunc(sorted, func(a, b [3]int64) int { return slices.Compare(a[:], b[:]) })
	for _, k := range sorted {
		f.check(ch.pending[k]+ch.remote[k] == 0, "customer %d/%d/%d: C_BALANCE off by %d from its delivered order lines less its payments", k[0], k[1], k[2], ch.pending[k]+ch.remote[k])
	}
}

func sortedKeys[V any](m map[int64]V) []int64 {
	keys := make([]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sortedPairs[V any](m map[[2]int64]V) [][2]int64 {
	keys := make([][2]int64, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int64) int { return slices.Compare(a[:], b[:]) })
	return keys
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

// merge adds o's failures after f's.
func (f *failures) merge(o *failures) {
	f.failed += o.failed
	for _, s := range o.first {
		if len(f.first) < 3 {
			f.first = append(f.first, s)
		}
	}
}

func (f *failures) result() TPCCCondition {
	if f.failed == 0 {
		return TPCCCondition{Name: f.name, Passed: true}
	}
	return TPCCCondition{Name: f.name, Detail: fmt.Sprintf("failed in %d places: %s", f.failed, strings.Join(f.first, "; "))}
}

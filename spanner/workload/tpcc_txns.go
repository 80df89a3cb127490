package workload

import (
	"context"
	"errors"
	"math/rand/v2"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/workload/tpcc"
)

// orderLine is one line New-Order asks for.
type orderLine struct {
	item, supply, quantity int64
}

// newOrder is TPC-C's New-Order (clause 2.4.2) in one read-write
// transaction: 5 to 15 distinct items, 1 % of them from a remote
// warehouse; 1 % of orders name an unused item last and roll back.
func (t *tpccTxn) newOrder(ctx context.Context, rng *rand.Rand) (Outcome, error) {
	p := &t.run.pick
	w, d, c := p.HomeWarehouse(rng), p.District(rng), p.CustomerID(rng)
	lines := make([]orderLine, tpcc.NewOrderLines(rng))
	seen := map[int64]bool{}
	allLocal := true
	for i := range lines {
		item := p.ItemID(rng)
		for seen[item] {
			item = p.ItemID(rng)
		}
		seen[item] = true
		lines[i] = orderLine{item: item, supply: p.SupplyWarehouse(rng, w), quantity: tpcc.Uniform(rng, 1, 10)}
		allLocal = allLocal && lines[i].supply == w
	}
	if tpcc.RollsBack(rng) {
		lines[len(lines)-1].item = p.UnusedItemID()
	}
	out, err := t.ex.readWriteTxn(ctx, func(ctx context.Context, txn *spanner.ReadWriteTransaction) (int64, error) {
		return t.newOrderIn(ctx, txn, w, d, c, lines, allLocal)
	})
	if errors.Is(err, errRollback) {
		return Outcome{RolledBack: true, Retries: out.Retries}, nil
	}
	return out, err
}

func (t *tpccTxn) newOrderIn(ctx context.Context, txn *spanner.ReadWriteTransaction, w, d, c int64, lines []orderLine, allLocal bool) (int64, error) {
	var wTax, dTax, next, discount int64
	var last, credit string
	if err := t.readRow(ctx, txn, tpcc.TableWarehouse, spanner.Key{w}, []string{"w_tax"}, &wTax); err != nil {
		return 0, err
	}
	if err := t.readRow(ctx, txn, tpcc.TableDistrict, spanner.Key{w, d}, []string{"d_tax", "d_next_o_id"}, &dTax, &next); err != nil {
		return 0, err
	}
	if err := t.readRow(ctx, txn, tpcc.TableCustomer, spanner.Key{w, d, c}, []string{"c_discount", "c_last", "c_credit"}, &discount, &last, &credit); err != nil {
		return 0, err
	}
	prices, err := t.itemPrices(ctx, txn, lines)
	if err != nil {
		return 0, err
	}
	stocks, err := t.stocks(ctx, txn, lines, d)
	if err != nil {
		return 0, err
	}
	wr := t.writer()
	now := t.run.now()
	wr.update(tpcc.TableDistrict, keyDistrict, []string{"d_next_o_id"}, w, d, next+1)
	wr.insert(tpcc.TableOrders, tpcc.Columns[tpcc.TableOrders], w, d, next, c, now, nil, int64(len(lines)), allLocal)
	wr.insert(tpcc.TableNewOrder, keyOrder, w, d, next)
	for i, l := range lines {
		s := stocks[[2]int64{l.supply, l.item}]
		quantity := s.quantity - l.quantity
		if quantity < 10 {
			quantity += 91
		}
		remote := s.remote
		if l.supply != w {
			remote++
		}
		wr.update(tpcc.TableStock, keyStock, []string{"s_quantity", "s_ytd", "s_order_cnt", "s_remote_cnt"},
			l.supply, l.item, quantity, s.ytd+l.quantity, s.orders+1, remote)
		wr.insert(tpcc.TableOrderLine, tpcc.Columns[tpcc.TableOrderLine], w, d, next, int64(i+1), l.item, l.supply, nil,
			l.quantity, l.quantity*prices[l.item], s.distInfo)
	}
	return int64(3 + 2*len(lines)), wr.flush(ctx, txn, t.queryOpts())
}

// itemPrices reads the lines' items; an item that does not exist rolls
// the order back.
func (t *tpccTxn) itemPrices(ctx context.Context, txn *spanner.ReadWriteTransaction, lines []orderLine) (map[int64]int64, error) {
	keys := make([]spanner.Key, len(lines))
	for i, l := range lines {
		keys[i] = spanner.Key{l.item}
	}
	prices := map[int64]int64{}
	err := t.readRange(ctx, txn, tpcc.TableItem, "", spanner.KeySetFromKeys(keys...), []string{"i_id", "i_price"}, 0, func(r *spanner.Row) error {
		var id, price int64
		if err := r.Columns(&id, &price); err != nil {
			return err
		}
		prices[id] = price
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(prices) < len(lines) {
		return nil, errRollback
	}
	return prices, nil
}

// stockRow is what New-Order reads of a stock row.
type stockRow struct {
	quantity, ytd, orders, remote int64
	distInfo                      string
}

// stocks reads the lines' stock rows, with the district's S_DIST_xx.
func (t *tpccTxn) stocks(ctx context.Context, txn *spanner.ReadWriteTransaction, lines []orderLine, d int64) (map[[2]int64]stockRow, error) {
	keys := make([]spanner.Key, len(lines))
	for i, l := range lines {
		keys[i] = spanner.Key{l.supply, l.item}
	}
	dist := tpcc.Columns[tpcc.TableStock][2+d]
	out := map[[2]int64]stockRow{}
	err := t.readRange(ctx, txn, tpcc.TableStock, "", spanner.KeySetFromKeys(keys...),
		[]string{"w_id", "s_i_id", "s_quantity", "s_ytd", "s_order_cnt", "s_remote_cnt", dist}, 0, func(r *spanner.Row) error {
			var w, i int64
			var s stockRow
			if err := r.Columns(&w, &i, &s.quantity, &s.ytd, &s.orders, &s.remote, &s.distInfo); err != nil {
				return err
			}
			out[[2]int64{w, i}] = s
			return nil
		})
	if err == nil && len(out) < len(lines) {
		err = errors.New("tpcc: a stock row of an existing item is missing")
	}
	return out, err
}

// payment is TPC-C's Payment (clause 2.5.2): 15 % of customers belong to
// a remote warehouse, 60 % are looked up by last name.
func (t *tpccTxn) payment(ctx context.Context, rng *rand.Rand) (Outcome, error) {
	p := &t.run.pick
	w, d := p.HomeWarehouse(rng), p.District(rng)
	cw, cd := p.PaymentCustomer(rng, w, d)
	var last string
	var c int64
	if tpcc.ByLastName(rng) {
		last = p.LastName(rng)
	} else {
		c = p.CustomerID(rng)
	}
	amount := tpcc.Uniform(rng, 100, 500_000)
	hid := 1<<40 + rng.Int64N(1<<62)
	return t.ex.readWriteTxn(ctx, func(ctx context.Context, txn *spanner.ReadWriteTransaction) (int64, error) {
		return t.paymentIn(ctx, txn, w, d, cw, cd, c, last, amount, hid)
	})
}

func (t *tpccTxn) paymentIn(ctx context.Context, txn *spanner.ReadWriteTransaction, w, d, cw, cd, c int64, last string, amount, hid int64) (int64, error) {
	var wName, dName string
	var wYTD, dYTD int64
	if err := t.readRow(ctx, txn, tpcc.TableWarehouse, spanner.Key{w}, []string{"w_name", "w_ytd"}, &wName, &wYTD); err != nil {
		return 0, err
	}
	if err := t.readRow(ctx, txn, tpcc.TableDistrict, spanner.Key{w, d}, []string{"d_name", "d_ytd"}, &dName, &dYTD); err != nil {
		return 0, err
	}
	if last != "" {
		var err error
		if c, err = t.customerByName(ctx, txn, cw, cd, last); err != nil {
			return 0, err
		}
	}
	var balance, ytd, count int64
	var credit, data string
	if err := t.readRow(ctx, txn, tpcc.TableCustomer, spanner.Key{cw, cd, c}, []string{"c_balance", "c_ytd_payment", "c_payment_cnt", "c_credit", "c_data"},
		&balance, &ytd, &count, &credit, &data); err != nil {
		return 0, err
	}
	wr := t.writer()
	wr.update(tpcc.TableWarehouse, keyWarehouse, []string{"w_ytd"}, w, wYTD+amount)
	if !t.run.breakPayment {
		wr.update(tpcc.TableDistrict, keyDistrict, []string{"d_ytd"}, w, d, dYTD+amount)
	}
	cols, vals := []string{"c_balance", "c_ytd_payment", "c_payment_cnt"}, []any{cw, cd, c, balance - amount, ytd + amount, count + 1}
	if credit == "BC" {
		data = paymentData(c, cd, cw, d, w, amount, data)
		cols, vals = append(cols, "c_data"), append(vals, data)
	}
	wr.update(tpcc.TableCustomer, keyCustomer, cols, vals...)
	wr.insert(tpcc.TableHistory, tpcc.Columns[tpcc.TableHistory], w, hid, c, cd, cw, d, t.run.now(), amount, truncate(wName+"    "+dName, 24))
	return 4, wr.flush(ctx, txn, t.queryOpts())
}

// paymentData is a bad-credit customer's new C_DATA: the payment's ids and
// amount in front, the whole cut to 500 characters.
func paymentData(c, cd, cw, d, w, amount int64, data string) string {
	return truncate(formatInts(c, cd, cw, d, w, amount)+data, 500)
}

// customerByName is the customer of that last name in the middle of
// those of the district, by first name (clause 2.5.2.2).
func (t *tpccTxn) customerByName(ctx context.Context, r tpccReader, w, d int64, last string) (int64, error) {
	var ids []int64
	err := t.readRange(ctx, r, tpcc.TableCustomer, "customer_by_last", spanner.KeySets(prefix(w, d, last)), []string{"c_id"}, 0, func(row *spanner.Row) error {
		var id int64
		if err := row.Columns(&id); err != nil {
			return err
		}
		ids = append(ids, id)
		return nil
	})
	if err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, errors.New("tpcc: no customer has the last name " + last)
	}
	return ids[(len(ids)+1)/2-1], nil
}

// orderStatus is TPC-C's Order-Status (clause 2.6.2) in one read-only
// transaction at the operation's staleness.
func (t *tpccTxn) orderStatus(ctx context.Context, rng *rand.Rand) (Outcome, error) {
	p := &t.run.pick
	w, d := p.HomeWarehouse(rng), p.District(rng)
	var last string
	var c int64
	if tpcc.ByLastName(rng) {
		last = p.LastName(rng)
	} else {
		c = p.CustomerID(rng)
	}
	return t.ex.readOnlyTxn(ctx, func(ctx context.Context, txn *spanner.ReadOnlyTransaction) (int64, error) {
		if last != "" {
			var err error
			if c, err = t.customerByName(ctx, txn, w, d, last); err != nil {
				return 0, err
			}
		}
		var balance int64
		var first, middle, name string
		if err := t.readRow(ctx, txn, tpcc.TableCustomer, spanner.Key{w, d, c}, []string{"c_balance", "c_first", "c_middle", "c_last"}, &balance, &first, &middle, &name); err != nil {
			return 0, err
		}
		var o int64 = -1
		err := t.readRange(ctx, txn, tpcc.TableOrders, "orders_by_customer", spanner.KeySets(prefix(w, d, c)), []string{"o_id"}, 1, func(r *spanner.Row) error {
			return r.Columns(&o)
		})
		if err != nil || o < 0 {
			return 1, errors.Join(err, errors.New("tpcc: the customer has no order"))
		}
		var rows int64 = 2
		err = t.readRange(ctx, txn, tpcc.TableOrderLine, "", spanner.KeySets(prefix(w, d, o)),
			[]string{"ol_i_id", "ol_supply_w_id", "ol_quantity", "ol_amount", "ol_delivery_d"}, 0, func(*spanner.Row) error {
				rows++
				return nil
			})
		return rows, err
	})
}

// delivery is TPC-C's Delivery (clause 2.7.4): the oldest undelivered
// order of each of the home warehouse's ten districts, in one read-write
// transaction, run at once rather than queued.
func (t *tpccTxn) delivery(ctx context.Context, rng *rand.Rand) (Outcome, error) {
	w, carrier := t.run.pick.HomeWarehouse(rng), tpcc.Uniform(rng, 1, 10)
	return t.ex.readWriteTxn(ctx, func(ctx context.Context, txn *spanner.ReadWriteTransaction) (int64, error) {
		wr := t.writer()
		var rows int64
		for d := int64(1); d <= v1alpha1.TPCCDistricts; d++ {
			n, err := t.deliverOne(ctx, txn, wr, w, d, carrier)
			if err != nil {
				return 0, err
			}
			rows += n
		}
		return rows, wr.flush(ctx, txn, t.queryOpts())
	})
}

// deliverOne delivers district d's oldest new order, if it has one.
func (t *tpccTxn) deliverOne(ctx context.Context, txn *spanner.ReadWriteTransaction, wr *writer, w, d, carrier int64) (int64, error) {
	var o int64 = -1
	if err := t.readRange(ctx, txn, tpcc.TableNewOrder, "", spanner.KeySets(prefix(w, d)), []string{"o_id"}, 1, func(r *spanner.Row) error {
		return r.Columns(&o)
	}); err != nil || o < 0 {
		return 0, err
	}
	var c int64
	if err := t.readRow(ctx, txn, tpcc.TableOrders, spanner.Key{w, d, o}, []string{"o_c_id"}, &c); err != nil {
		return 0, err
	}
	var total, lines int64
	now := t.run.now()
	err := t.readRange(ctx, txn, tpcc.TableOrderLine, "", spanner.KeySets(prefix(w, d, o)), []string{"ol_number", "ol_amount"}, 0, func(r *spanner.Row) error {
		var n, amount int64
		if err := r.Columns(&n, &amount); err != nil {
			return err
		}
		total += amount
		lines++
		wr.update(tpcc.TableOrderLine, keyOrderLine, []string{"ol_delivery_d"}, w, d, o, n, now)
		return nil
	})
	if err != nil {
		return 0, err
	}
	var balance, count int64
	if err := t.readRow(ctx, txn, tpcc.TableCustomer, spanner.Key{w, d, c}, []string{"c_balance", "c_delivery_cnt"}, &balance, &count); err != nil {
		return 0, err
	}
	wr.delete(tpcc.TableNewOrder, keyOrder, w, d, o)
	wr.update(tpcc.TableOrders, keyOrder, []string{"o_carrier_id"}, w, d, o, carrier)
	wr.update(tpcc.TableCustomer, keyCustomer, []string{"c_balance", "c_delivery_cnt"}, w, d, c, balance+total, count+1)
	return 3 + lines, nil
}

// stockLevel is TPC-C's Stock-Level (clause 2.8.2) in one read-only
// transaction: the distinct items of the district's last 20 orders whose
// stock is below a threshold of 10 to 20.
func (t *tpccTxn) stockLevel(ctx context.Context, rng *rand.Rand) (Outcome, error) {
	p := &t.run.pick
	w, d, threshold := p.HomeWarehouse(rng), p.District(rng), tpcc.Uniform(rng, 10, 20)
	return t.ex.readOnlyTxn(ctx, func(ctx context.Context, txn *spanner.ReadOnlyTransaction) (int64, error) {
		var next int64
		if err := t.readRow(ctx, txn, tpcc.TableDistrict, spanner.Key{w, d}, []string{"d_next_o_id"}, &next); err != nil {
			return 0, err
		}
		items := map[int64]bool{}
		recent := spanner.KeyRange{Start: spanner.Key{w, d, next - 20}, End: spanner.Key{w, d, next}, Kind: spanner.ClosedOpen}
		if err := t.readRange(ctx, txn, tpcc.TableOrderLine, "", spanner.KeySets(recent), []string{"ol_i_id"}, 0, func(r *spanner.Row) error {
			var i int64
			if err := r.Columns(&i); err != nil {
				return err
			}
			items[i] = true
			return nil
		}); err != nil {
			return 0, err
		}
		keys := make([]spanner.Key, 0, len(items))
		for i := range items {
			keys = append(keys, spanner.Key{w, i})
		}
		var low int64
		err := t.readRange(ctx, txn, tpcc.TableStock, "", spanner.KeySetFromKeys(keys...), []string{"s_quantity"}, 0, func(r *spanner.Row) error {
			var q int64
			if err := r.Columns(&q); err != nil {
				return err
			}
			if q < threshold {
				low++
			}
			return nil
		})
		return 1 + int64(len(items)), err
	})
}

package workload

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/spanner"
	"k8s.io/utils/clock"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/workload/tpcc"
)

// tpccRun is what a shard's TPC-C transactions share: the population, the
// run's NURand constants, the shard's home warehouses and the dialect of
// the DML path.
type tpccRun struct {
	pick    tpcc.Picker
	dialect v1alpha1.Dialect
	clock   clock.PassiveClock
	// breakPayment is a test seam: Payment then skips the district's
	// D_YTD, so that W_YTD = sum(D_YTD) fails.
	breakPayment bool
}

func newTPCCRun(s tpccSchema, o Options) *tpccRun {
	return &tpccRun{dialect: s.dialect, clock: clock.RealClock{}, pick: tpcc.Picker{Scale: s.scale, C: tpcc.RunConstants(o.Run),
		Home: tpcc.HomeWarehouses(s.scale.Warehouses, o.Shard, o.Shards)}}
}

// TPCCConstants are the NURand C values of a run: every shard of the run
// draws with them, and results record them.
func TPCCConstants(run string) tpcc.Constants { return tpcc.RunConstants(run) }

// errRollback is New-Order's deliberate rollback (an unused item): the
// transaction's function returns it, so that nothing commits.
var errRollback = errors.New("tpcc: New-Order rolled back on an unused item")

// tpccReader is what both kinds of transaction read with.
type tpccReader interface {
	ReadWithOptions(ctx context.Context, table string, keys spanner.KeySet, columns []string, opts *spanner.ReadOptions) *spanner.RowIterator
	ReadRowWithOptions(ctx context.Context, table string, key spanner.Key, columns []string, opts *spanner.ReadOptions) (*spanner.Row, error)
}

func (s tpccSchema) op(o v1alpha1.OperationSpec, ex *executor, run *tpccRun) (operationFunc, error) {
	t := &tpccTxn{run: run, ex: ex, dml: o.WritePath == v1alpha1.WriteDML}
	switch o.Type {
	case v1alpha1.OpNewOrder:
		return t.newOrder, nil
	case v1alpha1.OpPayment:
		return t.payment, nil
	case v1alpha1.OpOrderStatus:
		return t.orderStatus, nil
	case v1alpha1.OpDelivery:
		return t.delivery, nil
	case v1alpha1.OpStockLevel:
		return t.stockLevel, nil
	}
	return nil, fmt.Errorf("the TPCC workload has no %s operation", o.Type)
}

// tpccTxn runs one kind of transaction with its operation's options.
type tpccTxn struct {
	run *tpccRun
	ex  *executor
	// dml writes with DML statements instead of buffered mutations.
	dml bool
}

func (t *tpccTxn) readOpts() *spanner.ReadOptions {
	return &spanner.ReadOptions{Priority: t.ex.priority, RequestTag: t.ex.tag}
}

// readRow reads one row's columns into dst.
func (t *tpccTxn) readRow(ctx context.Context, r tpccReader, table string, key spanner.Key, cols []string, dst ...any) error {
	row, err := r.ReadRowWithOptions(ctx, table, key, cols, t.readOpts())
	if err != nil {
		return fmt.Errorf("reading %s %v: %w", table, key, err)
	}
	return row.Columns(dst...)
}

// readRange reads the rows of a key set (of an index when index is set)
// in key order, at most limit (0: all).
func (t *tpccTxn) readRange(ctx context.Context, r tpccReader, table, index string, keys spanner.KeySet, cols []string, limit int, each func(*spanner.Row) error) error {
	opts := t.readOpts()
	opts.Index, opts.Limit = index, limit
	if err := r.ReadWithOptions(ctx, table, keys, cols, opts).Do(each); err != nil {
		return fmt.Errorf("reading %s: %w", table, err)
	}
	return nil
}

// prefix is every key that starts with parts.
func prefix(parts ...any) spanner.KeyRange {
	return spanner.KeyRange{Start: parts, End: parts, Kind: spanner.ClosedClosed}
}

// writer collects a transaction's writes as mutations or DML, and sends
// them at the end: buffered with the commit, or as one batch of DML.
type writer struct {
	dialect v1alpha1.Dialect
	dml     bool
	ms      []*spanner.Mutation
	stmts   []spanner.Statement
}

// update sets cols (after the key columns keyCols) of one row.
func (w *writer) update(table string, keyCols, cols []string, vals ...any) {
	if !w.dml {
		w.ms = append(w.ms, spanner.Update(table, append(append([]string(nil), keyCols...), cols...), vals))
		return
	}
	sets := make([]string, len(cols))
	for i, c := range cols {
		sets[i] = c + " = " + w.param(len(keyCols)+i+1)
	}
	w.stmts = append(w.stmts, spanner.Statement{SQL: "UPDATE " + table + " SET " + strings.Join(sets, ", ") + " WHERE " + w.where(keyCols), Params: params(vals...)})
}

// insert adds one row.
func (w *writer) insert(table string, cols []string, vals ...any) {
	if !w.dml {
		w.ms = append(w.ms, spanner.Insert(table, cols, vals))
		return
	}
	ps := make([]string, len(cols))
	for i := range cols {
		ps[i] = w.param(i + 1)
	}
	w.stmts = append(w.stmts, spanner.Statement{SQL: "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.Join(ps, ", ") + ")", Params: params(vals...)})
}

// delete removes one row by key.
func (w *writer) delete(table string, keyCols []string, key ...any) {
	if !w.dml {
		w.ms = append(w.ms, spanner.Delete(table, spanner.Key(key)))
		return
	}
	w.stmts = append(w.stmts, spanner.Statement{SQL: "DELETE FROM " + table + " WHERE " + w.where(keyCols), Params: params(key...)})
}

func (w *writer) where(keyCols []string) string {
	conds := make([]string, len(keyCols))
	for i, c := range keyCols {
		conds[i] = c + " = " + w.param(i+1)
	}
	return strings.Join(conds, " AND ")
}

// param is statement parameter i (see params) in the dialect.
func (w *writer) param(i int) string {
	if w.dialect == v1alpha1.DialectPostgreSQL {
		return "$" + strconv.Itoa(i)
	}
	return "@p" + strconv.Itoa(i)
}

// flush sends the writes in txn.
func (w *writer) flush(ctx context.Context, txn *spanner.ReadWriteTransaction, opts spanner.QueryOptions) error {
	if !w.dml {
		return txn.BufferWrite(w.ms)
	}
	if len(w.stmts) == 0 {
		return nil
	}
	_, err := txn.BatchUpdateWithOptions(ctx, w.stmts, opts)
	return err
}

func (t *tpccTxn) writer() *writer { return &writer{dialect: t.run.dialect, dml: t.dml} }

func (t *tpccTxn) queryOpts() spanner.QueryOptions {
	return spanner.QueryOptions{Priority: t.ex.priority, RequestTag: t.ex.tag}
}

// Key columns of the tables the transactions write.
var (
	keyWarehouse = []string{"w_id"}
	keyDistrict  = []string{"w_id", "d_id"}
	keyCustomer  = []string{"w_id", "d_id", "c_id"}
	keyOrder     = []string{"w_id", "d_id", "o_id"}
	keyOrderLine = []string{"w_id", "d_id", "o_id", "ol_number"}
	keyStock     = []string{"w_id", "s_i_id"}
)

// now is the time transactions write into entry and delivery dates.
func (r *tpccRun) now() time.Time { return r.clock.Now().UTC() }

// truncate cuts s to at most n bytes (the generated text is ASCII).
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// formatInts writes the values separated by spaces, with a trailing one.
func formatInts(vs ...int64) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString(strconv.FormatInt(v, 10))
		b.WriteByte(' ')
	}
	return b.String()
}

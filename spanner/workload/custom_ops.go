package workload

import (
	"context"
	"fmt"
	"math/rand/v2"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/ddl"
)

// stepValues are the values earlier steps of a transaction read, by
// "step.column".
type stepValues map[string]spanner.GenericColumnValue

// binder produces a statement's parameters.
type binder func(rng *rand.Rand, earlier stepValues) map[string]any

// op builds one operation of a Custom workload on the executor, so that
// results, histograms and reports see it as any other.
func (s *customSchema) op(o v1alpha1.OperationSpec, ex *executor, keyspace *shardKeys) (operationFunc, error) {
	c := o.Custom
	if c == nil {
		return nil, fmt.Errorf("a %s operation needs custom", o.Type)
	}
	switch o.Type {
	case v1alpha1.OpQuery, v1alpha1.OpDML:
		bind, err := s.binder(c.SQL, c.Params, o.Keys)
		if err != nil {
			return nil, err
		}
		if o.Type == v1alpha1.OpQuery {
			return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
				return ex.query(ctx, spanner.Statement{SQL: c.SQL, Params: bind(rng, nil)})
			}, nil
		}
		return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
			return ex.update(ctx, spanner.Statement{SQL: c.SQL, Params: bind(rng, nil)})
		}, nil
	case v1alpha1.OpReadRows:
		return s.readRows(c.Read, o, ex)
	case v1alpha1.OpMutation:
		return s.mutation(c.Mutation, o, ex, keyspace)
	case v1alpha1.OpTransaction:
		return s.transaction(c.Steps, o, ex)
	}
	return nil, fmt.Errorf("a Custom workload has no %s operation", o.Type)
}

// binder prepares the bindings of sql's parameters: a generator typed by
// the column the parameter meets, an existing key drawn with the
// operation's key distribution, or a value of an earlier step.
func (s *customSchema) binder(sql string, params []v1alpha1.ParamBinding, keys v1alpha1.KeyDistribution) (binder, error) {
	st, err := s.schema.Statement(sql)
	if err != nil {
		return nil, err
	}
	type source func(rng *rand.Rand, earlier stepValues) any
	sources := map[string]source{}
	for i := range params {
		p := &params[i]
		switch {
		case p.Generator != nil:
			g := &columnGen{col: st.ParamColumns[p.Name], spec: p.Generator, inherited: -1, pg: s.schema.PostgreSQL}
			if err := g.resolve(s); err != nil {
				return nil, fmt.Errorf("parameter @%s: %w", p.Name, err)
			}
			sources[p.Name] = func(rng *rand.Rand, _ stepValues) any { return g.value(rng, rng.Int64N(1<<62)) }
		case p.Key != nil:
			ct := s.table(p.Key.Table)
			if ct == nil || ct.rows == 0 {
				return nil, fmt.Errorf("parameter @%s: table %s holds no rows to choose from", p.Name, p.Key.Table)
			}
			col, pick := ct.columnIndex(p.Key.Column), newChooser(keys, ct.rows)
			sources[p.Name] = func(rng *rand.Rand, _ stepValues) any { return ct.loadedValue(col, pick.next(rng)) }
		default:
			from := p.From
			sources[p.Name] = func(_ *rand.Rand, earlier stepValues) any { return earlier[from] }
		}
	}
	return func(rng *rand.Rand, earlier stepValues) map[string]any {
		out := make(map[string]any, len(sources))
		for name, src := range sources {
			out[name] = src(rng, earlier)
		}
		return out
	}, nil
}

// readRows reads through the Read API: one key, a list of keys or a range
// from a chosen key, of the table or of an index (whose keys are then
// prefixes: the index columns of a chosen row).
func (s *customSchema) readRows(r *v1alpha1.CustomReadSpec, o v1alpha1.OperationSpec, ex *executor) (operationFunc, error) {
	ct := s.table(r.Table)
	if ct == nil || ct.rows == 0 {
		return nil, fmt.Errorf("table %s holds no rows to read", r.Table)
	}
	keyOf, index := ct.keyOf, ""
	if r.Index != "" {
		ix := s.schema.Index(ct.t.Name, r.Index)
		if ix == nil {
			return nil, fmt.Errorf("index %s of %s is not in the DDL", r.Index, ct.t.Name)
		}
		keyOf, index = func(row int64) spanner.Key { return ct.indexKey(ix, row) }, ix.Name
	}
	// The Read API takes names as the DDL stored them (PostgreSQL folds
	// unquoted ones to lower case); the spec's may differ in case.
	columns := make([]string, len(r.Columns))
	for i, c := range r.Columns {
		col := ct.t.Column(c)
		if col == nil {
			return nil, fmt.Errorf("column %s is not a column of %s", c, ct.t.Name)
		}
		columns[i] = col.Name
	}
	pick, n := newChooser(o.Keys, ct.rows), 1
	if o.Rows != nil {
		n = int(*o.Rows)
	}
	// A range starts early enough to find its rows: with keys that follow
	// the row index (a Sequence, the default) it returns exactly rows.
	start := newChooser(o.Keys, max(ct.rows-int64(n)+1, 1))
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		switch r.Shape {
		case v1alpha1.ReadKeyList:
			sets := make([]spanner.KeySet, n)
			for i := range sets {
				sets[i] = pointOrPrefix(keyOf(pick.next(rng)), index != "")
			}
			return ex.read(ctx, ct.t.Name, index, spanner.KeySets(sets...), columns, 0)
		case v1alpha1.ReadRange:
			from := spanner.KeyRange{Start: keyOf(start.next(rng)), End: spanner.Key{}, Kind: spanner.ClosedClosed}
			return ex.read(ctx, ct.t.Name, index, from, columns, n)
		}
		return ex.read(ctx, ct.t.Name, index, pointOrPrefix(keyOf(pick.next(rng)), index != ""), columns, 0)
	}, nil
}

// pointOrPrefix is a key of a table, or every entry of an index whose
// index columns are key.
func pointOrPrefix(key spanner.Key, index bool) spanner.KeySet {
	if index {
		return spanner.KeyRange{Start: key, End: key, Kind: spanner.ClosedClosed}
	}
	return key
}

// indexKey is the index columns' values of row r.
func (ct *customTable) indexKey(ix *ddl.Index, r int64) spanner.Key {
	key := make(spanner.Key, 0, len(ix.Columns))
	for _, c := range ix.Columns {
		key = append(key, ct.loadedValue(ct.columnIndex(c), r))
	}
	return key
}

// mutation writes one row: Insert a new one (a key no other runner
// generates: a row index past the dataset, under a chosen parent for an
// interleaved table), Update or Upsert a chosen existing row with fresh
// values, Delete a chosen existing row.
func (s *customSchema) mutation(m *v1alpha1.CustomMutationSpec, o v1alpha1.OperationSpec, ex *executor, keyspace *shardKeys) (operationFunc, error) {
	ct := s.table(m.Table)
	if ct == nil {
		return nil, fmt.Errorf("table %s is not in the dataset", m.Table)
	}
	if m.Kind != v1alpha1.MutationInsert && ct.rows == 0 {
		return nil, fmt.Errorf("table %s holds no rows to %s", m.Table, m.Kind)
	}
	pick := newChooser(o.Keys, max(ct.rows, 1))
	if ct.parent != nil && ct.parent.rows == 0 {
		return nil, fmt.Errorf("table %s: its parent %s holds no rows to insert under", m.Table, ct.parent.t.Name)
	}
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		var mu *spanner.Mutation
		switch m.Kind {
		case v1alpha1.MutationInsert:
			mu = spanner.Insert(ct.t.Name, ct.columns(), ct.newRow(rng, keyspace.newInsertIndex()))
		case v1alpha1.MutationUpdate:
			mu = spanner.Update(ct.t.Name, ct.columns(), ct.freshValues(rng, pick.next(rng)))
		case v1alpha1.MutationUpsert:
			mu = spanner.InsertOrUpdate(ct.t.Name, ct.columns(), ct.freshValues(rng, pick.next(rng)))
		default:
			mu = spanner.Delete(ct.t.Name, ct.keyOf(pick.next(rng)))
		}
		return ex.apply(ctx, []*spanner.Mutation{mu}, 1)
	}, nil
}

// newRow generates a row at index idx, past the dataset: a table's own
// row, or one more child of a chosen parent row.
func (ct *customTable) newRow(rng *rand.Rand, idx int64) []any {
	if ct.parent == nil {
		return ct.rowValuesAt(idx, nil, rng)
	}
	parent := rng.Int64N(ct.parent.rows)
	return ct.rowValuesAt(ct.perParent+idx, ct.parent.valuesOf(parent), rng)
}

// freshValues keeps row r's key and draws its other columns anew.
func (ct *customTable) freshValues(rng *rand.Rand, r int64) []any {
	vals := ct.valuesOf(r)
	for i, g := range ct.gens {
		if !g.key {
			vals[i] = g.value(rng, r)
		}
	}
	return vals
}

// transaction runs the steps in one read-write transaction: a query step
// keeps its first row's columns for later steps' from; the outcome counts
// the rows read and the rows changed.
func (s *customSchema) transaction(steps []v1alpha1.TransactionStep, o v1alpha1.OperationSpec, ex *executor) (operationFunc, error) {
	type step struct {
		name string
		sql  string
		dml  bool
		bind binder
		from []string
	}
	prepared := make([]step, len(steps))
	for i := range steps {
		st, err := s.schema.Statement(steps[i].SQL)
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", steps[i].Name, err)
		}
		bind, err := s.binder(steps[i].SQL, steps[i].Params, o.Keys)
		if err != nil {
			return nil, fmt.Errorf("step %s: %w", steps[i].Name, err)
		}
		prepared[i] = step{name: steps[i].Name, sql: steps[i].SQL, dml: st.DML, bind: bind}
		for _, p := range steps[i].Params {
			if p.From != "" {
				prepared[i].from = append(prepared[i].from, p.From)
			}
		}
	}
	opts := spanner.QueryOptions{Priority: ex.priority, RequestTag: ex.tag}
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		return ex.readWriteTxn(ctx, func(ctx context.Context, txn *spanner.ReadWriteTransaction) (int64, error) {
			var rows int64
			earlier := stepValues{}
			for _, st := range prepared {
				for _, f := range st.from {
					if _, ok := earlier[f]; !ok {
						return rows, fmt.Errorf("step %s: %s has no value: that step read no row, or no such column", st.name, f)
					}
				}
				stmt := spanner.Statement{SQL: st.sql, Params: st.bind(rng, earlier)}
				if st.dml {
					n, err := txn.UpdateWithOptions(ctx, stmt, opts)
					if err != nil {
						return rows, fmt.Errorf("step %s: %w", st.name, err)
					}
					rows += n
					continue
				}
				n, err := readStep(txn.QueryWithOptions(ctx, stmt, opts), st.name, earlier)
				rows += n
				if err != nil {
					return rows, fmt.Errorf("step %s: %w", st.name, err)
				}
			}
			return rows, nil
		})
	}, nil
}

// readStep reads a query step's rows, keeping the first row's columns.
func readStep(iter *spanner.RowIterator, name string, into stepValues) (int64, error) {
	var n int64
	err := iter.Do(func(r *spanner.Row) error {
		if n == 0 {
			for i, col := range r.ColumnNames() {
				var v spanner.GenericColumnValue
				if err := r.Column(i, &v); err != nil {
					return err
				}
				into[name+"."+col] = v
			}
		}
		n++
		return nil
	})
	return n, err
}

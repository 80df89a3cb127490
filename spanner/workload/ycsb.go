package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

const ycsbTable = "usertable"

// ycsbColumns are usertable's columns, key first.
var ycsbColumns = []string{"id", "field0", "field1", "field2", "field3", "field4", "field5", "field6", "field7", "field8", "field9"}

// ycsbSelect reads whole rows; its names are lower case, so it is the same
// in both dialects.
const ycsbSelect = "SELECT id, field0, field1, field2, field3, field4, field5, field6, field7, field8, field9 FROM usertable"

// ycsbSQL is the YCSB workload's SQL in one dialect. Parameters are p1,
// p2, ... (see params); the comments say what each one holds.
type ycsbSQL struct {
	ddl      []string
	read     string // p1: id
	scan     string // p1, p2: the first and last id
	readKeys string // p1: the ids
	insert   string // p1: id; p2 to p11: field0 to field9
	update   string // a format of the field's name; p1: id, p2: its value
	delete   string // p1: id
}

// ycsbStatements are the YCSB statements in each dialect, written out side
// by side.
var ycsbStatements = map[v1alpha1.Dialect]*ycsbSQL{
	v1alpha1.DialectGoogleSQL: {
		ddl: []string{`CREATE TABLE usertable (
  id STRING(MAX) NOT NULL,
  field0 STRING(MAX), field1 STRING(MAX), field2 STRING(MAX), field3 STRING(MAX), field4 STRING(MAX),
  field5 STRING(MAX), field6 STRING(MAX), field7 STRING(MAX), field8 STRING(MAX), field9 STRING(MAX),
) PRIMARY KEY (id)`},
		read:     ycsbSelect + " WHERE id = @p1",
		scan:     ycsbSelect + " WHERE id BETWEEN @p1 AND @p2",
		readKeys: ycsbSelect + " WHERE id IN UNNEST(@p1)",
		insert: "INSERT INTO usertable (id, field0, field1, field2, field3, field4, field5, field6, field7, field8, field9) " +
			"VALUES (@p1, @p2, @p3, @p4, @p5, @p6, @p7, @p8, @p9, @p10, @p11)",
		update: "UPDATE usertable SET %s = @p2 WHERE id = @p1",
		delete: "DELETE FROM usertable WHERE id = @p1",
	},
	v1alpha1.DialectPostgreSQL: {
		ddl: []string{`CREATE TABLE usertable (
  id varchar NOT NULL,
  field0 varchar, field1 varchar, field2 varchar, field3 varchar, field4 varchar,
  field5 varchar, field6 varchar, field7 varchar, field8 varchar, field9 varchar,
  PRIMARY KEY (id)
)`},
		read:     ycsbSelect + " WHERE id = $1",
		scan:     ycsbSelect + " WHERE id BETWEEN $1 AND $2",
		readKeys: ycsbSelect + " WHERE id = ANY($1)",
		insert: "INSERT INTO usertable (id, field0, field1, field2, field3, field4, field5, field6, field7, field8, field9) " +
			"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
		update: "UPDATE usertable SET %s = $2 WHERE id = $1",
		delete: "DELETE FROM usertable WHERE id = $1",
	},
}

// ycsbSchema is YCSB's usertable, as in the READ-vs-SQL experiment.
type ycsbSchema struct {
	fieldBytes int
	dialect    v1alpha1.Dialect
}

func (ycsbSchema) Table() string { return ycsbTable }

func (s ycsbSchema) Dialect() v1alpha1.Dialect { return s.dialect }

func (s ycsbSchema) DDL() []string { return slices.Clone(s.sql().ddl) }

// sql is the schema's statements; SchemaFor made sure its dialect has them.
func (s ycsbSchema) sql() *ycsbSQL { return ycsbStatements[s.dialect] }

// Rows is row k alone.
func (s ycsbSchema) Rows(k int64) []*spanner.Mutation { return []*spanner.Mutation{s.Row(k)} }

// Row is the mutation that writes preloaded row k.
func (s ycsbSchema) Row(k int64) *spanner.Mutation {
	return spanner.InsertOrUpdate(ycsbTable, ycsbColumns, s.values(YCSBKey(k), func(f int) string { return rowText(k, f, s.fieldBytes) }))
}

func (s ycsbSchema) values(id string, field func(int) string) []any {
	vals := make([]any, len(ycsbColumns))
	vals[0] = id
	for f := 1; f < len(ycsbColumns); f++ {
		vals[f] = field(f - 1)
	}
	return vals
}

// key maps a key index to its primary key: preloaded rows and inserted rows
// use different key forms (keys.go).
func (ycsbSchema) key(keyspace *shardKeys, k int64) string {
	if k < keyspace.rows {
		return YCSBKey(k)
	}
	return ycsbInsertKey(k)
}

func (s ycsbSchema) op(o v1alpha1.OperationSpec, ex *executor, keyspace *shardKeys) (operationFunc, error) {
	c := newChooser(o.Keys, max(keyspace.rows, 1))
	n := int(deref(o.Rows, v1alpha1.DefaultRows))
	q := s.sql()
	switch o.Type {
	case v1alpha1.OpRead:
		return s.read(o, ex, keyspace, c, q), nil
	case v1alpha1.OpScan:
		if n > BlockRows {
			return nil, fmt.Errorf("a scan reads at most %d rows", BlockRows)
		}
		return s.scan(o, ex, keyspace, c, n, q), nil
	case v1alpha1.OpReadKeys:
		return s.readKeys(o, ex, keyspace, c, n, q), nil
	case v1alpha1.OpInsert:
		return s.insert(o, ex, keyspace, q), nil
	case v1alpha1.OpUpdate:
		return s.update(o, ex, keyspace, c, q), nil
	case v1alpha1.OpDelete:
		return deleteOldest(o, ex, keyspace, ycsbTable, q.delete, func(k int64) string { return s.key(keyspace, k) }), nil
	case v1alpha1.OpReadModifyWrite:
		return s.readModifyWrite(o, ex, keyspace, c), nil
	}
	return nil, fmt.Errorf("the YCSB workload has no %s operation", o.Type)
}

func (s ycsbSchema) read(o v1alpha1.OperationSpec, ex *executor, keyspace *shardKeys, c chooser, q *ycsbSQL) operationFunc {
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		k, ok := keyspace.existing(rng, c, o.Keys)
		if !ok {
			return Outcome{}, nil
		}
		id := s.key(keyspace, k)
		if o.API == v1alpha1.APISQL {
			return ex.query(ctx, spanner.Statement{SQL: q.read, Params: params(id)})
		}
		return ex.read(ctx, ycsbTable, "", spanner.Key{id}, ycsbColumns, 0)
	}
}

// scanStart picks the first row of an n-row scan so that the whole range
// lies in one block: contiguous in key order and holding exactly n rows
// (fewer only when the dataset itself is smaller).
func scanStart(k, rows int64, n int) int64 {
	block := k / BlockRows * BlockRows
	size := min(BlockRows, rows-block)
	return block + min(k-block, max(size-int64(n), 0))
}

func (s ycsbSchema) scan(o v1alpha1.OperationSpec, ex *executor, keyspace *shardKeys, c chooser, n int, q *ycsbSQL) operationFunc {
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		if keyspace.rows == 0 {
			return Outcome{}, nil
		}
		first := scanStart(c.next(rng), keyspace.rows, n)
		last := min(first+int64(n), keyspace.rows, first/BlockRows*BlockRows+BlockRows) - 1
		lo, hi := YCSBKey(first), YCSBKey(last)
		if o.API == v1alpha1.APISQL {
			return ex.query(ctx, spanner.Statement{SQL: q.scan, Params: params(lo, hi)})
		}
		r := spanner.KeyRange{Start: spanner.Key{lo}, End: spanner.Key{hi}, Kind: spanner.ClosedClosed}
		return ex.read(ctx, ycsbTable, "", r, ycsbColumns, 0)
	}
}

func (s ycsbSchema) readKeys(o v1alpha1.OperationSpec, ex *executor, keyspace *shardKeys, c chooser, n int, q *ycsbSQL) operationFunc {
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		ids := distinctKeys(n, func() (string, bool) {
			k, ok := keyspace.existing(rng, c, o.Keys)
			return s.key(keyspace, k), ok
		})
		if len(ids) == 0 {
			return Outcome{}, nil
		}
		if o.API == v1alpha1.APISQL {
			return ex.query(ctx, spanner.Statement{SQL: q.readKeys, Params: params(ids)})
		}
		keys := make([]spanner.Key, len(ids))
		for i, id := range ids {
			keys[i] = spanner.Key{id}
		}
		return ex.read(ctx, ycsbTable, "", spanner.KeySetFromKeys(keys...), ycsbColumns, 0)
	}
}

// distinctKeys draws up to n distinct keys, giving up after a bounded number
// of draws (a key space smaller than n cannot yield n).
func distinctKeys(n int, draw func() (string, bool)) []string {
	seen := make(map[string]bool, n)
	ids := make([]string, 0, n)
	for tries := 0; len(ids) < n && tries < 20*n; tries++ {
		id, ok := draw()
		if !ok {
			break
		}
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

func (s ycsbSchema) insert(o v1alpha1.OperationSpec, ex *executor, keyspace *shardKeys, q *ycsbSQL) operationFunc {
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		if o.WritePath == v1alpha1.WriteDML {
			k := keyspace.newInsertIndex()
			vals := s.values(ycsbInsertKey(k), func(int) string { return randomText(rng, s.fieldBytes) })
			out, err := ex.update(ctx, spanner.Statement{SQL: q.insert, Params: params(vals...)})
			if err == nil {
				keyspace.log.added(k)
			}
			return out, err
		}
		return insertBatch(ctx, ex, keyspace, o.InsertRows(), func(k int64) *spanner.Mutation {
			return spanner.Insert(ycsbTable, ycsbColumns, s.values(ycsbInsertKey(k), func(int) string { return randomText(rng, s.fieldBytes) }))
		})
	}
}

func (s ycsbSchema) update(o v1alpha1.OperationSpec, ex *executor, keyspace *shardKeys, c chooser, q *ycsbSQL) operationFunc {
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		k, ok := keyspace.existing(rng, c, o.Keys)
		if !ok {
			return Outcome{}, nil
		}
		id, field, v := s.key(keyspace, k), ycsbColumns[1+rng.IntN(10)], randomText(rng, s.fieldBytes)
		if o.WritePath == v1alpha1.WriteDML {
			return ex.update(ctx, spanner.Statement{SQL: fmt.Sprintf(q.update, field), Params: params(id, v)})
		}
		return ex.apply(ctx, []*spanner.Mutation{spanner.Update(ycsbTable, []string{"id", field}, []any{id, v})}, 1)
	}
}

func (s ycsbSchema) readModifyWrite(o v1alpha1.OperationSpec, ex *executor, keyspace *shardKeys, c chooser) operationFunc {
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		k, ok := keyspace.existing(rng, c, o.Keys)
		if !ok {
			return Outcome{}, nil
		}
		id, field := s.key(keyspace, k), ycsbColumns[1+rng.IntN(10)]
		v := randomText(rng, s.fieldBytes)
		return ex.readWriteTxn(ctx, func(ctx context.Context, txn *spanner.ReadWriteTransaction) (int64, error) {
			row, err := txn.ReadRowWithOptions(ctx, ycsbTable, spanner.Key{id}, []string{field}, &spanner.ReadOptions{RequestTag: ex.tag, Priority: ex.priority})
			if err != nil {
				return 0, err
			}
			var old spanner.NullString
			if err := row.Columns(&old); err != nil {
				return 0, err
			}
			return 1, txn.BufferWrite([]*spanner.Mutation{spanner.Update(ycsbTable, []string{"id", field}, []any{id, v})})
		})
	}
}

// deleteOldest deletes the oldest row this shard inserted and still holds,
// through DML with stmt (p1: the key) or a mutation. With none left it does
// nothing and reports no rows.
func deleteOldest(o v1alpha1.OperationSpec, ex *executor, keyspace *shardKeys, table, stmt string, key func(int64) string) operationFunc {
	return func(ctx context.Context, _ *rand.Rand) (Outcome, error) {
		k, ok := keyspace.log.takeOldest()
		if !ok {
			return Outcome{}, nil
		}
		id := key(k)
		if o.WritePath == v1alpha1.WriteDML {
			return ex.update(ctx, spanner.Statement{SQL: stmt, Params: params(id)})
		}
		return ex.apply(ctx, []*spanner.Mutation{spanner.Delete(table, spanner.Key{id})}, 1)
	}
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

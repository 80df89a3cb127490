// Package workload holds spanbench's built-in workloads: their schemas, row
// generators and operations against Cloud Spanner. An operation is a small
// value with a Do method; it knows nothing about scheduling or measurement.
package workload

import (
	"context"
	cryptorand "crypto/rand"
	"fmt"
	"math/rand/v2"
	"strconv"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result/operation"
	"github.com/spanbench/spanbench/spanner/gfe"
)

// GeneratorVersion changes whenever preloaded rows change for the same
// schema and parameters; dataset markers record it, so an old dataset is
// recognised as different.
const GeneratorVersion = 1

// Options places a workload in a run.
type Options struct {
	// Run names the run in request and transaction tags.
	Run string
	// Shard and Shards say this runner is shard i of n; inserts of different
	// shards never collide.
	Shard, Shards int
	// Emulator adapts the writes to the emulator: read-write transactions
	// are serialised and mutations applied at least once (EMULATOR.md).
	// Never set against real Spanner.
	Emulator bool
	// Dialect is the database's SQL dialect, which the operations' queries
	// and DML are written in; "" is GoogleSQL.
	Dialect v1alpha1.Dialect

	rwGate *rwGate
}

// Schema is a workload's tables, in one SQL dialect, and how to generate
// its rows. Table and column names are the same in both dialects, so the
// Read API and mutations (Row) are too; only the SQL text differs.
type Schema interface {
	// Dialect is the SQL dialect of DDL and of the workload's statements.
	Dialect() v1alpha1.Dialect
	// DDL is the DDL, in Dialect, that creates the schema.
	DDL() []string
	// Table is the main table, whose row count the dataset marker records.
	Table() string
	// Rows are the mutations that write preloaded load unit k: one row of
	// the main table for YCSB and Tweet, several rows of several tables for
	// TPCC. They are InsertOrUpdates, so a repeated load is idempotent, and
	// a pure function of k.
	Rows(k int64) []*spanner.Mutation
}

// Workload is a built-in workload bound to a client and a shard.
type Workload struct {
	Schema
	ops []*Op
	// tpcc is the TPCC shard's shared state (test seams reach it); nil for
	// the other workloads.
	tpcc *tpccRun
}

// Op is one operation of the mix, an operation.Operation.
type Op struct {
	// Spec is the resolved operation spec.
	Spec v1alpha1.OperationSpec
	do   func(ctx context.Context, rng *rand.Rand) (Outcome, error)
	exec *executor
}

// Do runs the operation once. rng belongs to the calling worker. Its
// RPCs' GFE durations, which the session's interceptor reads from their
// response headers, are summed into the outcome.
func (o *Op) Do(ctx context.Context, rng *rand.Rand) (Outcome, error) {
	var t gfe.Timer
	out, err := o.do(gfe.WithTimer(ctx, &t), rng)
	out.GFE, out.GFEMeasured = t.Total()
	return out, err
}

// SchemaFor returns the schema of a workload type in dialect d ("" is
// GoogleSQL), for loading without a mix.
func SchemaFor(spec *v1alpha1.WorkloadSpec, d v1alpha1.Dialect) (Schema, error) {
	fb, d := int(*spec.Dataset.FieldBytes), d.OrDefault()
	switch spec.Type {
	case v1alpha1.WorkloadCustom:
		if d != v1alpha1.DialectGoogleSQL && d != v1alpha1.DialectPostgreSQL {
			return nil, fmt.Errorf("the Custom workload has no SQL in dialect %q", d)
		}
		return newCustomSchema(spec, d)
	case v1alpha1.WorkloadYCSB:
		if ycsbStatements[d] == nil {
			return nil, fmt.Errorf("the YCSB workload has no SQL in dialect %q", d)
		}
		return ycsbSchema{fieldBytes: fb, dialect: d}, nil
	case v1alpha1.WorkloadTweet:
		if tweetStatements[d] == nil {
			return nil, fmt.Errorf("the Tweet workload has no SQL in dialect %q", d)
		}
		return tweetSchema{fieldBytes: fb, dialect: d}, nil
	case v1alpha1.WorkloadTPCC:
		if tpccDDL[d] == nil {
			return nil, fmt.Errorf("the TPCC workload has no SQL in dialect %q", d)
		}
		return tpccSchema{scale: spec.TPCC.Scale(), dialect: d}, nil
	}
	return nil, fmt.Errorf("unknown workload type %q", spec.Type)
}

// params names statement parameters p1, p2, ... in order: @p1 in GoogleSQL,
// $1 in PostgreSQL, so one map serves both dialects.
func params(values ...any) map[string]any {
	m := make(map[string]any, len(values))
	for i, v := range values {
		m["p"+strconv.Itoa(i+1)] = v
	}
	return m
}

// New binds a defaulted, valid workload spec to a client.
func New(spec *v1alpha1.WorkloadSpec, c *spanner.Client, o Options) (*Workload, error) {
	if o.Shards < 1 || o.Shard < 0 || o.Shard >= o.Shards {
		return nil, fmt.Errorf("shard %d of %d is out of range", o.Shard, o.Shards)
	}
	if o.Emulator {
		o.rwGate = newRWGate()
	}
	schema, err := SchemaFor(spec, o.Dialect)
	if err != nil {
		return nil, err
	}
	start, err := insertStart(*spec.Dataset.Rows, cryptorand.Reader)
	if err != nil {
		return nil, err
	}
	keyspace := &shardKeys{rows: *spec.Dataset.Rows, insertStart: start, log: &insertLog{}, recent: newZipfian(maxLive)}
	if ts, ok := schema.(tpccSchema); ok {
		keyspace.tpcc = newTPCCRun(ts, o)
	}
	ops := make([]*Op, 0, len(spec.Operations))
	for _, os := range spec.Operations {
		ex := newExecutor(c, os, o.Run, o)
		do, err := build(schema, os, ex, keyspace)
		if err != nil {
			return nil, fmt.Errorf("operation %s: %w", os.Name, err)
		}
		ops = append(ops, &Op{Spec: os, do: do, exec: ex})
	}
	w := FromOps(ops...)
	w.Schema, w.tpcc = schema, keyspace.tpcc
	return w, nil
}

// Ops lists the operations in spec order; the engine picks among them by
// their specs' weights.
func (w *Workload) Ops() []*Op { return w.ops }

// shardKeys is what a shard's operations share: the preloaded row count,
// where the shard's inserted keys start, its inserts, and the recency
// distribution of Latest.
type shardKeys struct {
	rows, insertStart int64
	log               *insertLog
	recent            *zipfian
	// tpcc is what a TPCC shard's transactions share; nil for the others.
	tpcc *tpccRun
}

// existing picks an existing row for a read or update.
func (s *shardKeys) existing(rng *rand.Rand, c chooser, keys v1alpha1.KeyDistribution) (int64, bool) {
	if keys == v1alpha1.KeysLatest {
		if k, ok := s.log.latest(rng, s.recent); ok {
			return k, true
		}
	}
	if s.rows == 0 {
		return 0, false
	}
	return c.next(rng), true
}

// newInsertIndex reserves a fresh key index for an insert.
func (s *shardKeys) newInsertIndex() int64 {
	return s.insertStart + s.log.nextSeq()
}

// operationFunc is the body of an operation.
type operationFunc = func(ctx context.Context, rng *rand.Rand) (Outcome, error)

func build(schema Schema, o v1alpha1.OperationSpec, ex *executor, keyspace *shardKeys) (operationFunc, error) {
	switch s := schema.(type) {
	case ycsbSchema:
		return s.op(o, ex, keyspace)
	case tweetSchema:
		return s.op(o, ex, keyspace)
	case tpccSchema:
		return s.op(o, ex, keyspace.tpcc)
	case *customSchema:
		return s.op(o, ex, keyspace)
	}
	return nil, fmt.Errorf("no operations for schema %T", schema)
}

// Func makes an operation of the mix from a function: a stand-in with a
// spec, for binding a workload without Spanner (an engine without a mix
// needs only operation.Func).
func Func(spec v1alpha1.OperationSpec, do func(ctx context.Context, rng *rand.Rand) (Outcome, error)) *Op {
	return &Op{Spec: spec, do: do, exec: &executor{}}
}

// FromOps makes a workload of the given operations, without a schema.
func FromOps(ops ...*Op) *Workload {
	return &Workload{ops: ops}
}

var _ operation.Operation = (*Op)(nil)

package workload

import (
	"context"

	"cloud.google.com/go/spanner"
	sppb "cloud.google.com/go/spanner/apiv1/spannerpb"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result/operation"
)

// Outcome is what one successful operation did: the load layer's, so that
// an Op is an operation.Operation the engine runs as it is.
type Outcome = operation.Outcome

// executor runs reads and writes with one operation's options: tag,
// priority, staleness, directed reads and commit options.
type executor struct {
	client      *spanner.Client
	tag         string
	priority    sppb.RequestOptions_Priority
	bound       spanner.TimestampBound
	directed    *sppb.DirectedReadOptions
	commit      spanner.CommitOptions
	readWrite   *rwGate
	atLeastOnce bool
	// expectRows: the operation reads keys the dataset holds, so finding
	// no row is a not-found (OperationType.ExpectsRows).
	expectRows bool
	observe    func(*spanner.Row) // test seam: sees every row read
}

// rwGate serialises read-write transactions when the target cannot run them
// concurrently (the emulator); it is nil against real Spanner.
type rwGate struct{ ch chan struct{} }

func newRWGate() *rwGate { return &rwGate{ch: make(chan struct{}, 1)} }

func (g *rwGate) enter(ctx context.Context) error {
	if g == nil {
		return nil
	}
	select {
	case g.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *rwGate) leave() {
	if g != nil {
		<-g.ch
	}
}

func newExecutor(c *spanner.Client, o v1alpha1.OperationSpec, run string, opts Options) *executor {
	e := &executor{client: c, tag: v1alpha1.RequestTag(run, o.Name), priority: priority(o.Priority), bound: spanner.StrongRead(),
		readWrite: opts.rwGate, atLeastOnce: opts.Emulator, expectRows: o.Type.ExpectsRows()}
	if s := o.Staleness; s != nil && s.Exact != nil {
		e.bound = spanner.ExactStaleness(s.Exact.Duration)
	} else if s != nil && s.Max != nil {
		e.bound = spanner.MaxStaleness(s.Max.Duration)
	}
	e.directed = directedRead(o.DirectedRead)
	if c := o.Commit; c != nil {
		e.commit.ReturnCommitStats = c.ReturnCommitStats
		if c.MaxCommitDelay != nil {
			d := c.MaxCommitDelay.Duration
			e.commit.MaxCommitDelay = &d
		}
	}
	return e
}

func priority(p v1alpha1.RPCPriority) sppb.RequestOptions_Priority {
	switch p {
	case v1alpha1.PriorityLow:
		return sppb.RequestOptions_PRIORITY_LOW
	case v1alpha1.PriorityMedium:
		return sppb.RequestOptions_PRIORITY_MEDIUM
	case v1alpha1.PriorityHigh:
		return sppb.RequestOptions_PRIORITY_HIGH
	}
	return sppb.RequestOptions_PRIORITY_UNSPECIFIED
}

func directedRead(d *v1alpha1.DirectedReadSpec) *sppb.DirectedReadOptions {
	if d == nil {
		return nil
	}
	sel := func(in []v1alpha1.ReplicaSelection) []*sppb.DirectedReadOptions_ReplicaSelection {
		out := make([]*sppb.DirectedReadOptions_ReplicaSelection, 0, len(in))
		for _, r := range in {
			t := sppb.DirectedReadOptions_ReplicaSelection_TYPE_UNSPECIFIED
			switch r.Type {
			case v1alpha1.ReplicaReadWrite:
				t = sppb.DirectedReadOptions_ReplicaSelection_READ_WRITE
			case v1alpha1.ReplicaReadOnly:
				t = sppb.DirectedReadOptions_ReplicaSelection_READ_ONLY
			}
			out = append(out, &sppb.DirectedReadOptions_ReplicaSelection{Location: r.Location, Type: t})
		}
		return out
	}
	if len(d.Include) > 0 {
		return &sppb.DirectedReadOptions{Replicas: &sppb.DirectedReadOptions_IncludeReplicas_{
			IncludeReplicas: &sppb.DirectedReadOptions_IncludeReplicas{ReplicaSelections: sel(d.Include), AutoFailoverDisabled: d.AutoFailoverDisabled}}}
	}
	return &sppb.DirectedReadOptions{Replicas: &sppb.DirectedReadOptions_ExcludeReplicas_{
		ExcludeReplicas: &sppb.DirectedReadOptions_ExcludeReplicas{ReplicaSelections: sel(d.Exclude)}}}
}

// read runs a single-use Read API call and counts the rows.
func (e *executor) read(ctx context.Context, table, index string, keys spanner.KeySet, cols []string, limit int) (Outcome, error) {
	opts := &spanner.ReadOptions{Index: index, Limit: limit, Priority: e.priority, RequestTag: e.tag, DirectedReadOptions: e.directed}
	iter := e.client.Single().WithTimestampBound(e.bound).ReadWithOptions(ctx, table, keys, cols, opts)
	return e.count(iter)
}

// query runs a single-use SQL query and counts the rows.
func (e *executor) query(ctx context.Context, stmt spanner.Statement) (Outcome, error) {
	opts := spanner.QueryOptions{Priority: e.priority, RequestTag: e.tag, DirectedReadOptions: e.directed}
	iter := e.client.Single().WithTimestampBound(e.bound).QueryWithOptions(ctx, stmt, opts)
	return e.count(iter)
}

// count reads the rows. A read of keys that exist which finds none is a
// not-found: typically a stale read whose timestamp precedes the load
// (EMULATOR.md), whose iterator simply ends where ReadRow says NotFound.
func (e *executor) count(iter *spanner.RowIterator) (Outcome, error) {
	var n int64
	err := iter.Do(func(r *spanner.Row) error {
		n++
		if e.observe != nil {
			e.observe(r)
		}
		return nil
	})
	return Outcome{Rows: n, NotFound: err == nil && n == 0 && e.expectRows}, err
}

// apply writes mutations. Without commit stats it is one Apply call; against
// the emulator it is at-least-once, the only kind the emulator runs
// concurrently (EMULATOR.md). Commit stats need a read-write transaction.
func (e *executor) apply(ctx context.Context, ms []*spanner.Mutation, rows int64) (Outcome, error) {
	if e.commit.ReturnCommitStats {
		return e.readWriteTxn(ctx, func(_ context.Context, txn *spanner.ReadWriteTransaction) (int64, error) {
			return rows, txn.BufferWrite(ms)
		})
	}
	opts := []spanner.ApplyOption{spanner.TransactionTag(e.tag), spanner.Priority(e.priority), spanner.ApplyCommitOptions(e.commit)}
	if e.atLeastOnce {
		opts = append(opts, spanner.ApplyAtLeastOnce())
	}
	_, err := e.client.Apply(ctx, ms, opts...)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Rows: rows}, nil
}

// readWriteTxn runs fn in a read-write transaction, counting attempts beyond
// the first as retries. fn returns the rows it touched.
func (e *executor) readWriteTxn(ctx context.Context, fn func(context.Context, *spanner.ReadWriteTransaction) (int64, error)) (Outcome, error) {
	if err := e.readWrite.enter(ctx); err != nil {
		return Outcome{}, err
	}
	defer e.readWrite.leave()
	var attempts, rows int64
	resp, err := e.client.ReadWriteTransactionWithOptions(ctx, func(ctx context.Context, txn *spanner.ReadWriteTransaction) error {
		attempts++
		var err error
		rows, err = fn(ctx, txn)
		return err
	}, spanner.TransactionOptions{TransactionTag: e.tag, CommitPriority: e.priority, CommitOptions: e.commit})
	out := Outcome{Rows: rows, Retries: max(attempts-1, 0)}
	if resp.CommitStats != nil {
		out.Mutations = resp.CommitStats.MutationCount
	}
	return out, err
}

// readOnlyTxn runs fn in a multi-use read-only transaction at the
// operation's timestamp bound. fn returns the rows it read. Against the
// emulator it takes the read-write transactions' gate: the emulator keeps
// one transaction per session, multi-use read-only ones included (measured:
// at concurrency 4 of the TPC-C mix, every Order-Status and Stock-Level
// failed with FailedPrecondition or NotFound, and so did some read-write
// transactions beside them).
func (e *executor) readOnlyTxn(ctx context.Context, fn func(context.Context, *spanner.ReadOnlyTransaction) (int64, error)) (Outcome, error) {
	if err := e.readWrite.enter(ctx); err != nil {
		return Outcome{}, err
	}
	defer e.readWrite.leave()
	txn := e.client.ReadOnlyTransaction().WithTimestampBound(e.bound)
	defer txn.Close()
	rows, err := fn(ctx, txn)
	return Outcome{Rows: rows}, err
}

// update runs a DML statement in a read-write transaction.
func (e *executor) update(ctx context.Context, stmt spanner.Statement) (Outcome, error) {
	return e.readWriteTxn(ctx, func(ctx context.Context, txn *spanner.ReadWriteTransaction) (int64, error) {
		return txn.UpdateWithOptions(ctx, stmt, spanner.QueryOptions{Priority: e.priority, RequestTag: e.tag})
	})
}

package workload

import (
	"context"

	"cloud.google.com/go/spanner"
)

// insertBatch writes n new rows in one commit of mutations (an Insert's
// rows: a batch), row(k) making the mutation of the row at key index k,
// and logs every row once the commit succeeded, for Delete and the reads
// of recent rows. The outcome counts the n rows.
func insertBatch(ctx context.Context, ex *executor, keyspace *shardKeys, n int, row func(k int64) *spanner.Mutation) (Outcome, error) {
	keys := make([]int64, n)
	ms := make([]*spanner.Mutation, n)
	for i := range keys {
		keys[i] = keyspace.newInsertIndex()
		ms[i] = row(keys[i])
	}
	out, err := ex.apply(ctx, ms, int64(n))
	if err == nil {
		for _, k := range keys {
			keyspace.log.added(k)
		}
	}
	return out, err
}

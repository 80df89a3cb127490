package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"cloud.google.com/go/spanner"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

const tweetTable = "Tweet"

// tweetColumns are Tweet's columns, key first.
var tweetColumns = []string{"Id", "Author", "CommitedAt", "Content", "CreatedAt", "Favos", "Sort", "UpdatedAt"}

// tweetEpoch dates preloaded tweets: row k was created k seconds after it.
var tweetEpoch = time.Date(2018, 10, 1, 0, 0, 0, 0, time.UTC)

// tweetAuthors is the number of distinct authors, so FullScan's GROUP BY
// has work to do.
const tweetAuthors = 1000

// tweetSchema is the Tweet table and TweetSortAsc index exactly as in the
// write-throughput experiment (CommitedAt is spelled as there).
type tweetSchema struct{ fieldBytes int }

func (tweetSchema) Table() string { return tweetTable }

func (tweetSchema) DDL() []string {
	return []string{
		`CREATE TABLE Tweet (
  Id STRING(MAX) NOT NULL,
  Author STRING(MAX) NOT NULL,
  CommitedAt TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp=true),
  Content STRING(MAX) NOT NULL,
  CreatedAt TIMESTAMP NOT NULL,
  Favos ARRAY<STRING(MAX)> NOT NULL,
  Sort INT64 NOT NULL,
  UpdatedAt TIMESTAMP NOT NULL,
) PRIMARY KEY (Id)`,
		`CREATE INDEX TweetSortAsc ON Tweet (Sort)`,
	}
}

func (s tweetSchema) Row(k int64) *spanner.Mutation {
	created := tweetEpoch.Add(time.Duration(k) * time.Second)
	return spanner.InsertOrUpdate(tweetTable, tweetColumns, []any{
		tweetKey(k), author(k), spanner.CommitTimestamp, rowText(k, 0, s.fieldBytes), created,
		[]string{}, sortValue(k), created,
	})
}

func author(k int64) string { return fmt.Sprintf("author-%03d", hash64('a', k)%tweetAuthors) }

// sortValue spreads TweetSortAsc's entries, as the experiment's random Sort.
func sortValue(k int64) int64 { return int64(hash64('s', k) >> 1) }

func (s tweetSchema) op(o v1alpha1.OperationSpec, ex *executor, st *state) (operationFunc, error) {
	c := newChooser(o.Keys, max(st.rows, 1))
	switch o.Type {
	case v1alpha1.OpRead:
		return s.get(o, ex, st, c), nil
	case v1alpha1.OpInsert:
		return s.insert(o, ex, st), nil
	case v1alpha1.OpUpdate:
		return s.update(o, ex, st, c), nil
	case v1alpha1.OpDelete:
		return deleteOldest(o, ex, st, tweetTable, "Id", tweetKey), nil
	case v1alpha1.OpQueryBySort:
		return s.queryBySort(ex, int(deref(o.Rows, v1alpha1.DefaultRows))), nil
	case v1alpha1.OpFullScan:
		return s.fullScan(ex), nil
	}
	return nil, fmt.Errorf("the Tweet workload has no %s operation", o.Type)
}

func (s tweetSchema) get(o v1alpha1.OperationSpec, ex *executor, st *state, c chooser) operationFunc {
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		k, ok := st.existing(rng, c, o.Keys)
		if !ok {
			return Outcome{}, nil
		}
		if o.API == v1alpha1.APISQL {
			return ex.query(ctx, spanner.Statement{SQL: "SELECT Id, Author, Content, Sort, UpdatedAt FROM Tweet WHERE Id = @id",
				Params: map[string]any{"id": tweetKey(k)}})
		}
		return ex.read(ctx, tweetTable, "", spanner.Key{tweetKey(k)}, []string{"Id", "Author", "Content", "Sort", "UpdatedAt"}, 0)
	}
}

func (s tweetSchema) insert(o v1alpha1.OperationSpec, ex *executor, st *state) operationFunc {
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		k := st.newInsertIndex()
		now := time.Now()
		id, content, sort := tweetKey(k), randomText(rng, s.fieldBytes), int64(rng.Uint64()>>1)
		var out Outcome
		var err error
		if o.WritePath == v1alpha1.WriteDML {
			out, err = ex.update(ctx, spanner.Statement{SQL: `INSERT INTO Tweet (Id, Author, CommitedAt, Content, CreatedAt, Favos, Sort, UpdatedAt)
VALUES (@id, @author, PENDING_COMMIT_TIMESTAMP(), @content, @now, [], @sort, @now)`,
				Params: map[string]any{"id": id, "author": author(k), "content": content, "now": now, "sort": sort}})
		} else {
			out, err = ex.apply(ctx, []*spanner.Mutation{spanner.Insert(tweetTable, tweetColumns,
				[]any{id, author(k), spanner.CommitTimestamp, content, now, []string{}, sort, now})}, 1)
		}
		if err == nil {
			st.log.added(k)
		}
		return out, err
	}
}

// update changes a tweet. Through DML it also appends to Favos (a favourite),
// which makes the number of updates countable in the table afterwards.
func (s tweetSchema) update(o v1alpha1.OperationSpec, ex *executor, st *state, c chooser) operationFunc {
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		k, ok := st.existing(rng, c, o.Keys)
		if !ok {
			return Outcome{}, nil
		}
		id, now := tweetKey(k), time.Now()
		if o.WritePath == v1alpha1.WriteDML {
			return ex.update(ctx, spanner.Statement{SQL: `UPDATE Tweet SET Favos = ARRAY_CONCAT(Favos, [@favo]), UpdatedAt = @now,
CommitedAt = PENDING_COMMIT_TIMESTAMP() WHERE Id = @id`, Params: map[string]any{"id": id, "favo": author(rng.Int64()), "now": now}})
		}
		return ex.apply(ctx, []*spanner.Mutation{spanner.Update(tweetTable, []string{"Id", "Content", "UpdatedAt", "CommitedAt"},
			[]any{id, randomText(rng, s.fieldBytes), now, spanner.CommitTimestamp})}, 1)
	}
}

func (tweetSchema) queryBySort(ex *executor, n int) operationFunc {
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		return ex.query(ctx, spanner.Statement{
			SQL:    "SELECT Id, Sort FROM Tweet@{FORCE_INDEX=TweetSortAsc} WHERE Sort >= @sort ORDER BY Sort LIMIT @n",
			Params: map[string]any{"sort": int64(rng.Uint64() >> 1), "n": int64(n)}})
	}
}

// fullScan is the heavy query of the interference experiment: it reads every
// row to rank authors.
func (tweetSchema) fullScan(ex *executor) operationFunc {
	return func(ctx context.Context, _ *rand.Rand) (Outcome, error) {
		return ex.query(ctx, spanner.Statement{SQL: "SELECT Author, COUNT(*) AS Tweets FROM Tweet GROUP BY Author ORDER BY Tweets DESC, Author LIMIT 10"})
	}
}

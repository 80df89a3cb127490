package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
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

// tweetGetColumns are the columns Read gets, through either API.
var tweetGetColumns = []string{"Id", "Author", "Content", "Sort", "UpdatedAt"}

// tweetSQL is the Tweet workload's SQL in one dialect. Parameters are p1,
// p2, ... (see params); the comments say what each one holds.
type tweetSQL struct {
	ddl         []string
	get         string // p1: Id
	insert      string // p1: Id, p2: Author, p3: Content, p4: now, p5: Sort
	update      string // p1: Id, p2: favourites to append, p3: now
	delete      string // p1: Id
	queryBySort string // p1: the least Sort, p2: the row limit
	fullScan    string
}

// tweetStatements are the Tweet statements in each dialect, written out
// side by side. PostgreSQL quotes the mixed-case names, so that both
// dialects have the same table, index and column names.
var tweetStatements = map[v1alpha1.Dialect]*tweetSQL{
	v1alpha1.DialectGoogleSQL: {
		ddl: []string{`CREATE TABLE Tweet (
  Id STRING(MAX) NOT NULL,
  Author STRING(MAX) NOT NULL,
  CommitedAt TIMESTAMP NOT NULL OPTIONS (allow_commit_timestamp=true),
  Content STRING(MAX) NOT NULL,
  CreatedAt TIMESTAMP NOT NULL,
  Favos ARRAY<STRING(MAX)> NOT NULL,
  Sort INT64 NOT NULL,
  UpdatedAt TIMESTAMP NOT NULL,
) PRIMARY KEY (Id)`,
			`CREATE INDEX TweetSortAsc ON Tweet (Sort)`},
		get: "SELECT Id, Author, Content, Sort, UpdatedAt FROM Tweet WHERE Id = @p1",
		insert: `INSERT INTO Tweet (Id, Author, CommitedAt, Content, CreatedAt, Favos, Sort, UpdatedAt)
VALUES (@p1, @p2, PENDING_COMMIT_TIMESTAMP(), @p3, @p4, [], @p5, @p4)`,
		update: `UPDATE Tweet SET Favos = ARRAY_CONCAT(Favos, @p2), UpdatedAt = @p3,
CommitedAt = PENDING_COMMIT_TIMESTAMP() WHERE Id = @p1`,
		delete:      "DELETE FROM Tweet WHERE Id = @p1",
		queryBySort: "SELECT Id, Sort FROM Tweet@{FORCE_INDEX=TweetSortAsc} WHERE Sort >= @p1 ORDER BY Sort LIMIT @p2",
		fullScan:    "SELECT Author, COUNT(*) AS Tweets FROM Tweet GROUP BY Author ORDER BY Tweets DESC, Author LIMIT 10",
	},
	v1alpha1.DialectPostgreSQL: {
		ddl: []string{`CREATE TABLE "Tweet" (
  "Id" varchar NOT NULL,
  "Author" varchar NOT NULL,
  "CommitedAt" spanner.commit_timestamp NOT NULL,
  "Content" varchar NOT NULL,
  "CreatedAt" timestamptz NOT NULL,
  "Favos" varchar[] NOT NULL,
  "Sort" bigint NOT NULL,
  "UpdatedAt" timestamptz NOT NULL,
  PRIMARY KEY ("Id")
)`,
			`CREATE INDEX "TweetSortAsc" ON "Tweet" ("Sort")`},
		get: `SELECT "Id", "Author", "Content", "Sort", "UpdatedAt" FROM "Tweet" WHERE "Id" = $1`,
		insert: `INSERT INTO "Tweet" ("Id", "Author", "CommitedAt", "Content", "CreatedAt", "Favos", "Sort", "UpdatedAt")
VALUES ($1, $2, spanner.pending_commit_timestamp(), $3, $4, '{}', $5, $4)`,
		update: `UPDATE "Tweet" SET "Favos" = array_cat("Favos", $2), "UpdatedAt" = $3,
"CommitedAt" = spanner.pending_commit_timestamp() WHERE "Id" = $1`,
		delete:      `DELETE FROM "Tweet" WHERE "Id" = $1`,
		queryBySort: `SELECT "Id", "Sort" FROM "Tweet"/*@ FORCE_INDEX="TweetSortAsc" */ WHERE "Sort" >= $1 ORDER BY "Sort" LIMIT $2`,
		fullScan:    `SELECT "Author", COUNT(*) AS "Tweets" FROM "Tweet" GROUP BY "Author" ORDER BY "Tweets" DESC, "Author" LIMIT 10`,
	},
}

// tweetSchema is the Tweet table and TweetSortAsc index exactly as in the
// write-throughput experiment (CommitedAt is spelled as there).
type tweetSchema struct {
	fieldBytes int
	dialect    v1alpha1.Dialect
}

func (tweetSchema) Table() string { return tweetTable }

func (s tweetSchema) Dialect() v1alpha1.Dialect { return s.dialect }

func (s tweetSchema) DDL() []string { return slices.Clone(s.sql().ddl) }

// sql is the schema's statements; SchemaFor made sure its dialect has them.
func (s tweetSchema) sql() *tweetSQL { return tweetStatements[s.dialect] }

// Rows is row k alone.
func (s tweetSchema) Rows(k int64) []*spanner.Mutation { return []*spanner.Mutation{s.Row(k)} }

// Row is the mutation that writes preloaded row k.
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

func (s tweetSchema) op(o v1alpha1.OperationSpec, ex *executor, keyspace *shardKeys) (operationFunc, error) {
	c := newChooser(o.Keys, max(keyspace.rows, 1))
	q := s.sql()
	switch o.Type {
	case v1alpha1.OpRead:
		return s.get(o, ex, keyspace, c, q), nil
	case v1alpha1.OpInsert:
		return s.insert(o, ex, keyspace, q), nil
	case v1alpha1.OpUpdate:
		return s.update(o, ex, keyspace, c, q), nil
	case v1alpha1.OpDelete:
		return deleteOldest(o, ex, keyspace, tweetTable, q.delete, tweetKey), nil
	case v1alpha1.OpQueryBySort:
		return s.queryBySort(ex, int(deref(o.Rows, v1alpha1.DefaultRows)), q), nil
	case v1alpha1.OpFullScan:
		return s.fullScan(ex, q), nil
	}
	return nil, fmt.Errorf("the Tweet workload has no %s operation", o.Type)
}

func (s tweetSchema) get(o v1alpha1.OperationSpec, ex *executor, keyspace *shardKeys, c chooser, q *tweetSQL) operationFunc {
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		k, ok := keyspace.existing(rng, c, o.Keys)
		if !ok {
			return Outcome{}, nil
		}
		if o.API == v1alpha1.APISQL {
			return ex.query(ctx, spanner.Statement{SQL: q.get, Params: params(tweetKey(k))})
		}
		return ex.read(ctx, tweetTable, "", spanner.Key{tweetKey(k)}, tweetGetColumns, 0)
	}
}

func (s tweetSchema) insert(o v1alpha1.OperationSpec, ex *executor, keyspace *shardKeys, q *tweetSQL) operationFunc {
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		now := time.Now()
		if o.WritePath == v1alpha1.WriteDML {
			k := keyspace.newInsertIndex()
			id, content, sort := tweetKey(k), randomText(rng, s.fieldBytes), int64(rng.Uint64()>>1)
			out, err := ex.update(ctx, spanner.Statement{SQL: q.insert, Params: params(id, author(k), content, now, sort)})
			if err == nil {
				keyspace.log.added(k)
			}
			return out, err
		}
		return insertBatch(ctx, ex, keyspace, o.InsertRows(), func(k int64) *spanner.Mutation {
			return spanner.Insert(tweetTable, tweetColumns,
				[]any{tweetKey(k), author(k), spanner.CommitTimestamp, randomText(rng, s.fieldBytes), now, []string{}, int64(rng.Uint64() >> 1), now})
		})
	}
}

// update changes a tweet. Through DML it also appends to Favos (a favourite),
// which makes the number of updates countable in the table afterwards.
func (s tweetSchema) update(o v1alpha1.OperationSpec, ex *executor, keyspace *shardKeys, c chooser, q *tweetSQL) operationFunc {
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		k, ok := keyspace.existing(rng, c, o.Keys)
		if !ok {
			return Outcome{}, nil
		}
		id, now := tweetKey(k), time.Now()
		if o.WritePath == v1alpha1.WriteDML {
			return ex.update(ctx, spanner.Statement{SQL: q.update, Params: params(id, []string{author(rng.Int64())}, now)})
		}
		return ex.apply(ctx, []*spanner.Mutation{spanner.Update(tweetTable, []string{"Id", "Content", "UpdatedAt", "CommitedAt"},
			[]any{id, randomText(rng, s.fieldBytes), now, spanner.CommitTimestamp})}, 1)
	}
}

func (tweetSchema) queryBySort(ex *executor, n int, q *tweetSQL) operationFunc {
	return func(ctx context.Context, rng *rand.Rand) (Outcome, error) {
		return ex.query(ctx, spanner.Statement{SQL: q.queryBySort, Params: params(int64(rng.Uint64()>>1), int64(n))})
	}
}

// fullScan is the heavy query of the interference experiment: it reads every
// row to rank authors.
func (tweetSchema) fullScan(ex *executor, q *tweetSQL) operationFunc {
	return func(ctx context.Context, _ *rand.Rand) (Outcome, error) {
		return ex.query(ctx, spanner.Statement{SQL: q.fullScan})
	}
}

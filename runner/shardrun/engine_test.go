package shardrun_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/shardrun"
	"github.com/spanbench/spanbench/spanner/session"
)

const preloaded = 400

func tweetSpec() *v1alpha1.WorkloadSpec {
	rows, rate := int64(preloaded), int32(160)
	s := &v1alpha1.WorkloadSpec{
		Type:    v1alpha1.WorkloadTweet,
		Dataset: v1alpha1.DatasetSpec{Rows: &rows},
		Operations: []v1alpha1.OperationSpec{
			{Type: v1alpha1.OpRead, Weight: 3, Staleness: &v1alpha1.StalenessSpec{Max: &metav1.Duration{Duration: 10 * time.Second}}},
			{Type: v1alpha1.OpInsert, Weight: 3},
			{Type: v1alpha1.OpUpdate, Weight: 2, WritePath: v1alpha1.WriteDML},
			{Type: v1alpha1.OpDelete, Weight: 1},
		},
		Load:     v1alpha1.LoadSpec{Rate: &rate},
		Duration: &metav1.Duration{Duration: 4 * time.Second},
		Interval: &metav1.Duration{Duration: time.Second},
	}
	*s = s.Resolved()
	return s
}

// runShards runs n shards of spec concurrently, each with its own client
// (as separate runner pods would), from one common start, and merges them.
func runShards(t *testing.T, base *session.Session, spec *v1alpha1.WorkloadSpec, n int) *result.Document {
	t.Helper()
	docs, _ := shardDocs(t, base, spec, "accounting", n)
	merged, err := result.Merge(docs...)
	if err != nil {
		t.Fatalf("merging shards: %v", err)
	}
	return merged
}

// shardDocs runs n shards of run's spec concurrently through
// shardrun.Shard, as runner pods do, each with its own client, from one
// common start, and returns each shard's one document and that start.
func shardDocs(t *testing.T, base *session.Session, spec *v1alpha1.WorkloadSpec, run string, n int) ([]*result.Document, time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now().Add(500 * time.Millisecond)
	docs := make([]*result.Document, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		s, err := session.Open(ctx, base.Endpoint, base.Target)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		sh, err := shardrun.NewShard(run, spec, s, i, n)
		if err != nil {
			t.Fatal(err)
		}
		sh.Config.Start, sh.Config.Seed = start, int64(i)
		wg.Go(func() { docs[i], errs[i] = sh.Run(ctx) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
	}
	return docs, start
}

// TestDatabaseHoldsExactlyWhatTheMergedResultReports runs two shards of a
// write mix and checks the table against the merged counts: every insert
// and delete the result reports happened once, and every update appended
// exactly one favourite.
func TestDatabaseHoldsExactlyWhatTheMergedResultReports(t *testing.T) {
	spec := tweetSpec()
	s := sessiontest.Start(t, spec)
	doc := runShards(t, s, spec, 2)
	ops := map[string]result.Operation{}
	for _, op := range doc.Totals {
		ops[op.Name] = op
		if n := op.ErrorCount(); n > 0 {
			t.Errorf("%s had %d errors: %v", op.Name, n, op.Errors)
		}
	}
	if doc.Overall.OK < 500 {
		t.Fatalf("only %d operations succeeded in 4 s at 160/s; the run did not happen as scheduled", doc.Overall.OK)
	}
	ctx := context.Background()
	var rows, favos int64
	row, err := s.Client.Single().Query(ctx, spanner.Statement{SQL: "SELECT COUNT(*), COALESCE(SUM(ARRAY_LENGTH(Favos)), 0) FROM Tweet"}).Next()
	if err != nil {
		t.Fatal(err)
	}
	if err := row.Columns(&rows, &favos); err != nil {
		t.Fatal(err)
	}
	inserted, deleted := int64(ops["insert"].Rows), int64(ops["delete"].Rows)
	if want := preloaded + inserted - deleted; rows != want {
		t.Errorf("Tweet holds %d rows; the result says %d preloaded + %d inserted - %d deleted = %d", rows, preloaded, inserted, deleted, want)
	}
	if updated := int64(ops["update"].Rows); favos != updated {
		t.Errorf("Tweet holds %d favourites; the result says %d updates", favos, updated)
	}
	if ops["insert"].OK == 0 || ops["delete"].Rows == 0 || ops["update"].OK == 0 {
		t.Errorf("the mix did not exercise every write: %+v", ops)
	}
}

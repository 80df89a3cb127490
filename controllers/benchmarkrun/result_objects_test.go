package benchmarkrun

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
)

// TestTheManagerReadsARunsObjectsOnlyUnderItsPrefix: whatever key a
// pointer names, the manager reads a run's objects through the bucket
// scoped to that run (runObjects), so another run's object, and a key
// that climbs out of the prefix, are refused as the result's fault
// (*bucket.ObjectError) while the run's own object reads.
func TestTheManagerReadsARunsObjectsOnlyUnderItsPrefix(t *testing.T) {
	ctx := context.Background()
	b, err := bucket.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	mine, theirs := runtest.Run("mine").Obj(), runtest.Run("theirs").Obj()
	doc := shardtest.Shard("mine", shardtest.Workload(10*time.Second), time.Now(), 0, 1)
	store := func(run string, uid string) bucket.Pointer {
		p, err := protocol.StoreResultObject(ctx, b, bucket.ReportKey(runtest.Namespace, run, uid), doc, protocol.ReportLimits())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	own, foreign := store(mine.Name, string(mine.UID)), store(theirs.Name, string(theirs.UID))

	scoped, err := runreport.RunObjects(b, mine)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := protocol.LoadObject(ctx, scoped, own, protocol.ReportLimits().Budget); err != nil {
		t.Fatalf("reading the run's own report: %v", err)
	}
	climbing := foreign
	climbing.Key = bucket.RunPrefix(runtest.Namespace, mine.Name, string(mine.UID)) + "../../theirs/" + string(theirs.UID) + "/report"
	for what, p := range map[string]bucket.Pointer{"another run's report": foreign, "a key climbing out": climbing} {
		_, err := protocol.LoadObject(ctx, scoped, p, protocol.ReportLimits().Budget)
		var oe *bucket.ObjectError
		if !errors.As(err, &oe) {
			t.Errorf("%s (%s): %v; want an *ObjectError refusing the key", what, p.Key, err)
		}
	}
	if _, err := scoped.DeletePrefix(ctx, bucket.RunPrefix(runtest.Namespace, theirs.Name, string(theirs.UID))); !errors.Is(err, bucket.ErrOutsideScope) {
		t.Errorf("deleting the other run's objects through the run's bucket: %v; want ErrOutsideScope", err)
	}
}

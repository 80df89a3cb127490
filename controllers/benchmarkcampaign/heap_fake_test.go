package benchmarkcampaign_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/heappeak"
	"github.com/spanbench/spanbench/internal/shardtest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
)

// campaignHeapBudget is what comparing a campaign's runs may take of the
// manager's heap: half its 512 MiB limit, the rest being the cache, the
// run controller's aggregation and the runtime's headroom.
const campaignHeapBudget = 256

// TestADenseCampaignComparesWithinHalfTheManagersMemory compares a 6 × 5
// campaign of dense runs (30 minutes, 10 operations, 10 s intervals, every
// histogram dense: shardtest.DensePool), each report an object of a
// file:// results bucket, and holds the comparison's heap peak under
// campaignHeapBudget MiB. Holding the 30 decoded reports at once, as the
// comparison did, would take several times the manager's limit.
func TestADenseCampaignComparesWithinHalfTheManagersMemory(t *testing.T) {
	b, err := bucket.Open(context.Background(), "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var rates []string
	for i := range 6 {
		rates = append(rates, fmt.Sprintf("r%d=%d", i, 60_000-1000*i)) // at least the 50,000/s a dense shard counts: within its schedule
	}
	c := testCampaign("dense", 5, 30, axis("rate", "workload.load.rate", rates...))
	c.Spec.Template.Spec.Workload = shardtest.DenseWorkload(30 * time.Minute)
	one := int32(1)
	c.Spec.Template.Spec.Runners.Replicas = &one
	// The fake client gives objects no UID; the API server does, and a
	// run's bucket keys are scoped by it.
	f := newFakeCampaign(t, c, interceptor.Funcs{Create: func(ctx context.Context, cl client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		if obj.GetUID() == "" {
			obj.SetUID(types.UID(fmt.Sprintf("uid-%s", obj.GetName())))
		}
		return cl.Create(ctx, obj, opts...)
	}})
	f.r.Results = b
	pool := shardtest.NewDensePool(256)
	// The cells share a database, so their runs go one at a time; the
	// pass after the last one ends compares them.
	for range 30 {
		f.settle()
		for _, run := range f.runs() {
			if !run.IsFinished() {
				writeDenseReport(t, f, b, pool, &run)
			}
		}
	}
	if n := len(f.runs()); n != 30 {
		t.Fatalf("%d runs; want 30 (6 cells × 5 repetitions)", n)
	}
	heap := heappeak.Start()
	began := time.Now()
	f.settle()
	peak := heap.MiB()
	st := f.campaign().Status
	if len(st.Iterations) != 1 || st.Iterations[0].Outcome != v1alpha1.IterationSucceeded || st.Comparison == nil || len(st.Comparison.Rows) == 0 {
		t.Fatalf("iterations %+v, comparison %+v; want one Succeeded iteration compared", st.Iterations, st.Comparison)
	}
	t.Logf("compared 30 dense runs (%d rows, verdict %s) in %s; heap peak %.1f MiB (%.1f MiB before)",
		len(st.Comparison.Rows), st.Verdict, time.Since(began).Round(time.Millisecond), peak, heap.BaseMiB())
	if peak > campaignHeapBudget {
		t.Errorf("comparing the campaign's 30 dense runs peaked at %.1f MiB of heap; want at most %d MiB", peak, campaignHeapBudget)
	}
}

// writeDenseReport ends run as the run controller would with a dense
// result: its one shard merged and checked, stored as the run's report
// object in b, the report ConfigMap pointing at it.
func writeDenseReport(t *testing.T, f *fakeCampaign, b *bucket.Bucket, pool shardtest.DensePool, run *v1alpha1.BenchmarkRun) {
	t.Helper()
	run.Status.StartTime = &metav1.Time{Time: t0}
	w := run.Spec.Workload.Resolved()
	e, err := protocol.ResultExpectation(run.Name, &run.Spec.Workload, t0, run.Spec.Deadlines.Resolve().Overrun, -1, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := result.NewCheckedMerger(e)
	if err := m.Add(pool.Shard(run.Name, w, t0, 0, 1)); err != nil {
		t.Fatal(err)
	}
	doc, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	p, err := protocol.StoreResultObject(context.Background(), b, bucket.ReportKey(run.Namespace, run.Name, string(run.UID)), doc, protocol.ReportLimits())
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ResultConfigMapName(run), Namespace: run.Namespace,
		Labels: v1alpha1.RunLabels(run)}, Data: p.Data()}
	writeReportAndSucceed(t, f.stored, run, cm)
}

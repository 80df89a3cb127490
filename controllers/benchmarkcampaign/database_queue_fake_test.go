package benchmarkcampaign_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// TestCampaignShowsARunQueuedForItsDatabase: a campaign's run that waits
// for a database another run holds (the run reconciler's DatabaseInUse)
// is named, with the holder, in the campaign's Reconciling message; once
// it holds its database, the message no longer says so.
func TestCampaignShowsARunQueuedForItsDatabase(t *testing.T) {
	c := testCampaign("queued", 1, 1, axis("rate", "workload.load.rate", "slow=50", "fast=100"))
	f := newFakeCampaign(t, c, interceptor.Funcs{})
	f.settle()
	runs := f.runs()
	if len(runs) != 1 {
		t.Fatalf("%d runs started on one database, want 1", len(runs))
	}
	run := &runs[0]
	const holder = "database emulator x is in use by run other/standalone: this run starts when that one ends"
	run.SetCondition(v1alpha1.ConditionDatabaseClaimed, metav1.ConditionFalse, v1alpha1.ReasonDatabaseInUse, holder, f.clock.Now())
	if err := f.stored.Status().Update(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	f.reconcile()
	got := meta.FindStatusCondition(f.campaign().Status.Conditions, v1alpha1.CampaignReconciling)
	if got == nil || got.Status != metav1.ConditionTrue || !strings.Contains(got.Message, "run "+run.Name+" is queued: "+holder) {
		t.Fatalf("Reconciling = %+v; want it to name the queued run %s and its holder", got, run.Name)
	}

	run.SetCondition(v1alpha1.ConditionDatabaseClaimed, metav1.ConditionTrue, v1alpha1.ReasonDatabaseClaimed, "held", f.clock.Now())
	if err := f.stored.Status().Update(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	f.reconcile()
	if got := meta.FindStatusCondition(f.campaign().Status.Conditions, v1alpha1.CampaignReconciling); strings.Contains(got.Message, "queued") {
		t.Errorf("Reconciling = %q once the run holds its database; want no queued run", got.Message)
	}
}

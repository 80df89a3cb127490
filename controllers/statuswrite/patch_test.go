package statuswrite_test

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/statuswrite"
)

func campaignStatus(c *v1alpha1.BenchmarkCampaign) any { return c.Status }

// TestPatchWritesAChangedStatusOnceAsItsOwnerLockedOnTheObjectsVersion:
// an unchanged status is not written; a changed one is, as FieldOwner; a
// write of the object's metadata in the same reconcile (obj's version
// moved with it) does not block it, another writer's (a stale read) does.
func TestPatchWritesAChangedStatusOnceAsItsOwnerLockedOnTheObjectsVersion(t *testing.T) {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	stored := &v1alpha1.BenchmarkCampaign{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns"}}
	writes, owners := 0, []string{}
	c := interceptor.NewClient(fake.NewClientBuilder().WithScheme(scheme).WithStatusSubresource(stored).WithObjects(stored).Build(),
		interceptor.Funcs{SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			writes++
			po := &client.SubResourcePatchOptions{}
			po.ApplyOptions(opts)
			owners = append(owners, po.FieldManager)
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		}})
	read := func() *v1alpha1.BenchmarkCampaign {
		got := &v1alpha1.BenchmarkCampaign{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(stored), got); err != nil {
			t.Fatal(err)
		}
		return got
	}

	obj := read()
	before := obj.DeepCopy()
	if written, err := statuswrite.Patch(ctx, c, before, obj, campaignStatus); err != nil || written || writes != 0 {
		t.Fatalf("unchanged status: %d writes, written %v (%v); want none", writes, written, err)
	}

	// This reconcile's own metadata write moves obj's version.
	obj.Labels = map[string]string{"own": "write"}
	if err := c.Update(ctx, obj); err != nil {
		t.Fatal(err)
	}
	obj.Status.ObservedGeneration = 1
	if written, err := statuswrite.Patch(ctx, c, before, obj, campaignStatus); err != nil || !written {
		t.Fatalf("a status write after the reconcile's own metadata write: written %v (%v); want it written", written, err)
	}
	if got := read().Status.ObservedGeneration; writes != 1 || got != 1 || owners[0] != statuswrite.FieldOwner {
		t.Fatalf("%d writes as %q, stored observedGeneration %d; want 1 write as %q storing 1", writes, owners, got, statuswrite.FieldOwner)
	}

	// Another writer moved the campaign since this reconcile read it.
	stale := read()
	before = stale.DeepCopy()
	other := read()
	other.Labels = map[string]string{"other": "writer"}
	if err := c.Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	stale.Status.ObservedGeneration = 2
	if written, err := statuswrite.Patch(ctx, c, before, stale, campaignStatus); written || !apierrors.IsConflict(err) {
		t.Fatalf("a status write decided on a stale read: written %v (%v); want a conflict", written, err)
	}
	if got := read().Status.ObservedGeneration; got != 1 {
		t.Fatalf("stored observedGeneration %d after a stale write; want 1 kept", got)
	}
}

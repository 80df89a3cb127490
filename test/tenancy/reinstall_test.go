package tenancy

import (
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/internal/await"
)

// TestAReinstalledPolicyStillAdmitsNormalRuns: an uninstall removes the
// policy and its binding, a reinstall brings them back. A policy with a
// built-in paramKind (the ConfigMap of opt-ins this policy once had) stops
// working for good after that: kube-apiserver stops the paramKind's
// informer once no binding uses it and never restarts it, so every run is
// then refused with "no params found" (kubernetes/kubernetes#133827; the
// e2e suite's Helm pass, after the kustomize pass's uninstall, hit exactly
// this). Not parallel: the policy is briefly gone.
func TestAReinstalledPolicyStillAdmitsNormalRuns(t *testing.T) {
	policy, err := policyObjects()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range policy {
		if err := admin.Delete(bounded(t), o); err != nil {
			t.Fatalf("uninstalling %s: %v", o.GetName(), err)
		}
	}
	probe := runWith("probe", serviceAccount("default"))
	await.Eventually(t, await.Poll{Within: 30 * time.Second, Every: 200 * time.Millisecond}, "the policy out of force", func() (bool, string) {
		err := create(t, tenant, probe)
		return err == nil, errString(err)
	})
	// The API server refreshes its policies every second: let it see none.
	await.Consistently(t, await.Poll{Within: 3 * time.Second, Every: 500 * time.Millisecond}, "no policy in force", func() (bool, string) {
		err := create(t, tenant, probe)
		return err == nil, errString(err)
	})
	policy, err = policyObjects()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range policy {
		o.SetResourceVersion("")
		if err := admin.Create(bounded(t), o); err != nil {
			t.Fatalf("reinstalling %s: %v", o.GetName(), err)
		}
	}
	await.Eventually(t, await.Poll{Within: 30 * time.Second, Every: 200 * time.Millisecond}, "the reinstalled policy in force", func() (bool, string) {
		err := create(t, tenant, probe)
		return err != nil && strings.Contains(err.Error(), `"default" is refused`), errString(err)
	})
	normal := runWith("normal", nil)
	await.Eventually(t, await.Poll{Within: 30 * time.Second, Every: 200 * time.Millisecond}, "a normal run admitted after the reinstall", func() (bool, string) {
		err := create(t, tenant, normal)
		return err == nil, errString(err)
	})
}

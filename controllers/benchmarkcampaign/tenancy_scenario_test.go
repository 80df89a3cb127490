package benchmarkcampaign_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/tenancy"
	"github.com/spanbench/spanbench/internal/await"
)

// TestCampaignScenarioRechecksRunsAgainstTheRecordedWriter: before it
// creates a run whose guarded fields differ from the template, the
// campaign controller asks the real API server (envtest's RBAC) whether
// the campaign's recorded writer may set them. A campaign (stored as if
// the webhook had let it through) whose axis value patches the runners'
// service account, recorded as written by a user with no rights, gets
// no run and is Stalled naming the field and the permission; the same
// campaign without a record gets no run either; recorded as written by a
// member of system:masters, its runs are created.
func TestCampaignScenarioRechecksRunsAgainstTheRecordedWriter(t *testing.T) {
	s := newCampaignScenario(t, "w")
	startCampaignManager(t, s.clk)
	patchedSA := func(name, writer string) *v1alpha1.BenchmarkCampaign {
		// Its own database, so that both cells' runs start at once.
		c := testCampaign(name, 1, 2, v1alpha1.MatrixAxis{Name: "who", Values: []v1alpha1.AxisValue{
			{Label: "own"},
			{Label: "wi", StrategicMergePatch: &apiextensionsv1.JSON{Raw: []byte(`{"runners":{"serviceAccountName":"wi-runner"},"target":{"database":"db-wi"}}`)}},
		}})
		if writer != "" {
			c.Annotations = map[string]string{tenancy.WriterAnnotation: writer}
		}
		return c
	}
	s.create(patchedSA("mallory", `{"username":"mallory","groups":["system:authenticated"]}`))
	s.create(patchedSA("unrecorded", ""))
	s.create(patchedSA("admin", `{"username":"someone","groups":["system:masters","system:authenticated"]}`))

	for name, want := range map[string][]string{
		"mallory":    {"runners.serviceAccountName", "wi-runner", "user mallory", "create pods in namespace " + s.ns, "impersonate serviceaccount " + s.ns + "/wi-runner"},
		"unrecorded": {"runners.serviceAccountName", tenancy.WriterAnnotation},
	} {
		got := s.awaitCampaign(name, name+"'s campaign Stalled", func(c *v1alpha1.BenchmarkCampaign) bool {
			return meta.IsStatusConditionTrue(c.Status.Conditions, v1alpha1.CampaignStalled)
		})
		cond := meta.FindStatusCondition(got.Status.Conditions, v1alpha1.CampaignStalled)
		if cond.Reason != "RunForbidden" {
			t.Errorf("%s: Stalled for %s %q, want RunForbidden", name, cond.Reason, cond.Message)
		}
		for _, w := range want {
			if !strings.Contains(cond.Message, w) {
				t.Errorf("%s: Stalled message does not say %q: %s", name, w, cond.Message)
			}
		}
	}
	// The run of the template's cell ("own") changes nothing guarded and
	// may exist; the patched one ("wi") exists only for the admin's.
	s.awaitCampaign("admin", "the admin-written campaign's patched run created", func(*v1alpha1.BenchmarkCampaign) bool {
		for _, r := range s.runsOf("admin", "") {
			if r.Spec.Runners.ServiceAccountName == "wi-runner" {
				return true
			}
		}
		return false
	})
	await.Consistently(t, await.Poll{Within: 2 * time.Second, Every: 200 * time.Millisecond}, "no run under wi-runner for mallory or without a record", func() (bool, string) {
		for _, name := range []string{"mallory", "unrecorded"} {
			for _, r := range s.runsOf(name, "") {
				if r.Spec.Runners.ServiceAccountName != "" {
					return false, fmt.Sprintf("%s's campaign got run %s under service account %s", name, r.Name, r.Spec.Runners.ServiceAccountName)
				}
			}
		}
		return true, ""
	})
}

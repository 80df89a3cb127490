package webhook

import (
	"context"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/spanbench/spanbench/campaign/tenancy"
)

// asUser is a context carrying an admission request by user name.
func asUser(name string) context.Context {
	req := admission.Request{}
	req.UserInfo = userInfo(name)
	return admission.NewContextWithRequest(context.Background(), req)
}

func userInfo(name string) authenticationv1.UserInfo {
	return authenticationv1.UserInfo{Username: name, Groups: []string{"system:authenticated"}}
}

// The validating webhook refuses a writer record that is not its own
// stamp, so that no request can forge it even without the mutating
// webhook: on a create or a change of spec it must name the request's
// user; on any other update it must stay as stored. A campaign without a
// record is admitted (the controller then refuses its guarded runs).
func TestValidateRefusesAForgedWriterRecord(t *testing.T) {
	v := CampaignValidator{}
	alice, bob := tenancy.Stamp(userInfo("alice")), tenancy.Stamp(userInfo("bob"))
	c := campaign(t, "r200", "200")
	if _, err := v.ValidateCreate(asUser("alice"), c); err != nil {
		t.Errorf("a campaign without a record: %v", err)
	}
	c.Annotations = map[string]string{tenancy.WriterAnnotation: alice}
	if _, err := v.ValidateCreate(asUser("alice"), c); err != nil {
		t.Errorf("a campaign recording its own writer: %v", err)
	}
	forged := c.DeepCopy()
	forged.Annotations[tenancy.WriterAnnotation] = bob
	_, err := v.ValidateCreate(asUser("alice"), forged)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "metadata.annotations["+tenancy.WriterAnnotation+"]") {
		t.Errorf("alice's create recording bob: %v, want Forbidden naming the annotation", err)
	}
	// A metadata update that changes the record is refused, one that keeps
	// it is admitted.
	relabelled := c.DeepCopy()
	relabelled.Labels = map[string]string{"team": "perf"}
	if _, err := v.ValidateUpdate(asUser("bob"), c, relabelled); err != nil {
		t.Errorf("bob relabels alice's campaign: %v", err)
	}
	relabelled.Annotations[tenancy.WriterAnnotation] = bob
	if _, err := v.ValidateUpdate(asUser("bob"), c, relabelled); !apierrors.IsForbidden(err) {
		t.Errorf("bob's metadata update recording himself: %v, want Forbidden", err)
	}
	// A change of spec must record its writer.
	edited := c.DeepCopy()
	edited.Spec.RunNow = "now"
	if _, err := v.ValidateUpdate(asUser("bob"), c, edited); !apierrors.IsForbidden(err) {
		t.Errorf("bob's spec change keeping alice as writer: %v, want Forbidden", err)
	}
	edited.Annotations[tenancy.WriterAnnotation] = bob
	if _, err := v.ValidateUpdate(asUser("bob"), c, edited); err != nil {
		t.Errorf("bob's spec change recording him: %v", err)
	}
}

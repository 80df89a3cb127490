package webhook

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

const campaignYAML = `
metadata: {name: c, namespace: default}
spec:
  template:
    spec:
      target: {project: spanbench-test, instance: {name: bench}, database: ycsb}
      workload:
        type: YCSB
        operations:
        - {name: point, type: Read, api: Read, weight: 1}
        load: {rate: 100}
        duration: 1m
  matrix:
    axes:
    - name: rate
      path: workload.load.rate
      values:
      - {label: r100, value: 100}
      - {label: LABEL, value: VALUE}
`

// campaign is campaignYAML whose second rate value is labelled label and
// worth value.
func campaign(t *testing.T, label, value string) *v1alpha1.BenchmarkCampaign {
	t.Helper()
	var c v1alpha1.BenchmarkCampaign
	y := strings.NewReplacer("LABEL", label, "VALUE", value).Replace(campaignYAML)
	if err := yaml.UnmarshalStrict([]byte(y), &c); err != nil {
		t.Fatal(err)
	}
	return &c
}

func TestValidateCreateNamesTheAxisValue(t *testing.T) {
	v := CampaignValidator{}
	if _, err := v.ValidateCreate(context.Background(), campaign(t, "r200", "200")); err != nil {
		t.Fatalf("a good campaign was denied: %v", err)
	}
	_, err := v.ValidateCreate(context.Background(), campaign(t, "neg", "-5"))
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !apiStatus(err, &status) {
		t.Fatalf("ValidateCreate = %v, want an Invalid status", err)
	}
	causes := status.Status().Details.Causes
	if len(causes) != 1 || causes[0].Field != "spec.matrix.axes[0].values[1]" ||
		!strings.Contains(causes[0].Message, `matrix axis "rate" value "neg" (path workload.load.rate) makes an invalid run: spec.workload.load.rate`) {
		t.Errorf("causes %+v, want one at spec.matrix.axes[0].values[1] naming the axis, value and run field", causes)
	}
}

// TestValidateUpdateChecksChangedSpecsOnly: an update that leaves an
// unplannable spec alone (a campaign stored before the webhook) passes, so
// that it can still be relabelled or have its finalizers removed.
func TestValidateUpdateChecksChangedSpecsOnly(t *testing.T) {
	v := CampaignValidator{}
	good, bad := campaign(t, "r200", "200"), campaign(t, "neg", "-5")
	relabelled := bad.DeepCopy()
	relabelled.Labels = map[string]string{"team": "perf"}
	if _, err := v.ValidateUpdate(context.Background(), bad, relabelled); err != nil {
		t.Errorf("a metadata-only update of a stored campaign was denied: %v", err)
	}
	if _, err := v.ValidateUpdate(context.Background(), good, bad); !apierrors.IsInvalid(err) {
		t.Errorf("an update making a cell invalid: %v, want it denied", err)
	}
}

func apiStatus(err error, out *apierrors.APIStatus) bool {
	s, ok := err.(apierrors.APIStatus) //nolint:errorlint // NewInvalid returns the status itself
	*out = s
	return ok && s.Status().Details != nil
}

// TestValidateCreateRunsTheGoValidation: the rules CEL cannot see (a value
// on an axis without a path) are enforced by the webhook, with
// BenchmarkCampaign.Validate's field.
func TestValidateCreateRunsTheGoValidation(t *testing.T) {
	c := campaign(t, "r200", "200")
	c.Spec.Matrix.Axes[0].Path = ""
	_, err := CampaignValidator{}.ValidateCreate(context.Background(), c)
	var status apierrors.APIStatus
	if !apiStatus(err, &status) {
		t.Fatalf("ValidateCreate = %v, want an Invalid status", err)
	}
	if causes := status.Status().Details.Causes; len(causes) != 2 || causes[0].Field != "spec.matrix.axes[0].values[0].value" {
		t.Errorf("causes %+v, want one per value at spec.matrix.axes[0].values[i].value", causes)
	}
}

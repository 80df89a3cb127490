package webhook

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/guardrails"
	"github.com/spanbench/spanbench/internal/pricetest"
	"github.com/spanbench/spanbench/spanner/pricing"
)

// pricedCampaign is campaignYAML on 1 node of regional-asia-northeast1,
// every day at 02:00 UTC: two cells of one 1-minute run each.
func pricedCampaign(t *testing.T) *v1alpha1.BenchmarkCampaign {
	c := campaign(t, "r200", "200")
	nodes, utc := int32(1), "UTC"
	c.Spec.Template.Spec.Target.Instance.Config, c.Spec.Template.Spec.Target.Instance.Nodes = "regional-asia-northeast1", &nodes
	c.Spec.Schedule, c.Spec.TimeZone = "0 2 * * *", &utc
	return c
}

// TestCampaignAboveTheMonthlyBoundIsRefusedAtAdmission: a scheduled
// campaign whose 30 days, at the test fixture's 1.00 USD per node-hour,
// cost more than --max-monthly-cost is refused on spec.schedule with the
// figure, the iterations and the flag; at the bound it is admitted; with
// no price under the bound it is refused with the reason; an unscheduled
// campaign has no month to bound.
func TestCampaignAboveTheMonthlyBoundIsRefusedAtAdmission(t *testing.T) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "spanbench-system", Name: "prices"},
		Data: map[string]string{guardrails.PriceOverrideKey: pricetest.Override}}
	reader := fake.NewClientBuilder().WithScheme(s).WithObjects(cm).Build()
	priced := guardrails.PriceSource{Reader: reader, ConfigMap: types.NamespacedName{Namespace: "spanbench-system", Name: "prices"}}
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	bound := func(s string) guardrails.CostLimits {
		l, err := pricing.ParseLimit(s)
		if err != nil {
			t.Fatal(err)
		}
		return guardrails.CostLimits{MaxMonthlyCost: l}
	}
	// One run: 1000 PU × 1 min × 1.00/node-hour = 0.016667; two cells;
	// 30 iterations (Jan 1 to Jan 30 at 02:00) = 1.00002.
	const month = "1.00002"
	for _, tc := range []struct {
		name   string
		costs  Costs
		edit   func(*v1alpha1.BenchmarkCampaign)
		refuse []string
	}{
		{"above the bound", Costs{Limits: bound("1"), Prices: priced, Clock: clock}, nil,
			[]string{"the campaign's projected cost for 30 days USD " + month + " exceeds the limit of USD 1.00 (--max-monthly-cost)", "30 iterations in 30 days at USD 0.033334 each"}},
		{"at the bound", Costs{Limits: bound(month), Prices: priced, Clock: clock}, nil, nil},
		{"no price under a bound", Costs{Limits: bound("1000"), Clock: clock}, nil,
			[]string{"no price for regional-asia-northeast1", "cannot be checked", "--max-monthly-cost"}},
		{"no schedule", Costs{Limits: bound("0.01"), Prices: priced, Clock: clock},
			func(c *v1alpha1.BenchmarkCampaign) { c.Spec.Schedule, c.Spec.TimeZone = "", nil }, nil},
		{"no bound", Costs{Prices: priced, Clock: clock}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pricedCampaign(t)
			if tc.edit != nil {
				tc.edit(c)
			}
			_, err := CampaignValidator{Costs: tc.costs}.ValidateCreate(context.Background(), c)
			if tc.refuse == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var status apierrors.APIStatus
			if !apierrors.IsInvalid(err) || !apiStatus(err, &status) {
				t.Fatalf("ValidateCreate = %v; want an Invalid status", err)
			}
			causes := status.Status().Details.Causes
			if len(causes) != 1 || causes[0].Field != "spec.schedule" {
				t.Fatalf("causes %+v; want one on spec.schedule", causes)
			}
			for _, want := range tc.refuse {
				if !strings.Contains(causes[0].Message, want) {
					t.Errorf("message %q lacks %q", causes[0].Message, want)
				}
			}
		})
	}
}

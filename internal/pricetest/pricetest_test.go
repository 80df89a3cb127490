package pricetest

import (
	"testing"

	"github.com/spanbench/spanbench/spanner/pricing"
)

func TestOverrideIsAValidCatalogPricingTheTestConfigurations(t *testing.T) {
	base, err := pricing.Default()
	if err != nil {
		t.Fatal(err)
	}
	c, err := pricing.Override(base, []byte(Override))
	if err != nil {
		t.Fatalf("the test fixture does not validate: %v", err)
	}
	for _, config := range []string{"regional-asia-northeast1", "regional-us-central1", "asia1"} {
		if _, ok, why := c.Lookup(config, ""); !ok {
			t.Errorf("%s is not priced: %s", config, why)
		}
	}
}

package pricetest

import "testing"

func TestOverrideIsAValidCatalogPricingTheTestConfigurations(t *testing.T) {
	c := Catalog(t)
	for _, config := range []string{"regional-asia-northeast1", "regional-us-central1", "asia1"} {
		if _, ok, why := c.Lookup(config, ""); !ok {
			t.Errorf("%s is not priced: %s", config, why)
		}
	}
}

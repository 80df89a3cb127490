package pricing

import (
	"os"
	"strings"
	"testing"
)

// testdata/skus-fixture.json is two services.skus.list pages built from the
// API's documented schema (Sku, Category, PricingInfo, PricingExpression,
// TierRate, google.type.Money; see billing.go for the references). Only
// the SKU name "Additional Read Only Replica (Iowa)" and its ID are real
// (Google's Cloud Spanner Compute SKU group page); the other descriptions
// are in the form the parser recognizes and are marked "fixture": the real
// forms of Spanner's compute and storage SKUs could not be confirmed. The
// amounts are test values, not prices.
func TestCatalogFromRecordedSKUs(t *testing.T) {
	in, err := os.Open("testdata/skus-fixture.json")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	skus, err := ReadSKUPages(in)
	if err != nil || len(skus) != 8 {
		t.Fatalf("ReadSKUPages: %d SKUs, %v; want both pages' 8", len(skus), err)
	}
	f, skipped, err := CatalogFromSKUs(skus, "USD", "2026-11-29")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range f.Prices {
		got[e.Config+"/"+string(e.Edition)] = e.NodeHour + "|" + e.StorageGiBMonth + "|" + strings.Join(e.SKUs, ",")
	}
	want := map[string]string{
		// The last pricingInfo is the current price (1.25, not 0.8).
		"regional-us-central1/Standard": "1.25|0.123456789|TEST-0000-0001,TEST-0000-0002",
		"nam3/EnterprisePlus":           "4||TEST-0000-0003",
	}
	if len(got) != len(want) {
		t.Errorf("catalog = %v; want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q; want %q", k, got[k], v)
		}
	}
	reasons := map[string]string{}
	for _, s := range skipped {
		reasons[s.SKUID] = s.Reason
	}
	for id, want := range map[string]string{
		"8C24-2349-A557": `a "replica" SKU`,
		"TEST-0000-0005": `a "backup" SKU`,
		"TEST-0000-0006": `usage type "Commit1Yr"`,
		"TEST-0000-0007": "names no edition",
		"TEST-0000-0008": "2 price tiers",
	} {
		if !strings.Contains(reasons[id], want) {
			t.Errorf("SKU %s skipped because %q; want %q", id, reasons[id], want)
		}
	}
	// The file the refresh writes is a catalog this package reads back.
	b, err := MarshalFile(f)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(b)
	if err != nil {
		t.Fatalf("the refreshed file does not parse: %v\n%s", err, b)
	}
	if r, ok, _ := c.Lookup("regional-us-central1", Standard); !ok || r.NodeHour.FloatString(2) != "1.25" {
		t.Errorf("read back: %+v, %v", r, ok)
	}
}

func TestSKURefusals(t *testing.T) {
	sku := func(units string, nanos int64, cur string) SKU {
		return SKU{SKUID: "X", Description: "Spanner Instance Standard Edition Node", ServiceRegions: []string{"r1"},
			Category:    SKUCategory{ServiceDisplayName: "Cloud Spanner", UsageType: "OnDemand"},
			PricingInfo: []PricingInfo{{PricingExpression: PricingExpression{UsageUnit: "h", TieredRates: []TierRate{{UnitPrice: UnitPrice{CurrencyCode: cur, Units: units, Nanos: nanos}}}}}}}
	}
	if f, _, err := CatalogFromSKUs([]SKU{sku("1", 5, "USD")}, "USD", "2026-11-29"); err != nil || f.Prices[0].NodeHour != "1.000000005" {
		t.Fatalf("the base SKU: %v, %v", f, err)
	}
	for name, tc := range map[string]struct {
		s    SKU
		want string
	}{
		"other currency": {sku("1", 0, "EUR"), `priced in "EUR"`},
		"bad units":      {sku("one", 0, "USD"), `units "one" is not an integer`},
		"nanos range":    {sku("1", 2e9, "USD"), "nanos 2000000000 out of range"},
		"mixed signs":    {sku("1", -5, "USD"), "out of range"},
	} {
		_, skipped, err := CatalogFromSKUs([]SKU{tc.s}, "USD", "2026-11-29")
		if err != nil || len(skipped) != 1 || !strings.Contains(skipped[0].Reason, tc.want) {
			t.Errorf("%s: skipped %v, %v; want a skip saying %q", name, skipped, err, tc.want)
		}
	}
	// A negative or zero price is refused by the catalog's own checks.
	if _, _, err := CatalogFromSKUs([]SKU{sku("-1", 0, "USD")}, "USD", "2026-11-29"); err == nil || !strings.Contains(err.Error(), "is negative") {
		t.Errorf("a negative SKU price: %v; want the catalog's refusal", err)
	}
	two := []SKU{sku("1", 0, "USD"), sku("2", 0, "USD")}
	if _, _, err := CatalogFromSKUs(two, "USD", "2026-11-29"); err == nil || !strings.Contains(err.Error(), "both price regional-r1 (Standard) nodeHour") {
		t.Errorf("two SKUs for one price: %v; want a refusal", err)
	}
	if _, err := ReadSKUPages(strings.NewReader(`{"skus": [`)); err == nil || !strings.Contains(err.Error(), "SKU page 1 does not parse") {
		t.Errorf("a truncated page: %v", err)
	}
}

// Package pricetest holds a price override for tests. Its figures are a
// test fixture, chosen for round arithmetic: they are not Cloud Spanner's
// prices, and nothing outside tests may use them.
package pricetest

import (
	"testing"

	"github.com/spanbench/spanbench/spanner/pricing"
)

// Override is a price override (docs/cost.md's format) that prices the
// configurations the test runs use: 1.00 USD per node-hour and 0.50 USD
// per GiB-month in every edition that applies, 0.04 USD per runner
// vCPU-hour. A TEST FIXTURE, not a price.
const Override = `version: 1
mode: Replace
currency: USD
takenOn: "2026-11-29"
sources: [https://example.invalid/spanbench-test-fixture-not-a-price]
runnerVCPUHour: "0.04"
prices:
  - config: regional-asia-northeast1
    edition: Standard
    nodeHour: "1.00"
    storageGiBMonth: "0.50"
  - config: regional-us-central1
    edition: Standard
    nodeHour: "1.00"
    storageGiBMonth: "0.50"
  - config: asia1
    edition: EnterprisePlus
    nodeHour: "3.00"
    storageGiBMonth: "1.00"
`

// Catalog is the embedded catalog overridden by Override: what a manager
// given the fixture as its price ConfigMap prices with.
func Catalog(t testing.TB) *pricing.Catalog {
	t.Helper()
	base, err := pricing.Default()
	if err != nil {
		t.Fatal(err)
	}
	c, err := pricing.Override(base, []byte(Override))
	if err != nil {
		t.Fatalf("the price fixture: %v", err)
	}
	return c
}

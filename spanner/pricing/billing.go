package pricing

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// The Cloud Billing Catalog API lists a service's SKUs with their public
// prices: GET https://cloudbilling.googleapis.com/v1/services/{service}/skus
// (services.skus.list; https://cloud.google.com/billing/docs/reference/rest/v1/services.skus/list,
// https://cloud.google.com/billing/v1/how-tos/catalog-api). Cloud Spanner
// is service CC63-0873-48FD (Google's SKU pages,
// https://cloud.google.com/skus/sku-groups/cloud-spanner-compute).

// SpannerService is Cloud Spanner's service ID in the Billing Catalog.
const SpannerService = "CC63-0873-48FD"

// SKUPage is one page of a services.skus.list response, the fields this
// parser reads (the documented schema: Sku, Category, PricingInfo,
// PricingExpression, TierRate, Money).
type SKUPage struct {
	SKUs          []SKU  `json:"skus"`
	NextPageToken string `json:"nextPageToken"`
}

// SKU is a Billing Catalog SKU.
type SKU struct {
	Name           string        `json:"name"`
	SKUID          string        `json:"skuId"`
	Description    string        `json:"description"`
	Category       SKUCategory   `json:"category"`
	ServiceRegions []string      `json:"serviceRegions"`
	PricingInfo    []PricingInfo `json:"pricingInfo"`
}

// SKUCategory is a SKU's category.
type SKUCategory struct {
	ServiceDisplayName string `json:"serviceDisplayName"`
	ResourceFamily     string `json:"resourceFamily"`
	ResourceGroup      string `json:"resourceGroup"`
	UsageType          string `json:"usageType"`
}

// PricingInfo is one dated price of a SKU.
type PricingInfo struct {
	EffectiveTime     string            `json:"effectiveTime"`
	PricingExpression PricingExpression `json:"pricingExpression"`
}

// PricingExpression is how a SKU's usage is priced.
type PricingExpression struct {
	UsageUnit   string     `json:"usageUnit"`
	TieredRates []TierRate `json:"tieredRates"`
}

// TierRate is the price from a usage amount on.
type TierRate struct {
	StartUsageAmount float64   `json:"startUsageAmount"`
	UnitPrice        UnitPrice `json:"unitPrice"`
}

// UnitPrice is google.type.Money: units (an int64, in JSON a string) and
// nanos.
type UnitPrice struct {
	CurrencyCode string `json:"currencyCode"`
	Units        string `json:"units"`
	Nanos        int64  `json:"nanos"`
}

// Skipped is a Spanner SKU the parser did not turn into a price, and why:
// the refresh prints them, so an operator sees what was left out.
type Skipped struct {
	SKUID, Description, Reason string
}

// Input bounds of a refresh: the whole listing is read into memory.
const (
	maxSKUBytes = 64 << 20
	maxSKUPages = 200
)

// ReadSKUPages reads one or more services.skus.list pages, concatenated
// as the refresh script saves them.
func ReadSKUPages(r io.Reader) ([]SKU, error) {
	dec := json.NewDecoder(io.LimitReader(r, maxSKUBytes+1))
	var all []SKU
	for pages := 0; ; pages++ {
		var p SKUPage
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("SKU page %d does not parse (at byte %d): %w", pages+1, dec.InputOffset(), err)
		}
		if pages >= maxSKUPages {
			return nil, fmt.Errorf("more than %d SKU pages", maxSKUPages)
		}
		all = append(all, p.SKUs...)
	}
	if dec.InputOffset() > maxSKUBytes {
		return nil, fmt.Errorf("SKU listing larger than %d bytes", maxSKUBytes)
	}
	return all, nil
}

// multiRegion finds a multi-region configuration's ID in a description
// (nam3, eur6, asia1, nam-eur-asia1, ...).
var multiRegion = regexp.MustCompile(`\b(nam-eur-asia[0-9]+|nam[0-9]+|eur[0-9]+|asia[0-9]+)\b`)

// notInstanceCompute are description words of Spanner SKUs that are not an
// instance's compute or database storage: read-only replicas added to a
// configuration, backups, Data Boost, cross-region replication traffic,
// committed-use commitments.
var notInstanceCompute = []string{"replica", "backup", "data boost", "replication", "commit", "egress", "network"}

// CatalogFromSKUs turns Spanner's SKUs into a catalog file in currency,
// taken on takenOn. The mapping from a SKU to a configuration and an
// edition reads the SKU's description and service regions; see
// docs/cost.md ("Refreshing") for the forms it recognizes and what it
// could not confirm. SKUs it cannot map are returned as skipped.
func CatalogFromSKUs(skus []SKU, cur, takenOn string) (*File, []Skipped, error) {
	type slot struct {
		entry FileEntry
		skus  []string
	}
	slots := map[key]*slot{}
	var skipped []Skipped
	skip := func(s SKU, why string) { skipped = append(skipped, Skipped{s.SKUID, s.Description, why}) }
	for _, s := range skus {
		k, kind, price, why := classify(s, cur)
		if why != "" {
			skip(s, why)
			continue
		}
		config, edition := k.config, k.edition
		sl := slots[k]
		if sl == nil {
			sl = &slot{entry: FileEntry{Config: config, Edition: edition}}
			slots[k] = sl
		}
		field := &sl.entry.NodeHour
		if kind == "storage" {
			field = &sl.entry.StorageGiBMonth
		}
		if *field != "" {
			return nil, nil, fmt.Errorf("SKUs %s and %s both price %s (%s) %s", strings.Join(sl.skus, ","), s.SKUID, config, edition, kind)
		}
		*field = formatDecimal(price)
		sl.skus = append(sl.skus, s.SKUID)
	}
	f := &File{Version: 1, Currency: cur, TakenOn: takenOn,
		Sources: []string{"https://cloudbilling.googleapis.com/v1/services/" + SpannerService + "/skus"}}
	for _, sl := range slots {
		sort.Strings(sl.skus)
		sl.entry.SKUs = sl.skus
		f.Prices = append(f.Prices, sl.entry)
	}
	sort.Slice(f.Prices, func(i, j int) bool {
		a, b := f.Prices[i], f.Prices[j]
		return a.Config < b.Config || a.Config == b.Config && a.Edition < b.Edition
	})
	if _, err := f.catalog(); err != nil {
		return nil, nil, fmt.Errorf("the SKUs make an invalid catalog: %w", err)
	}
	return f, skipped, nil
}

// classify maps one SKU to the configuration, edition and kind (nodeHour
// or storage) it prices, or says why it does not.
func classify(s SKU, cur string) (k key, kind string, price *big.Rat, why string) {
	if s.Category.ServiceDisplayName != "" && s.Category.ServiceDisplayName != "Cloud Spanner" {
		return key{}, "", nil, "not a Cloud Spanner SKU"
	}
	if s.Category.UsageType != "OnDemand" {
		return key{}, "", nil, fmt.Sprintf("usage type %q, not OnDemand", s.Category.UsageType)
	}
	d := strings.ToLower(s.Description)
	if w := firstIn(d, notInstanceCompute); w != "" {
		return key{}, "", nil, fmt.Sprintf("a %q SKU, not instance compute or database storage", w)
	}
	price, unit, err := lastPrice(s, cur)
	if err != nil {
		return key{}, "", nil, err.Error()
	}
	switch {
	case unit == "h" && strings.Contains(d, "node"):
		kind = "nodeHour"
	case unit == "GiBy.mo" && strings.Contains(d, "storage"):
		kind = "storage"
	default:
		return key{}, "", nil, fmt.Sprintf("usage unit %q with this description is neither a node-hour nor a GiB-month of storage", unit)
	}
	config, err := configOf(s)
	if err != nil {
		return key{}, "", nil, err.Error()
	}
	edition := editionOf(d)
	if edition == "" {
		return key{}, "", nil, "its description names no edition (Standard, Enterprise, Enterprise Plus)"
	}
	return key{config, edition}, kind, price, ""
}

func firstIn(s string, words []string) string {
	for _, w := range words {
		if strings.Contains(s, w) {
			return w
		}
	}
	return ""
}

// lastPrice is a SKU's current price (its last pricingInfo) in cur and the
// unit it is per. Only a flat price is read: one tier from 0, or a free
// tier followed by one paid tier would be a different model, refused.
func lastPrice(s SKU, cur string) (*big.Rat, string, error) {
	if len(s.PricingInfo) == 0 {
		return nil, "", errors.New("no pricingInfo")
	}
	e := s.PricingInfo[len(s.PricingInfo)-1].PricingExpression
	if len(e.TieredRates) != 1 || e.TieredRates[0].StartUsageAmount != 0 {
		return nil, "", fmt.Errorf("%d price tiers; only a flat price is read", len(e.TieredRates))
	}
	p := e.TieredRates[0].UnitPrice
	if p.CurrencyCode != cur {
		return nil, "", fmt.Errorf("priced in %q, not %s", p.CurrencyCode, cur)
	}
	units, ok := new(big.Int).SetString(orZero(p.Units), 10)
	if !ok {
		return nil, "", fmt.Errorf("unitPrice.units %q is not an integer", p.Units)
	}
	if p.Nanos <= -1e9 || p.Nanos >= 1e9 || units.Sign()*int(sign(p.Nanos)) < 0 {
		return nil, "", fmt.Errorf("unitPrice.nanos %d out of range for units %s", p.Nanos, units)
	}
	r := new(big.Rat).SetInt(units)
	r.Add(r, big.NewRat(p.Nanos, 1_000_000_000))
	return r, e.UsageUnit, nil
}

func orZero(s string) string {
	if s == "" {
		return "0"
	}
	return s
}

func sign(n int64) int64 {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// configOf is the instance configuration a SKU prices: a multi-region
// configuration its description names, else the regional configuration
// of its single service region.
func configOf(s SKU) (string, error) {
	if m := multiRegion.FindString(strings.ToLower(s.Description)); m != "" {
		return m, nil
	}
	if len(s.ServiceRegions) != 1 {
		return "", fmt.Errorf("service regions %v name no single region and the description no multi-region configuration", s.ServiceRegions)
	}
	return "regional-" + s.ServiceRegions[0], nil
}

// editionOf is the edition a description names; Enterprise Plus is
// looked for before Enterprise.
func editionOf(d string) Edition {
	switch {
	case strings.Contains(d, "enterprise plus"):
		return EnterprisePlus
	case strings.Contains(d, "enterprise"):
		return Enterprise
	case strings.Contains(d, "standard"):
		return Standard
	}
	return ""
}

// MarshalFile writes a catalog file in the catalog's syntax.
func MarshalFile(f *File) ([]byte, error) {
	b, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(b)
}

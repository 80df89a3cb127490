package pricing

import (
	_ "embed"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"sort"
	"strings"
	"time"

	"golang.org/x/text/currency"
	"sigs.k8s.io/yaml"
)

// Edition is a Spanner edition, spelled as the BenchmarkRun API spells it
// (api/v1alpha1.Edition converts directly).
type Edition string

// The editions whose prices differ.
const (
	Standard       Edition = "Standard"
	Enterprise     Edition = "Enterprise"
	EnterprisePlus Edition = "EnterprisePlus"
)

// EmulatorConfig is the only instance configuration the emulator lists.
// It has no Cloud Spanner price: a run on the emulator is priced as the
// configuration it declares (an instance created on the emulator keeps the
// declared name), and a run naming emulator-config itself is unknown.
const EmulatorConfig = "emulator-config"

// DefaultEdition is the edition Spanner gives an instance created without
// one: the lowest that supports its configuration. Regional configurations
// start at Standard; dual- and multi-region configurations exist only in
// Enterprise Plus (Spanner editions overview,
// https://cloud.google.com/spanner/docs/editions-overview).
func DefaultEdition(config string) Edition {
	if strings.HasPrefix(config, "regional-") {
		return Standard
	}
	return EnterprisePlus
}

// Catalog limits: a catalog or an override is untrusted input (a
// ConfigMap, a flag's file), read whole, so its size is bounded.
const (
	maxCatalogBytes = 1 << 20
	maxEntries      = 5000
)

// maxPrice is the sanity ceiling of any price in a catalog, in its
// currency's units per node-hour, per GiB-month or per vCPU-hour. No ISO
// 4217 currency prices a Spanner node-hour anywhere near it, even the
// weakest; a larger figure is a slip (a price per month typed as per hour,
// micro-units typed as units, an extra group of zeros) that would
// otherwise print a plausible-looking, wildly wrong cost.
var maxPrice = big.NewRat(10_000_000, 1)

// maxRatioToPublic bounds an override entry against the public price it
// replaces, when both are in one currency: a committed-use discount or a
// negotiated price is a fraction of the public one, never a hundredth of
// it or a hundred times it. Outside that band the figure is in the wrong
// unit: a month is 730 hours, a node 1000 processing units.
var maxRatioToPublic = big.NewRat(100, 1)

// File is the catalog's file format (prices.yaml; an override has the same
// format). Prices are decimal strings, read exactly.
type File struct {
	// Version is the format's version: 1.
	Version int `json:"version"`
	// Currency is the ISO 4217 code of every price in the file.
	Currency string `json:"currency"`
	// TakenOn is the date (YYYY-MM-DD) the figures were read from their
	// sources.
	TakenOn string `json:"takenOn"`
	// Sources are the pages or APIs the figures come from.
	Sources []string `json:"sources"`
	// Mode, in an override only: Merge (the default) replaces the base
	// catalog's entries the override names and keeps the others; Replace
	// uses the override alone. An override in another currency than the
	// base must Replace: a merge would mix currencies.
	Mode string `json:"mode,omitempty"`
	// RunnerVCPUHour is the price of one vCPU-hour of the runner pods'
	// compute, when the admin gives one; absent leaves it uncounted.
	RunnerVCPUHour string `json:"runnerVCPUHour,omitempty"`
	// Prices are the compute and storage prices per configuration and
	// edition.
	Prices []FileEntry `json:"prices"`
	// Unpriced are configurations known to have no price here, each with
	// the reason: a sample may use one, and its cost is then unknown.
	Unpriced []Unpriced `json:"unpriced,omitempty"`
}

// FileEntry is one configuration's prices in one edition.
type FileEntry struct {
	// Config is the instance configuration's ID (regional-us-central1,
	// nam3, asia1).
	Config string `json:"config"`
	// Edition is Standard, Enterprise or EnterprisePlus.
	Edition Edition `json:"edition"`
	// NodeHour is the compute price of one node (1000 processing units)
	// for one hour.
	NodeHour string `json:"nodeHour,omitempty"`
	// StorageGiBMonth is the SSD storage price of one GiB for one month.
	StorageGiBMonth string `json:"storageGiBMonth,omitempty"`
	// Source is where these figures come from, when not the file's
	// sources.
	Source string `json:"source,omitempty"`
	// SKUs are the Billing Catalog SKU IDs a refresh read the figures
	// from.
	SKUs []string `json:"skus,omitempty"`
}

// Unpriced is a configuration without a price, and why.
type Unpriced struct {
	Config string `json:"config"`
	Reason string `json:"reason"`
}

// Catalog is a validated price table. Its zero value prices nothing.
type Catalog struct {
	currency string
	takenOn  string
	sources  []string
	vcpuHour *big.Rat
	rates    map[key]Rate
	unpriced map[string]string
}

type key struct {
	config  string
	edition Edition
}

// Rate is the price of one configuration in one edition. A nil price is
// absent: what it prices is unknown.
type Rate struct {
	Config   string
	Edition  Edition
	Currency string
	// NodeHour and StorageGiBMonth are exact; nil when absent.
	NodeHour        *big.Rat
	StorageGiBMonth *big.Rat
	Source          string
}

//go:embed prices.yaml
var embedded []byte

// Default is the catalog embedded in the binary (prices.yaml).
func Default() (*Catalog, error) {
	c, err := Parse(embedded)
	if err != nil {
		return nil, fmt.Errorf("embedded price catalog: %w", err)
	}
	return c, nil
}

// Currency is the catalog's ISO 4217 code.
func (c *Catalog) Currency() string { return c.currency }

// TakenOn is the date the catalog's figures were taken.
func (c *Catalog) TakenOn() string { return c.takenOn }

// Sources are where the catalog's figures come from.
func (c *Catalog) Sources() []string { return append([]string(nil), c.sources...) }

// Parse reads and validates a catalog file. Every refusal names the entry
// and the field.
func Parse(data []byte) (*Catalog, error) {
	f, err := decode(data)
	if err != nil {
		return nil, err
	}
	return f.catalog()
}

// decode reads a file strictly: unknown fields are refused, and a syntax
// error carries its line.
func decode(data []byte) (*File, error) {
	if len(data) > maxCatalogBytes {
		return nil, fmt.Errorf("price catalog: %d bytes, more than the %d a catalog may have", len(data), maxCatalogBytes)
	}
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("price catalog does not parse: %w", err)
	}
	return &f, nil
}

func (f *File) catalog() (*Catalog, error) {
	if err := f.checkHeader(); err != nil {
		return nil, err
	}
	if len(f.Prices)+len(f.Unpriced) > maxEntries {
		return nil, fmt.Errorf("price catalog: %d entries, more than %d", len(f.Prices)+len(f.Unpriced), maxEntries)
	}
	c := &Catalog{currency: f.Currency, takenOn: f.TakenOn, sources: f.Sources,
		rates: map[key]Rate{}, unpriced: map[string]string{}}
	if f.RunnerVCPUHour != "" {
		var err error
		if c.vcpuHour, err = checkPrice(f.RunnerVCPUHour); err != nil {
			return nil, fmt.Errorf("price catalog: runnerVCPUHour: %w", err)
		}
	}
	for i, e := range f.Prices {
		r, err := e.rate(f.Currency)
		if err != nil {
			return nil, fmt.Errorf("price catalog: prices[%d] (%s, %s): %w", i, e.Config, e.Edition, err)
		}
		k := key{e.Config, e.Edition}
		if _, dup := c.rates[k]; dup {
			return nil, fmt.Errorf("price catalog: prices[%d] (%s, %s): a second entry for this configuration and edition", i, e.Config, e.Edition)
		}
		c.rates[k] = r
	}
	for i, u := range f.Unpriced {
		switch {
		case !configSyntax(u.Config):
			return nil, fmt.Errorf("price catalog: unpriced[%d]: config %q is not an instance configuration ID", i, u.Config)
		case strings.TrimSpace(u.Reason) == "":
			return nil, fmt.Errorf("price catalog: unpriced[%d] (%s): reason is empty; say why it has no price", i, u.Config)
		}
		c.unpriced[u.Config] = u.Reason
	}
	return c, nil
}

// checkHeader checks the file's fields outside its entries.
func (f *File) checkHeader() error {
	if f.Version != 1 {
		return fmt.Errorf("price catalog: version %d; this binary reads version 1", f.Version)
	}
	cur, err := currency.ParseISO(f.Currency)
	if err != nil || cur.String() != f.Currency {
		return fmt.Errorf("price catalog: currency %q is not an ISO 4217 code (USD, EUR, JPY, ...)", f.Currency)
	}
	if _, err := time.Parse(time.DateOnly, f.TakenOn); err != nil {
		return fmt.Errorf("price catalog: takenOn %q is not a date (YYYY-MM-DD)", f.TakenOn)
	}
	if len(f.Sources) == 0 {
		return errors.New("price catalog: sources is empty; say where the figures come from")
	}
	for i, s := range f.Sources {
		if err := checkSource(s); err != nil {
			return fmt.Errorf("price catalog: sources[%d]: %w", i, err)
		}
	}
	switch f.Mode {
	case "", "Merge", "Replace":
	default:
		return fmt.Errorf("price catalog: mode %q is neither Merge nor Replace", f.Mode)
	}
	return nil
}

func (e FileEntry) rate(cur string) (Rate, error) {
	if !configSyntax(e.Config) {
		return Rate{}, fmt.Errorf("config %q is not an instance configuration ID", e.Config)
	}
	if e.Config == EmulatorConfig {
		return Rate{}, fmt.Errorf("config %s is the emulator's; it has no Cloud Spanner price (a run on the emulator is priced as the configuration it declares)", EmulatorConfig)
	}
	switch e.Edition {
	case Standard, Enterprise, EnterprisePlus:
	default:
		return Rate{}, fmt.Errorf("edition %q is none of Standard, Enterprise, EnterprisePlus", e.Edition)
	}
	if e.NodeHour == "" && e.StorageGiBMonth == "" {
		return Rate{}, errors.New("neither nodeHour nor storageGiBMonth is given")
	}
	r := Rate{Config: e.Config, Edition: e.Edition, Currency: cur, Source: e.Source}
	var err error
	if e.NodeHour != "" {
		if r.NodeHour, err = checkPrice(e.NodeHour); err != nil {
			return Rate{}, fmt.Errorf("nodeHour: %w", err)
		}
	}
	if e.StorageGiBMonth != "" {
		if r.StorageGiBMonth, err = checkPrice(e.StorageGiBMonth); err != nil {
			return Rate{}, fmt.Errorf("storageGiBMonth: %w", err)
		}
	}
	if e.Source != "" {
		if err := checkSource(e.Source); err != nil {
			return Rate{}, fmt.Errorf("source: %w", err)
		}
	}
	return r, nil
}

// checkPrice reads a price and keeps it within (0, maxPrice]. Zero is
// refused too: a zero price would report a free run; leave the entry out
// and the cost is unknown.
func checkPrice(s string) (*big.Rat, error) {
	r, err := parseDecimal(s)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Sign() < 0:
		return nil, fmt.Errorf("%s is negative", s)
	case r.Sign() == 0:
		return nil, fmt.Errorf("%s is zero; leave the entry out to have its cost unknown, never free", s)
	case r.Cmp(maxPrice) > 0:
		return nil, fmt.Errorf("%s is above %s, the ceiling of any plausible price in any currency (a per-month figure or micro-units typed as units?)", s, maxPrice.FloatString(0))
	}
	return r, nil
}

func checkSource(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", s)
	}
	return nil
}

// configSyntax is an instance configuration ID's form: lower-case letters,
// digits and hyphens, 2 to 64 characters, starting with a letter.
func configSyntax(s string) bool {
	if len(s) < 2 || len(s) > 64 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

// Lookup is the rate of a configuration in an edition (the configuration's
// default edition when edition is ""). ok is false, with the reason in
// why, when the catalog has no price for it.
func (c *Catalog) Lookup(config string, edition Edition) (r Rate, ok bool, why string) {
	if edition == "" {
		edition = DefaultEdition(config)
	}
	if config == EmulatorConfig {
		return Rate{}, false, "emulator-config has no Cloud Spanner price; declare the configuration to price the run as"
	}
	if r, ok := c.rates[key{config, edition}]; ok {
		return r, true, ""
	}
	if reason, ok := c.unpriced[config]; ok {
		return Rate{}, false, fmt.Sprintf("no price for %s: %s", config, reason)
	}
	return Rate{}, false, fmt.Sprintf("no price for %s (%s) in the catalog taken %s", config, edition, c.takenOn)
}

// Configs lists the configurations the catalog prices or documents as
// unpriced, sorted.
func (c *Catalog) Configs() []string {
	seen := map[string]bool{}
	for k := range c.rates {
		seen[k.config] = true
	}
	for k := range c.unpriced {
		seen[k] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Covers reports whether config has a price in some edition or a
// documented reason to have none.
func (c *Catalog) Covers(config string) bool {
	if _, ok := c.unpriced[config]; ok {
		return true
	}
	for k := range c.rates {
		if k.config == config {
			return true
		}
	}
	return false
}

// RunnerVCPUHour is the admin's price of a runner vCPU-hour, or nil.
func (c *Catalog) RunnerVCPUHour() *big.Rat { return c.vcpuHour }

// Override applies an override file (a ConfigMap's data, a flag's file)
// to the base catalog; see File.Mode. The base is not changed.
func Override(base *Catalog, data []byte) (*Catalog, error) {
	f, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("price override: %w", err)
	}
	o, err := f.catalog()
	if err != nil {
		return nil, fmt.Errorf("price override: %w", err)
	}
	if f.Mode == "Replace" {
		return o, nil
	}
	if o.currency != base.currency {
		return nil, fmt.Errorf("price override: currency %s differs from the catalog's %s; set mode: Replace and price every configuration you use (a merge would mix currencies)", o.currency, base.currency)
	}
	for i, e := range f.Prices {
		pub, ok := base.rates[key{e.Config, e.Edition}]
		if !ok {
			continue
		}
		got := o.rates[key{e.Config, e.Edition}]
		if err := nearPublic(got.NodeHour, pub.NodeHour); err != nil {
			return nil, fmt.Errorf("price override: prices[%d] (%s, %s): nodeHour: %w", i, e.Config, e.Edition, err)
		}
		if err := nearPublic(got.StorageGiBMonth, pub.StorageGiBMonth); err != nil {
			return nil, fmt.Errorf("price override: prices[%d] (%s, %s): storageGiBMonth: %w", i, e.Config, e.Edition, err)
		}
	}
	merged := &Catalog{currency: base.currency, takenOn: o.takenOn,
		sources:  append(append([]string(nil), o.sources...), base.sources...),
		vcpuHour: base.vcpuHour, rates: map[key]Rate{}, unpriced: map[string]string{}}
	if o.vcpuHour != nil {
		merged.vcpuHour = o.vcpuHour
	}
	for k, v := range base.unpriced {
		merged.unpriced[k] = v
	}
	for k, v := range base.rates {
		merged.rates[k] = v
	}
	for k, v := range o.rates {
		merged.rates[k] = v
		delete(merged.unpriced, k.config)
	}
	for k, v := range o.unpriced {
		merged.unpriced[k] = v
	}
	return merged, nil
}

// nearPublic refuses an override price more than maxRatioToPublic away
// from the public price it replaces.
func nearPublic(got, public *big.Rat) error {
	if got == nil || public == nil {
		return nil
	}
	ratio := new(big.Rat).Quo(got, public)
	if ratio.Cmp(maxRatioToPublic) > 0 || new(big.Rat).Inv(ratio).Cmp(maxRatioToPublic) > 0 {
		return fmt.Errorf("%s is more than %s times away from the public %s: a discount or negotiated price is a fraction of the public one; check the unit (per node-hour, per GiB-month)",
			formatDecimal(got), maxRatioToPublic.FloatString(0), formatDecimal(public))
	}
	return nil
}

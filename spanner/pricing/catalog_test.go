package pricing

import (
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// validFile is a catalog every refusal test starts from, changing one
// thing. Its figures are test values, not prices.
const validFile = `
version: 1
currency: USD
takenOn: "2026-11-29"
sources: [https://example.test/prices]
runnerVCPUHour: "0.04"
prices:
  - {config: regional-test1, edition: Standard, nodeHour: "0.9", storageGiBMonth: "0.3"}
  - {config: multi1, edition: EnterprisePlus, nodeHour: "3"}
unpriced:
  - {config: regional-test2, reason: not published}
`

func mustParse(t *testing.T, s string) *Catalog {
	t.Helper()
	c, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func TestEmbeddedCatalogNamesItsSourceAndDate(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if c.Currency() != "USD" || c.TakenOn() == "" || len(c.Sources()) == 0 {
		t.Errorf("embedded catalog: currency %q, takenOn %q, sources %v; want USD, a date and a source", c.Currency(), c.TakenOn(), c.Sources())
	}
}

// TestEverySampleConfigurationIsPricedOrExplained reads the instance
// configurations config/samples use (each instance's config and each
// matrix axis over target.instance.config) and fails for one the embedded
// catalog neither prices nor lists as unpriced with a reason.
func TestEverySampleConfigurationIsPricedOrExplained(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../../config/samples/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples found: %v", err)
	}
	configs := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(b), "\n---") {
			var v any
			if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			for _, cfg := range sampleConfigs(v) {
				configs[cfg] = append(configs[cfg], filepath.Base(f))
			}
		}
	}
	if len(configs) == 0 {
		t.Fatal("found no instance configuration in the samples: the walk is broken")
	}
	for cfg, where := range configs {
		if !c.Covers(cfg) {
			t.Errorf("instance configuration %q (used by %v) has neither a price nor a documented reason in prices.yaml", cfg, where)
		}
	}
}

// sampleConfigs walks a manifest for instance.config values and matrix
// axes over target.instance.config.
func sampleConfigs(v any) []string {
	var out []string
	switch n := v.(type) {
	case map[string]any:
		if inst, ok := n["instance"].(map[string]any); ok {
			if cfg, ok := inst["config"].(string); ok {
				out = append(out, cfg)
			}
		}
		if n["path"] == "target.instance.config" {
			vals, _ := n["values"].([]any)
			for _, x := range vals {
				if m, ok := x.(map[string]any); ok {
					if s, ok := m["value"].(string); ok {
						out = append(out, s)
					}
				}
			}
		}
		for _, x := range n {
			out = append(out, sampleConfigs(x)...)
		}
	case []any:
		for _, x := range n {
			out = append(out, sampleConfigs(x)...)
		}
	}
	return out
}

func TestSampleWalkFindsAxisValues(t *testing.T) {
	var v any
	if err := yaml.Unmarshal([]byte(`
spec:
  template: {spec: {target: {instance: {config: a1}}}}
  matrix: {axes: [{path: target.instance.config, values: [{label: x, value: b1}]}]}`), &v); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(sampleConfigs(v), ",")
	if !strings.Contains(got, "a1") || !strings.Contains(got, "b1") {
		t.Errorf("sampleConfigs = %s; want a1 and b1", got)
	}
}

// TestCatalogRefusals: each case breaks one thing of a valid file, and the
// error names the entry and the field.
func TestCatalogRefusals(t *testing.T) {
	mustParse(t, validFile) // the base is valid: each refusal is its own edit's
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"unknown currency", "currency: USD", "currency: XYZ", `currency "XYZ" is not an ISO 4217 code`},
		{"currency in lower case", "currency: USD", "currency: usd", `currency "usd"`},
		{"negative price", `nodeHour: "0.9"`, `nodeHour: "-0.9"`, "prices[0] (regional-test1, Standard): nodeHour: -0.9 is negative"},
		{"zero price", `storageGiBMonth: "0.3"`, `storageGiBMonth: "0"`, "prices[0] (regional-test1, Standard): storageGiBMonth: 0 is zero"},
		{"absurd price", `nodeHour: "3"`, `nodeHour: "30000000"`, "prices[1] (multi1, EnterprisePlus): nodeHour: 30000000 is above 10000000"},
		{"exponent", `nodeHour: "3"`, `nodeHour: "3e2"`, `prices[1] (multi1, EnterprisePlus): nodeHour: "3e2" is not a decimal`},
		{"too many fraction digits", `nodeHour: "3"`, `nodeHour: "3.0000000001"`, "is not a decimal number with at most"},
		{"runner price", `runnerVCPUHour: "0.04"`, `runnerVCPUHour: "-1"`, "runnerVCPUHour: -1 is negative"},
		{"unknown edition", "edition: Standard", "edition: Premium", `prices[0] (regional-test1, Premium): edition "Premium"`},
		{"emulator priced", "config: multi1", "config: emulator-config", "prices[1] (emulator-config, EnterprisePlus): config emulator-config is the emulator's"},
		{"duplicate", "config: multi1, edition: EnterprisePlus", "config: regional-test1, edition: Standard", "prices[1] (regional-test1, Standard): a second entry"},
		{"no figure", `, nodeHour: "3"}`, "}", "prices[1] (multi1, EnterprisePlus): neither nodeHour nor storageGiBMonth"},
		{"bad config ID", "config: multi1", "config: Multi_1", `config "Multi_1" is not an instance configuration ID`},
		{"unpriced without reason", "reason: not published", `reason: " "`, "unpriced[0] (regional-test2): reason is empty"},
		{"no sources", "sources: [https://example.test/prices]", "sources: []", "sources is empty"},
		{"source not a URL", "sources: [https://example.test/prices]", "sources: [somewhere]", `sources[0]: "somewhere" is not an http(s) URL`},
		{"undated", `takenOn: "2026-11-29"`, `takenOn: "last week"`, `takenOn "last week" is not a date`},
		{"version", "version: 1", "version: 2", "version 2"},
		{"unknown field", "runnerVCPUHour:", "runnerCPUHour:", `unknown field "runnerCPUHour"`},
		{"syntax error names its line", "unpriced:\n", "unpriced: [\n", "line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := strings.Replace(validFile, tc.from, tc.to, 1)
			if in == validFile {
				t.Fatalf("the edit %q -> %q changed nothing", tc.from, tc.to)
			}
			_, err := Parse([]byte(in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse = %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestCatalogRefusesOversizeInput(t *testing.T) {
	big := validFile + "#" + strings.Repeat("x", maxCatalogBytes)
	if _, err := Parse([]byte(big)); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("Parse of %d bytes = %v; want a size refusal", len(big), err)
	}
}

func TestLookup(t *testing.T) {
	c := mustParse(t, validFile)
	if r, ok, _ := c.Lookup("regional-test1", ""); !ok || r.Edition != Standard || r.NodeHour.FloatString(2) != "0.90" {
		t.Errorf("Lookup(regional-test1, default) = %+v, %v; want the Standard entry", r, ok)
	}
	if _, ok, _ := c.Lookup("multi1", ""); !ok {
		t.Error("Lookup(multi1, default): a multi-region configuration defaults to EnterprisePlus, which is priced")
	}
	for _, tc := range []struct{ config, want string }{
		{"regional-test2", "not published"},
		{"regional-nowhere", "no price for regional-nowhere (Standard)"},
		{EmulatorConfig, "emulator-config has no Cloud Spanner price"},
	} {
		if _, ok, why := c.Lookup(tc.config, ""); ok || !strings.Contains(why, tc.want) {
			t.Errorf("Lookup(%s) = %v, %q; want unknown because %q", tc.config, ok, why, tc.want)
		}
	}
}

func TestOverrideMergesPerEntry(t *testing.T) {
	base := mustParse(t, validFile)
	o, err := Override(base, []byte(`
version: 1
currency: USD
takenOn: "2026-12-01"
sources: [https://example.test/contract]
prices:
  - {config: regional-test1, edition: Standard, nodeHour: "0.72"}
  - {config: regional-test2, edition: Standard, nodeHour: "1"}
`))
	if err != nil {
		t.Fatal(err)
	}
	r, _, _ := o.Lookup("regional-test1", Standard)
	if r.NodeHour.FloatString(2) != "0.72" || r.StorageGiBMonth != nil {
		t.Errorf("overridden entry = %v/%v; want 0.72 and no storage (the entry is replaced whole)", r.NodeHour, r.StorageGiBMonth)
	}
	if _, ok, _ := o.Lookup("multi1", EnterprisePlus); !ok {
		t.Error("an entry the override does not name is kept")
	}
	if _, ok, _ := o.Lookup("regional-test2", Standard); !ok {
		t.Error("an override prices a configuration the base listed as unpriced")
	}
	if base.rates[key{"regional-test1", Standard}].NodeHour.FloatString(2) != "0.90" {
		t.Error("Override changed the base catalog")
	}
}

func TestOverrideRefusals(t *testing.T) {
	base := mustParse(t, validFile)
	const head = "version: 1\ntakenOn: \"2026-12-01\"\nsources: [https://example.test/c]\n"
	for _, tc := range []struct{ name, file, want string }{
		{"merge in another currency", head + "currency: EUR\nprices: [{config: regional-test1, edition: Standard, nodeHour: \"0.8\"}]\n",
			"currency EUR differs from the catalog's USD; set mode: Replace"},
		{"per month typed as per hour", head + "currency: USD\nprices: [{config: regional-test1, edition: Standard, nodeHour: \"657\"}]\n",
			"prices[0] (regional-test1, Standard): nodeHour: 657 is more than 100 times away from the public 0.9"},
		{"per processing unit typed as per node", head + "currency: USD\nprices: [{config: multi1, edition: EnterprisePlus, nodeHour: \"0.003\"}]\n",
			"prices[0] (multi1, EnterprisePlus): nodeHour: 0.003 is more than 100 times away"},
		{"unknown currency", head + "currency: EURO\nmode: Replace\nprices: []\n", `price override: price catalog: currency "EURO"`},
		{"bad mode", head + "currency: USD\nmode: Append\nprices: []\n", `mode "Append"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Override(base, []byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Override = %v; want an error containing %q", err, tc.want)
			}
		})
	}
	// The same override within the band, and in another currency with
	// Replace, are accepted: the refusals above are their edits'.
	if _, err := Override(base, []byte(head+"currency: USD\nprices: [{config: regional-test1, edition: Standard, nodeHour: \"0.54\"}]\n")); err != nil {
		t.Errorf("a 40%% discount: %v", err)
	}
	o, err := Override(base, []byte(head+"currency: JPY\nmode: Replace\nprices: [{config: regional-test1, edition: Standard, nodeHour: \"135\"}]\n"))
	if err != nil {
		t.Fatalf("a Replace in JPY: %v", err)
	}
	if _, ok, _ := o.Lookup("multi1", EnterprisePlus); ok || o.Currency() != "JPY" {
		t.Errorf("Replace kept a base entry or the base currency (%s)", o.Currency())
	}
}

// FuzzParseCatalog: untrusted catalogs and overrides never panic, and what
// is accepted holds only prices within (0, ceiling].
func FuzzParseCatalog(f *testing.F) {
	f.Add([]byte(validFile))
	f.Add(embedded)
	f.Add([]byte("version: 1\ncurrency: USD\nprices: [{nodeHour: \"1e400\"}]"))
	base, err := Parse([]byte(validFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err == nil {
			for k, r := range c.rates {
				for _, p := range []*big.Rat{r.NodeHour, r.StorageGiBMonth} {
					if p != nil && (p.Sign() <= 0 || p.Cmp(maxPrice) > 0) {
						t.Fatalf("accepted price %v for %v, outside (0, %v]", p, k, maxPrice)
					}
				}
			}
		}
		_, _ = Override(base, data)
	})
}

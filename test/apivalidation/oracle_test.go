package apivalidation

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// oracleValues are texts at the edges of each syntax: what Go parses and
// what it does not, signs, exponents, units, lengths, separators.
var (
	oracleDurations = []any{
		"1m", "+1m", "-1m", "0", "+0", "-0", "0s", "1.s", ".5m", "1.5h", "1h30m", "1m.5s", "1.m", ".s", "10", "1e3s",
		"1μs", "1µs", "1 m", " 1m", "m", "1mh", "1h-1m", "00001s", "", "59m60s", "0.0000000001s",
		"168h", "168h0m0.000000001s", "169h", "2562047h", "2562048h", "9223372036854775807ns", "9223372036854775808ns",
		60, nil,
	}
	oracleQuantities = []any{
		"1", "0", "100m", "0.5", "0.1234", "1.", ".5", "1e3", "1e-999999999", ".5e-9999999", "+1", "-1", "1Ki", "1.5Gi",
		"999999Ti", "1000000Ti", "1Pi", "1E", "1k", "1K", "512Mi", "1073741824", "1234567890123456", "", " 1", "1m",
		"0.001m", "1000000", "1000001", "999999999m", "1000000000m",
		0, 1, -1, 1000000, 1000001, 2147483647, 2147483648, 9223372036854775807, 1e30, 0.5,
	}
	oracleLabelKeys = []string{
		"", "pool", "a/b", "example.com/pool", "Example.com/pool", "-a", "a-", "a_b", "a.b", "a..b/c", "/a", "a/", "a/b/c",
		strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 253) + "/b", strings.Repeat("a", 254) + "/b",
		"kubernetes.io/hostname", "ñ", "a b",
	}
	oracleLabelValues = []string{"", "a", "-a", "a-", "A_b.c", strings.Repeat("v", 63), strings.Repeat("v", 64), "a b", "a/b"}
	oracleImages      = []string{
		"spanbench", "spanbench:dev", "localhost/spanbench:dev", "gcr.io/p/x@sha256:" + strings.Repeat("a", 64),
		"registry:5000/a/b:c", "Registry.Example/a", "UPPER/x", "x/UPPER", "x:", "x@sha256:abc", "a//b", ":tag", "a b",
		"", "a__b", "a___b", "a--b", "a.-b", "x:" + strings.Repeat("t", 128), "x:" + strings.Repeat("t", 129),
	}
	oracleNames = []string{
		"", "asia1", "regional-us-central1", "projects/p/instanceConfigs/asia1", "Asia1", "1abc", "a", "a-", "nam-eur-asia1",
		"a.b", "a_b", "..", ".key", "-x", strings.Repeat("n", 64), strings.Repeat("n", 254),
	}
)

// oracleCases are generated manifests: each value above set at each field
// that takes its kind, as a JSON merge patch on minimal.yaml.
func oracleCases() map[string]map[string]any {
	cases := map[string]map[string]any{}
	add := func(name string, patch map[string]any) { cases[name] = patch }
	spec := func(m map[string]any) map[string]any { return map[string]any{"spec": m} }
	for i, d := range oracleDurations {
		add(fmt.Sprintf("duration-%d", i), spec(map[string]any{"workload": map[string]any{"duration": d}}))
		add(fmt.Sprintf("interval-%d", i), spec(map[string]any{"workload": map[string]any{"duration": "168h", "interval": d}}))
		add(fmt.Sprintf("deadline-%d", i), spec(map[string]any{"deadlines": map[string]any{"prepare": d}}))
		add(fmt.Sprintf("staleness-%d", i), spec(map[string]any{"workload": map[string]any{"operations": []any{
			map[string]any{"type": "Read", "weight": 1, "staleness": map[string]any{"exact": d}}}}}))
		add(fmt.Sprintf("commit-delay-%d", i), spec(map[string]any{"workload": map[string]any{"operations": []any{
			map[string]any{"type": "Insert", "weight": 1, "commit": map[string]any{"maxCommitDelay": d}}}}}))
		add(fmt.Sprintf("ramp-%d", i), spec(map[string]any{"workload": map[string]any{"duration": "168h", "load": map[string]any{
			"rate": nil, "ramp": map[string]any{"from": 1, "to": 2, "duration": d}}}}))
		add(fmt.Sprintf("steps-%d", i), spec(map[string]any{"workload": map[string]any{"duration": nil, "load": map[string]any{
			"rate": nil, "steps": []any{map[string]any{"rate": 1, "duration": d}, map[string]any{"rate": 1, "duration": "1m"}}},
			"warmUp": map[string]any{"mode": "Auto"}}}))
		add(fmt.Sprintf("warm-up-max-%d", i), spec(map[string]any{"workload": map[string]any{"duration": "10m",
			"warmUp": map[string]any{"mode": "Auto", "max": d}}}))
	}
	for i, q := range oracleQuantities {
		add(fmt.Sprintf("cpu-%d", i), spec(map[string]any{"runners": map[string]any{"resources": map[string]any{"requests": map[string]any{"cpu": q}}}}))
		add(fmt.Sprintf("memory-%d", i), spec(map[string]any{"runners": map[string]any{"resources": map[string]any{"limits": map[string]any{"memory": q}}}}))
	}
	for i, k := range oracleLabelKeys {
		add(fmt.Sprintf("node-selector-key-%d", i), spec(map[string]any{"runners": map[string]any{"nodeSelector": map[string]any{k: "v"}}}))
		add(fmt.Sprintf("toleration-exists-key-%d", i), spec(map[string]any{"runners": map[string]any{"tolerations": []any{map[string]any{"key": k, "operator": "Exists"}}}}))
		add(fmt.Sprintf("toleration-key-%d", i), spec(map[string]any{"runners": map[string]any{"tolerations": []any{map[string]any{"key": k, "value": "v"}}}}))
	}
	for i, v := range oracleLabelValues {
		add(fmt.Sprintf("node-selector-value-%d", i), spec(map[string]any{"runners": map[string]any{"nodeSelector": map[string]any{"pool": v}}}))
		add(fmt.Sprintf("region-%d", i), spec(map[string]any{"runners": map[string]any{"region": v, "zone": v}}))
		add(fmt.Sprintf("toleration-value-%d", i), spec(map[string]any{"runners": map[string]any{"tolerations": []any{map[string]any{"key": "k", "value": v}}}}))
	}
	for i, img := range oracleImages {
		add(fmt.Sprintf("image-%d", i), spec(map[string]any{"runners": map[string]any{"image": img}}))
	}
	for i, n := range oracleNames {
		add(fmt.Sprintf("config-%d", i), spec(map[string]any{"target": map[string]any{"instance": map[string]any{"config": n}}}))
		add(fmt.Sprintf("secret-%d", i), spec(map[string]any{"target": map[string]any{"credentials": map[string]any{"secretName": n, "key": n}}}))
		add(fmt.Sprintf("account-%d", i), spec(map[string]any{"runners": map[string]any{"serviceAccountName": n}}))
		add(fmt.Sprintf("location-%d", i), spec(map[string]any{"workload": map[string]any{"operations": []any{
			map[string]any{"type": "Read", "weight": 1, "directedRead": map[string]any{"include": []any{map[string]any{"location": n}}}}}}}))
		add(fmt.Sprintf("location-and-type-%d", i), spec(map[string]any{"workload": map[string]any{"operations": []any{
			map[string]any{"type": "Read", "weight": 1, "directedRead": map[string]any{"include": []any{map[string]any{"location": n, "type": "ReadOnly"}}}}}}}))
		add(fmt.Sprintf("operation-name-%d", i), spec(map[string]any{"workload": map[string]any{"operations": []any{
			map[string]any{"name": n, "type": "Read", "weight": 1}}}}))
	}
	// Empty strings in enums: unset for Go.
	for name, patch := range map[string]map[string]any{
		"mode":      {"target": map[string]any{"instance": map[string]any{"mode": ""}}},
		"dialect":   {"target": map[string]any{"dialect": ""}},
		"edition":   {"target": map[string]any{"instance": map[string]any{"edition": ""}}},
		"api":       {"workload": map[string]any{"operations": []any{map[string]any{"type": "Read", "weight": 1, "api": ""}}}},
		"keys":      {"workload": map[string]any{"operations": []any{map[string]any{"type": "Read", "weight": 1, "keys": ""}}}},
		"priority":  {"workload": map[string]any{"operations": []any{map[string]any{"type": "Read", "weight": 1, "priority": ""}}}},
		"arrivals":  {"workload": map[string]any{"load": map[string]any{"arrivals": ""}}},
		"warm-up":   {"workload": map[string]any{"warmUp": map[string]any{"mode": ""}}},
		"operator":  {"runners": map[string]any{"tolerations": []any{map[string]any{"key": "k", "operator": ""}}}},
		"effect":    {"runners": map[string]any{"tolerations": []any{map[string]any{"key": "k", "effect": ""}}}},
		"replica":   {"workload": map[string]any{"operations": []any{map[string]any{"type": "Read", "weight": 1, "directedRead": map[string]any{"include": []any{map[string]any{"location": "us-east1", "type": ""}}}}}}},
		"writepath": {"workload": map[string]any{"operations": []any{map[string]any{"type": "Insert", "weight": 1, "writePath": ""}}}},
	} {
		add("empty-enum-"+name, spec(patch))
	}
	return cases
}

// TestGeneratedCasesGetOneVerdict uses the API server as the oracle: for
// every generated manifest, the server (a strict dry-run create) and the
// CLI (strict decode, then BenchmarkRun.Validate) must both admit it or
// both refuse it.
func TestGeneratedCasesGetOneVerdict(t *testing.T) {
	admitted, refused := 0, 0
	for name, patch := range oracleCases() {
		p, err := json.Marshal(patch)
		if err != nil {
			t.Fatalf("%s: encoding the patch: %v", name, err)
		}
		obj := object(t, manifest(t, "minimal.yaml", string(p)), "oracle-"+name, "minimal")
		js, err := obj.MarshalJSON()
		if err != nil {
			t.Fatalf("%s: encoding the manifest: %v", name, err)
		}
		serverErr := k8sClient.Create(bounded(t), obj, client.FieldValidation("Strict"), client.DryRunAll)
		errs, decodeErr := goValidate(js)
		cliErr := decodeErr
		if cliErr == nil && len(errs) > 0 {
			cliErr = errs.ToAggregate()
		}
		switch {
		case (serverErr == nil) != (cliErr == nil):
			t.Errorf("%s (%s): the API server said %v; the CLI said %v", name, p, truncate(serverErr), truncate(cliErr))
		case serverErr == nil:
			admitted++
		default:
			refused++
		}
	}
	t.Logf("%d generated manifests: %d admitted by both, %d refused by both", admitted+refused, admitted, refused)
}

func truncate(err error) string {
	if err == nil {
		return "<admitted>"
	}
	s := err.Error()
	if len(s) > 400 {
		s = s[:400] + "..."
	}
	return s
}

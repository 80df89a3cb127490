// Package prometheus_test checks the alert rules in rules.yaml: every
// expression parses and passes the PromQL lint, every alert carries a
// severity, a summary, a description and a runbook section in
// docs/runbooks.md, and promtool's unit tests (testdata/alerts.test.yaml)
// pass with a firing and a quiet case for every alert.
//
// promtool comes with Debian's prometheus package (`make deps`); without
// it the test fails, never skips.
package prometheus_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/internal/querylint"
)

const (
	rulesFile = "rules.yaml"
	testsFile = "testdata/alerts.test.yaml"
	// ruleFileName is what testsFile's rule_files names: the
	// PrometheusRule's spec, written as a plain rule file.
	ruleFileName = "spanbench.rules.yaml"
	runbooks     = "../../docs/runbooks.md"
	runbookURL   = "https://github.com/spanbench/spanbench/blob/main/docs/runbooks.md#"
)

type rule struct {
	Alert       string            `json:"alert"`
	Record      string            `json:"record"`
	Expr        string            `json:"expr"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type prometheusRule struct {
	Kind string `json:"kind"`
	Spec struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []rule `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

// readRules returns the PrometheusRule's spec as it is (to hand to
// promtool whole) and its rules.
func readRules(t *testing.T) (spec any, rules []rule) {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var pr prometheusRule
	var raw map[string]any
	if err := yaml.Unmarshal(b, &pr); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	if err := yaml.Unmarshal(b, &raw); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	if pr.Kind != "PrometheusRule" {
		t.Fatalf("%s: kind %q, want PrometheusRule", rulesFile, pr.Kind)
	}
	for _, g := range pr.Spec.Groups {
		rules = append(rules, g.Rules...)
	}
	if len(rules) == 0 {
		t.Fatalf("%s holds no rule", rulesFile)
	}
	return raw["spec"], rules
}

var severities = []string{"critical", "warning", "info"}

// TestAlertRulesAreComplete: every expression parses and passes the lint;
// every alert says how bad it is, what happened, and where its runbook is.
func TestAlertRulesAreComplete(t *testing.T) {
	_, rules := readRules(t)
	book, err := os.ReadFile(runbooks)
	if err != nil {
		t.Fatal(err)
	}
	anchors := headingAnchors(string(book))
	for _, r := range rules {
		name := r.Alert + r.Record
		for _, p := range querylint.Lint(r.Expr, false) {
			t.Errorf("%s: %s: %s", name, r.Expr, p)
		}
		if r.Alert == "" {
			continue
		}
		if !slices.Contains(severities, r.Labels["severity"]) {
			t.Errorf("%s: severity %q, want one of %v", r.Alert, r.Labels["severity"], severities)
		}
		for _, a := range []string{"summary", "description", "runbook_url"} {
			if r.Annotations[a] == "" {
				t.Errorf("%s has no %s annotation", r.Alert, a)
			}
		}
		url := r.Annotations["runbook_url"]
		if anchor, ok := strings.CutPrefix(url, runbookURL); !ok || !anchors[anchor] {
			t.Errorf("%s: runbook_url %s is not a section of %s (sections: %v)", r.Alert, url, runbooks, anchors)
		}
	}
}

// headingAnchors are the GitHub anchors of a Markdown file's headings.
func headingAnchors(md string) map[string]bool {
	out := map[string]bool{}
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	for _, line := range strings.Split(md, "\n") {
		if h, ok := strings.CutPrefix(line, "#"); ok {
			h = strings.ToLower(strings.TrimSpace(strings.TrimLeft(h, "#")))
			out[strings.ReplaceAll(drop.ReplaceAllString(h, ""), " ", "-")] = true
		}
	}
	return out
}

type unitTests struct {
	RuleFiles []string `json:"rule_files"`
	Tests     []struct {
		AlertRuleTest []struct {
			Alertname string `json:"alertname"`
			ExpAlerts []any  `json:"exp_alerts"`
		} `json:"alert_rule_test"`
	} `json:"tests"`
}

// TestAlertRulesWithPromtool runs promtool's unit tests of the rules, after
// checking that every alert has a firing and a quiet case.
func TestAlertRulesWithPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool is not on PATH: install Debian's prometheus package (`make deps`, or hack/install-deps.sh prometheus)")
	}
	spec, rules := readRules(t)
	tests, err := os.ReadFile(testsFile)
	if err != nil {
		t.Fatal(err)
	}
	var ut unitTests
	if err := yaml.Unmarshal(tests, &ut); err != nil {
		t.Fatalf("%s: %v", testsFile, err)
	}
	if !slices.Equal(ut.RuleFiles, []string{ruleFileName}) {
		t.Fatalf("%s: rule_files %v, want [%s] (the PrometheusRule's spec, written by this test)", testsFile, ut.RuleFiles, ruleFileName)
	}
	for _, missing := range uncoveredAlerts(rules, ut) {
		t.Errorf("%s has no %s", testsFile, missing)
	}

	dir := t.TempDir()
	ruleFile, err := yaml.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{ruleFileName: ruleFile, filepath.Base(testsFile): tests} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(promtool, "test", "rules", filepath.Base(testsFile))
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("promtool test rules %s: %v\n%s", testsFile, err, out.String())
	}
}

// uncoveredAlerts lists the cases the unit tests lack: each alert needs one
// evaluation where it fires and one where it stays quiet.
func uncoveredAlerts(rules []rule, ut unitTests) []string {
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range ut.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	var missing []string
	for _, r := range rules {
		if r.Alert == "" {
			continue
		}
		if !fires[r.Alert] {
			missing = append(missing, fmt.Sprintf("case where %s fires", r.Alert))
		}
		if !quiet[r.Alert] {
			missing = append(missing, fmt.Sprintf("case where %s stays quiet", r.Alert))
		}
	}
	return missing
}

package spanbench_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// valuesTable is the rows of docs/install.md's table of Helm values, the
// one whose header is "| value | default | what |".
func valuesTable(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/install.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(doc), "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "| value | default | what |") })
	if start < 0 {
		t.Fatal(`docs/install.md has no table headed "| value | default | what |"`)
	}
	var rows []string
	for _, l := range lines[start+2:] {
		if !strings.HasPrefix(l, "|") {
			break
		}
		rows = append(rows, l)
	}
	return rows
}

// documentedValues are the value paths the table's first column names:
// "`guardrails.maxRunners`, `.maxDuration`" is guardrails.maxRunners and
// guardrails.maxDuration.
func documentedValues(rows []string) []string {
	token := regexp.MustCompile("`([A-Za-z.]+)`")
	var paths []string
	for _, row := range rows {
		first := strings.SplitN(row, "|", 3)[1]
		parent := ""
		for _, m := range token.FindAllStringSubmatch(first, -1) {
			p := m[1]
			if strings.HasPrefix(p, ".") {
				p = parent + p
			} else if i := strings.LastIndex(p, "."); i >= 0 {
				parent = p[:i]
			} else {
				parent = p
			}
			paths = append(paths, p)
		}
	}
	return paths
}

// valuePaths are the paths of values.yaml's values: a map's keys, down to
// values that are not maps or are empty ones ({}, a map the user fills).
func valuePaths(prefix string, v any) []string {
	m, ok := v.(map[string]any)
	if !ok || (len(m) == 0 && prefix != "") {
		return []string{prefix}
	}
	var out []string
	for k, child := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		out = append(out, valuePaths(p, child)...)
	}
	slices.Sort(out)
	return out
}

// TestEveryValueIsInTheInstallTable holds "every field documented" for
// the chart: every value of values.yaml has a row of docs/install.md's
// table, itself or a value that holds it (`resources` covers
// resources.limits.memory), and every value the table names exists, so
// that neither a new value nor a renamed one goes unnoticed.
func TestEveryValueIsInTheInstallTable(t *testing.T) {
	data, err := os.ReadFile("values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	all := valuePaths("", values)
	documented := documentedValues(valuesTable(t))
	if len(documented) < 20 {
		t.Fatalf("only %d values read from docs/install.md's table: %v", len(documented), documented)
	}
	for _, p := range all {
		covered := false
		for q := p; !covered && q != ""; {
			covered = slices.Contains(documented, q)
			i := strings.LastIndex(q, ".")
			if i < 0 {
				break
			}
			q = q[:i]
		}
		if !covered {
			t.Errorf("the value %s has no row in docs/install.md's table of Helm values", p)
		}
	}
	for _, d := range documented {
		if !slices.ContainsFunc(all, func(p string) bool { return p == d || strings.HasPrefix(p, d+".") }) {
			t.Errorf("docs/install.md's table names the value %s, which values.yaml does not have", d)
		}
	}
}

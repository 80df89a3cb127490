package protocol

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// protocolDoc is where users read the protocol.
const protocolDoc = "../../docs/benchmarkrun.md"

// docRow is one row of the protocol table.
type docRow struct{ configMap, key, holds string }

// readProtocolTable reads the table under "## The pod protocol".
func readProtocolTable(t *testing.T) []docRow {
	t.Helper()
	b, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## The pod protocol\n")
	if !ok {
		t.Fatalf("%s has no section \"## The pod protocol\"", protocolDoc)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []docRow
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 6 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`<run>") {
			continue
		}
		rows = append(rows, docRow{configMap: unquote(cells[1]), key: unquote(cells[2]), holds: cells[4]})
	}
	if len(rows) == 0 {
		t.Fatalf("found no table rows in %s's protocol section", protocolDoc)
	}
	return rows
}

func unquote(cell string) string { return strings.Trim(strings.TrimSpace(cell), "`") }

// TestTheDocumentedProtocolIsTheProtocol: the table in docs/benchmarkrun.md
// names every ConfigMap, key and state this package defines, and nothing
// else, so that the doc cannot omit a key again.
func TestTheDocumentedProtocolIsTheProtocol(t *testing.T) {
	maps := map[string]struct {
		name string
		keys []string
	}{
		"control": {ControlConfigMapName("<run>"), ControlKeys()},
		"loader":  {LoaderConfigMapName("<run>", 0), LoaderKeys()},
		"shard":   {ShardConfigMapName("<run>", 0), ShardKeys()},
		"chunk":   {ShardChunkNames("<run>", 0)[0], ChunkKeys()},
	}
	documented := map[string][]string{}
	for _, r := range readProtocolTable(t) {
		name := strings.NewReplacer("<i>", "0", "<k>", "0").Replace(r.configMap)
		documented[name] = append(documented[name], r.key)
	}
	for role, m := range maps {
		doc, ok := documented[m.name]
		if !ok {
			t.Errorf("%s does not document the %s ConfigMap (%s)", protocolDoc, role, m.name)
			continue
		}
		for _, k := range m.keys {
			if !slices.Contains(doc, k) {
				t.Errorf("%s's protocol table lacks key %q of the %s ConfigMap", protocolDoc, k, role)
			}
		}
		for _, k := range doc {
			if !slices.Contains(m.keys, k) {
				t.Errorf("%s's protocol table names key %q of the %s ConfigMap, which package protocol does not define", protocolDoc, k, role)
			}
		}
		delete(documented, m.name)
	}
	for name := range documented {
		t.Errorf("%s's protocol table names ConfigMap %s, which package protocol does not define", protocolDoc, name)
	}
}

// TestTheDocumentedStatesAreTheStates: the state rows name every State
// and only States.
func TestTheDocumentedStatesAreTheStates(t *testing.T) {
	quoted := regexp.MustCompile("`([A-Za-z]+)`")
	var named []State
	for _, r := range readProtocolTable(t) {
		if r.key != KeyState {
			continue
		}
		for _, m := range quoted.FindAllStringSubmatch(r.holds, -1) {
			named = append(named, State(m[1]))
		}
	}
	for _, s := range States() {
		if !slices.Contains(named, s) {
			t.Errorf("%s's protocol table names no state %s", protocolDoc, s)
		}
	}
	for _, s := range named {
		if !slices.Contains(States(), s) {
			t.Errorf("%s's protocol table names state %s, which package protocol does not define", protocolDoc, s)
		}
	}
}

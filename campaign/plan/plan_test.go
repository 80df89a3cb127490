package plan

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

const template = `
template:
  spec:
    target: {project: spanbench-test, instance: {name: bench, config: regional-asia-northeast1, nodes: 3}, database: ycsb}
    workload:
      type: YCSB
      operations:
      - {name: point, type: Read, api: Read, weight: 1}
      - {name: keys, type: ReadKeys, api: Read, rows: 10, weight: 1}
      - {name: update, type: Update, weight: 1}
      load: {rate: 100}
      duration: 1m
`

func campaignSpec(t *testing.T, matrix string) *v1alpha1.BenchmarkCampaignSpec {
	t.Helper()
	var s v1alpha1.BenchmarkCampaignSpec
	if err := yaml.UnmarshalStrict([]byte(template+matrix), &s); err != nil {
		t.Fatalf("test campaign does not decode: %v", err)
	}
	return &s
}

func names(cells []Cell) []string {
	var out []string
	for _, c := range cells {
		out = append(out, c.Name)
	}
	return out
}

func TestCellsCrossZipAndExclude(t *testing.T) {
	for _, tc := range []struct {
		name, matrix string
		want         []string
		check        func(t *testing.T, cells []Cell)
	}{
		{name: "no matrix is the template", want: []string{"template"}},
		{
			name: "cartesian product, last axis fastest, less the excluded cell",
			matrix: `
matrix:
  axes:
  - {name: config, path: target.instance.config, values: [{label: tokyo, value: regional-asia-northeast1}, {label: asia1, value: asia1}]}
  - {name: nodes, path: target.instance.nodes, values: [{label: 3n, value: 3}, {label: 6n, value: 6}]}
  exclude:
  - {config: asia1, nodes: 6n}`,
			want: []string{"tokyo-3n", "tokyo-6n", "asia1-3n"},
			check: func(t *testing.T, cells []Cell) {
				if got := cells[1].Spec.Target.Instance; got.Config != "regional-asia-northeast1" || *got.Nodes != 6 {
					t.Errorf("cell tokyo-6n's instance = %s × %d nodes, want regional-asia-northeast1 × 6", got.Config, *got.Nodes)
				}
				if got := cells[2].Spec.Target.Instance.Config; got != "asia1" {
					t.Errorf("cell asia1-3n's config = %s", got)
				}
			},
		},
		{
			name: "zipped axes advance together and name the cell by the first",
			matrix: `
matrix:
  axes:
  - {name: api, path: "workload.operations.[name=point].api", values: [{label: read, value: Read}, {label: sql, value: SQL}]}
  - {name: keys-api, path: "workload.operations.[name=keys].api", values: [{label: read, value: Read}, {label: sql, value: SQL}]}
  zip: [[api, keys-api]]`,
			want: []string{"read", "sql"},
			check: func(t *testing.T, cells []Cell) {
				ops := cells[1].Spec.Workload.Operations
				if ops[0].API != v1alpha1.APISQL || ops[1].API != v1alpha1.APISQL || ops[2].API != "" {
					t.Errorf("cell sql's operations' APIs = %q %q %q, want SQL SQL and none", ops[0].API, ops[1].API, ops[2].API)
				}
				if diff := cmp.Diff(map[string]string{"api": "sql", "keys-api": "sql"}, cells[1].Labels()); diff != "" {
					t.Errorf("cell labels (-want +got):\n%s", diff)
				}
			},
		},
		{
			name: "a missing field on the way is created",
			matrix: `
matrix:
  axes:
  - {name: delay, path: "workload.operations.[name=update].commit.maxCommitDelay", values: [{label: 0ms, value: 0s}, {label: 100ms, value: 100ms}]}`,
			want: []string{"0ms", "100ms"},
			check: func(t *testing.T, cells []Cell) {
				if c := cells[1].Spec.Workload.Operations[2].Commit; c == nil || c.MaxCommitDelay.Duration != 100*time.Millisecond {
					t.Errorf("cell 100ms's update commit = %+v, want maxCommitDelay 100ms", c)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cells, err := Cells(campaignSpec(t, tc.matrix))
			if err != nil {
				t.Fatalf("Cells: %v", err)
			}
			if diff := cmp.Diff(tc.want, names(cells)); diff != "" {
				t.Fatalf("cell names (-want +got):\n%s", diff)
			}
			if tc.check != nil {
				tc.check(t, cells)
			}
		})
	}
}

// TestCellsRefuseInvalidCellsNamingTheAxis: a value that makes an invalid
// run, or a path that names nothing, is refused with the axis and value.
func TestCellsRefuseInvalidCellsNamingTheAxis(t *testing.T) {
	for _, tc := range []struct{ name, axis, want string }{
		{"api on a write", `{name: api, path: "workload.operations.[name=update].api", values: [{label: read, value: Read}, {label: sql, value: SQL}]}`,
			`matrix axis "api" value "read" (path workload.operations.[name=update].api) makes an invalid run: spec.workload.operations[2].api`},
		{"negative rate", `{name: rate, path: workload.load.rate, values: [{label: r100, value: 100}, {label: neg, value: -5}]}`,
			`matrix axis "rate" value "neg" (path workload.load.rate) makes an invalid run: spec.workload.load.rate: Invalid value: -5`},
		{"missing list element", `{name: api, path: "workload.operations.[name=pont].api", values: [{label: sql, value: SQL}]}`,
			`matrix axis "api" value "sql": path workload.operations.[name=pont].api: no list element workload.operations.[name=pont] in the template`},
		{"misspelt field", `{name: cfg, path: target.instance.confg, values: [{label: a, value: asia1}]}`,
			`matrix axis "cfg" value "a" (path target.instance.confg) makes an invalid run: not a run spec: unknown field "target.instance.confg"`},
		{"path ending in an element", `{name: op, path: "workload.operations.[name=point]", values: [{label: a, value: {name: point}}]}`,
			`must end in a field name`},
		{"wrong type", `{name: nodes, path: target.instance.nodes, values: [{label: many, value: many}]}`,
			`matrix axis "nodes" value "many" (path target.instance.nodes) makes an invalid run: not a run spec`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Cells(campaignSpec(t, "matrix:\n  axes:\n  - "+tc.axis))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Cells = %v\nwant an error containing %q", err, tc.want)
			}
		})
	}
}

func TestCellsBoundTheMatrix(t *testing.T) {
	var vals []string
	for i := range 9 {
		vals = append(vals, "{label: r"+string(rune('a'+i))+", value: "+string(rune('1'+i))+"00}")
	}
	axis := func(name string) string {
		return "  - {name: " + name + ", path: workload.load.rate, values: [" + strings.Join(vals, ", ") + "]}\n"
	}
	_, err := Cells(campaignSpec(t, "matrix:\n  axes:\n"+axis("a")+axis("b")))
	if err == nil || !strings.Contains(err.Error(), "more than 64 cells") {
		t.Fatalf("a 9×9 matrix: Cells = %v, want it refused for more than 64 cells", err)
	}
}

// TestCellHashIsStableAcrossTemplateEdits: a cell's hash (and so its runs'
// names) depends on its axis labels only.
func TestCellHashIsStableAcrossTemplateEdits(t *testing.T) {
	m := `
matrix:
  axes:
  - {name: api, path: "workload.operations.[name=point].api", values: [{label: read, value: Read}, {label: sql, value: SQL}]}`
	a, err := Cells(campaignSpec(t, m))
	if err != nil {
		t.Fatal(err)
	}
	s := campaignSpec(t, m)
	s.Template.Spec.Workload.Load.Rate = new(int32)
	*s.Template.Spec.Workload.Load.Rate = 500
	b, err := Cells(s)
	if err != nil {
		t.Fatal(err)
	}
	// The literal pins the hash: a change would rename every campaign's runs.
	if a[1].Hash != "5ddeda" || b[1].Hash != a[1].Hash || a[0].Hash == a[1].Hash {
		t.Fatalf("hashes: read %s, sql %s, sql after a template edit %s; want sql 5ddeda, stable, distinct", a[0].Hash, a[1].Hash, b[1].Hash)
	}
}

func TestBaseline(t *testing.T) {
	m := `
matrix:
  axes:
  - {name: config, path: target.instance.config, values: [{label: tokyo, value: t}, {label: asia1, value: asia1}]}
  - {name: nodes, path: target.instance.nodes, values: [{label: 3n, value: 3}, {label: 6n, value: 6}]}
`
	for _, tc := range []struct {
		baseline string
		want     int
		err      string
	}{
		{"", 0, ""},
		{"baseline: {config: asia1, nodes: 3n}", 2, ""},
		{"baseline: {config: asia1}", 0, "names cells asia1-3n and asia1-6n"},
	} {
		s := campaignSpec(t, m+tc.baseline)
		cells, err := Cells(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Baseline(s, cells)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: Baseline = %d, %v; want an error containing %q", tc.baseline, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: Baseline = %d, %v; want %d", tc.baseline, got, err, tc.want)
		}
	}
}

func TestOrder(t *testing.T) {
	str := func(s []Slot) string {
		var b strings.Builder
		for _, x := range s {
			b.WriteByte(byte('A' + x.Cell))
			b.WriteByte(byte('0' + x.Repetition))
			b.WriteByte(' ')
		}
		return strings.TrimSpace(b.String())
	}
	for _, tc := range []struct {
		order v1alpha1.RunOrder
		seed  int64
		want  string
	}{
		{v1alpha1.OrderInterleaved, 0, "A1 B1 C1 A2 B2 C2"},
		{"", 0, "A1 B1 C1 A2 B2 C2"},
		{v1alpha1.OrderSequential, 0, "A1 A2 B1 B2 C1 C2"},
		{v1alpha1.OrderRandomized, 1, "A2 B1 C2 A1 C1 B2"},
		{v1alpha1.OrderRandomized, 2, "B1 A1 C1 C2 A2 B2"},
	} {
		if got := str(Order(tc.order, tc.seed, 3, 2)); got != tc.want {
			t.Errorf("Order(%q, seed %d, 3 cells, 2 reps) = %s, want %s", tc.order, tc.seed, got, tc.want)
		}
	}
}

func TestRunAndIterationNames(t *testing.T) {
	at := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	cell := &Cell{Hash: "c6f9bd"}
	if got, want := RunName("read-vs-sql", at, cell, 3), "read-vs-sql-1795485600-c6f9bd-r3"; got != want {
		t.Errorf("RunName = %s, want %s", got, want)
	}
	if got, want := IterationName("read-vs-sql", at), "read-vs-sql-1795485600"; got != want {
		t.Errorf("IterationName = %s, want %s", got, want)
	}
	if s, r := SnapshotName("read-vs-sql-1795485600"), ReportName("read-vs-sql-1795485600"); s != "read-vs-sql-1795485600-spec" || r != "read-vs-sql-1795485600-report" {
		t.Errorf("SnapshotName, ReportName = %s, %s; want <iteration>-spec and <iteration>-report", s, r)
	}
	long1 := strings.Repeat("a", 60) + "-tokyo"
	long2 := strings.Repeat("a", 60) + "-asia1"
	r1, r2 := RunName(long1, at, cell, 30), RunName(long2, at, cell, 30)
	if len(r1) > v1alpha1.MaxRunNameLength || r1 == r2 || !strings.HasSuffix(r1, "-1795485600-c6f9bd-r30") {
		t.Errorf("long names: %s (%d chars) and %s; want at most %d characters, distinct, ending in the time, hash and repetition",
			r1, len(r1), r2, v1alpha1.MaxRunNameLength)
	}
	run := v1alpha1.BenchmarkRun{}
	run.Name = r1
	for _, e := range run.Validate() {
		if e.Field == "metadata.name" {
			t.Errorf("a shortened run name is not a valid BenchmarkRun name: %v", e)
		}
	}
	if i1, i2 := IterationName(long1+long1, at), IterationName(long2+long1, at); len(i1) > 63 || i1 == i2 {
		t.Errorf("long iteration names %s, %s: want at most 63 characters and distinct", i1, i2)
	}
}

func TestIterationTimeReadsIterationNamesBack(t *testing.T) {
	at := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	for _, campaign := range []string{"nightly", strings.Repeat("very-long-campaign-name-", 4)} {
		got, ok := IterationTime(IterationName(campaign, at))
		if !ok || !got.Equal(at) {
			t.Errorf("IterationTime(IterationName(%q, %s)) = %s, %v", campaign, at, got, ok)
		}
	}
	for _, bad := range []string{"nightly", "nightly-x", "nightly-1.5", "nightly-+5"} {
		if _, ok := IterationTime(bad); ok {
			t.Errorf("IterationTime(%q) accepted a name IterationName never makes", bad)
		}
	}
}

// TestExpandErrorsNameTheCampaignField: every reason a campaign cannot be
// planned names the campaign field at fault, as admission reports it: the
// axis value for a value that makes an invalid run.
func TestExpandErrorsNameTheCampaignField(t *testing.T) {
	for _, tc := range []struct{ name, matrix, wantField, wantValue string }{
		{"second value of the second axis", `
matrix:
  axes:
  - {name: nodes, path: target.instance.nodes, values: [{label: 3n, value: 3}]}
  - {name: rate, path: workload.load.rate, values: [{label: r100, value: 100}, {label: neg, value: -5}]}`,
			"spec.matrix.axes[1].values[1]", "neg"},
		{"path naming no list element", `
matrix:
  axes:
  - {name: api, path: "workload.operations.[name=pont].api", values: [{label: sql, value: SQL}]}`,
			"spec.matrix.axes[0].values[0]", "sql"},
		{"exclude dropping every cell", `
matrix:
  axes:
  - {name: rate, path: workload.load.rate, values: [{label: r100, value: 100}]}
  exclude:
  - {rate: r100}`,
			"spec.matrix.exclude", ""},
		{"baseline naming two cells", `
matrix:
  axes:
  - {name: nodes, path: target.instance.nodes, values: [{label: 3n, value: 3}, {label: 6n, value: 6}]}
  - {name: rate, path: workload.load.rate, values: [{label: r100, value: 100}, {label: r200, value: 200}]}
baseline: {nodes: 3n}`,
			"spec.baseline", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Expand(campaignSpec(t, tc.matrix))
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("Expand = %v, want a *plan.Error", err)
			}
			if got := pe.Field.String(); got != tc.wantField || pe.Value != tc.wantValue {
				t.Errorf("Expand blames %s value %q, want %s value %q (error: %v)", got, pe.Value, tc.wantField, tc.wantValue, err)
			}
		})
	}
}

func TestExpandFindsTheBaseline(t *testing.T) {
	cells, baseline, err := Expand(campaignSpec(t, `
matrix:
  axes:
  - {name: nodes, path: target.instance.nodes, values: [{label: 3n, value: 3}, {label: 6n, value: 6}]}
baseline: {nodes: 6n}`))
	if err != nil {
		t.Fatalf("Expand: %v", err)
	}
	if got := cells[baseline].Name; got != "6n" {
		t.Errorf("baseline cell = %s, want 6n", got)
	}
}

// TestCellsApplyPatches: a value's strategic-merge patch merges lists of
// named objects by name (and deletes with $patch: delete), its JSON patch
// appends an operation, both after the path's value; an axis without a
// path changes the spec through patches only, and a value with nothing
// leaves the template as it is.
func TestCellsApplyPatches(t *testing.T) {
	cells, err := Cells(campaignSpec(t, `
matrix:
  axes:
  - name: rate
    path: workload.load.rate
    values:
    - label: r100
      value: 100
    - label: r200-keys20
      value: 200
      strategicMergePatch:
        workload:
          operations:
          - {name: keys, rows: 20}
          - {name: update, $patch: delete}
  - name: ops
    values:
    - label: as-is
    - label: plus-scan
      jsonPatch:
      - {op: add, path: /workload/operations/-, value: {name: scan, type: Scan, api: Read, rows: 10, weight: 2}}
      - {op: replace, path: /workload/load/rate, value: 50}`))
	if err != nil {
		t.Fatalf("Cells: %v", err)
	}
	if diff := cmp.Diff([]string{"r100-as-is", "r100-plus-scan", "r200-keys20-as-is", "r200-keys20-plus-scan"}, names(cells)); diff != "" {
		t.Fatalf("cells (-want +got):\n%s", diff)
	}
	ops := func(c Cell) string {
		var out []string
		for _, o := range c.Spec.Workload.Operations {
			rows := int32(0)
			if o.Rows != nil {
				rows = *o.Rows
			}
			out = append(out, fmt.Sprintf("%s/%d", o.Name, rows))
		}
		return fmt.Sprintf("rate %d: %s", *c.Spec.Workload.Load.Rate, strings.Join(out, " "))
	}
	for i, want := range []string{
		"rate 100: point/0 keys/10 update/0",
		"rate 50: point/0 keys/10 update/0 scan/10",
		"rate 200: point/0 keys/20",
		"rate 50: point/0 keys/20 scan/10",
	} {
		if got := ops(cells[i]); got != want {
			t.Errorf("cell %s: %s, want %s", cells[i].Name, got, want)
		}
	}
}

// TestCellsRefuseBadPatchesNamingTheValue: a patch that cannot apply, or
// makes an invalid run, is refused at its axis value, like a path value.
func TestCellsRefuseBadPatchesNamingTheValue(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"json patch on a missing element", `{label: bad, jsonPatch: [{op: replace, path: /workload/operations/9/rows, value: 3}]}`,
			`matrix axis "p" value "bad": jsonPatch: `},
		{"json patch test failing", `{label: bad, jsonPatch: [{op: test, path: /workload/load/rate, value: 7}]}`,
			`matrix axis "p" value "bad": jsonPatch: `},
		{"merge patch naming no run field", `{label: bad, strategicMergePatch: {workload: {lod: {rate: 5}}}}`,
			`matrix axis "p" value "bad" (strategicMergePatch) makes an invalid run: not a run spec: unknown field "workload.lod"`},
		{"merge patch making an invalid run", `{label: bad, strategicMergePatch: {workload: {operations: [{name: update, api: SQL}]}}}`,
			`matrix axis "p" value "bad" (strategicMergePatch) makes an invalid run: spec.workload.operations[2].api`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Expand(campaignSpec(t, "matrix:\n  axes:\n  - {name: p, values: [{label: ok}, "+tc.value+"]}"))
			var pe *Error
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Expand = %v\nwant a *plan.Error containing %q", err, tc.want)
			}
			if got := pe.Field.String(); got != "spec.matrix.axes[0].values[1]" {
				t.Errorf("blamed %s, want spec.matrix.axes[0].values[1]", got)
			}
		})
	}
}

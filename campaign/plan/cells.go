// Package plan turns a BenchmarkCampaign's spec into what one iteration
// runs: the matrix's cells (each a valid BenchmarkRun spec), the baseline
// among them, and the iteration's runs, named deterministically and
// ordered as spec.order says. It is pure: no Kubernetes client, no clock,
// no Spanner. The CLI (`spanbench campaign`) and the campaign controller
// both plan here, so the two cannot disagree on a run's name or order.
package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/kyaml/utils"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/customcheck"
)

// MaxCells bounds a matrix's cells after zip and exclude: each cell runs
// repetitions times per iteration, and the comparison table grows with it.
const MaxCells = 64

// Choice is one axis's value in a cell.
type Choice struct {
	// Axis names the axis; Label names its value.
	Axis, Label string
}

// Cell is one variant of a campaign: the template with one value of every
// axis applied.
type Cell struct {
	// Name is the labels of the cell's axes joined by "-" (a zip group
	// contributes its first axis's label), such as "sql" or "asia1-6n";
	// "template" for a campaign without a matrix.
	Name string
	// Choices are the cell's values, in the order of the axes.
	Choices []Choice
	// Hash is 6 hex digits of a SHA-256 over the choices: stable across
	// template edits, so that a cell's runs keep their identity.
	Hash string
	// Spec is the run spec of the cell, valid as a BenchmarkRun's.
	Spec v1alpha1.BenchmarkRunSpec
}

// Labels are the cell's choices as a map, axis to label.
func (c *Cell) Labels() map[string]string {
	m := make(map[string]string, len(c.Choices))
	for _, ch := range c.Choices {
		m[ch.Axis] = ch.Label
	}
	return m
}

// Cells expands the campaign's matrix: the cartesian product of its axes,
// zipped axes advancing together, less the excluded cells, in a stable
// order (the last axis varies fastest). Each cell's spec is the template
// with every chosen value set at its axis's path, and must be valid as a
// BenchmarkRun's spec; an invalid cell is refused naming the axis and value
// that make it so.
func Cells(spec *v1alpha1.BenchmarkCampaignSpec) ([]Cell, error) {
	if errs := customcheck.Spec(field.NewPath("spec", "template", "spec"), &spec.Template.Spec); len(errs) > 0 {
		return nil, &Error{Field: field.NewPath("spec", "template", "spec"),
			err: fmt.Errorf("the template is not a valid run: %w", errs.ToAggregate())}
	}
	if spec.Matrix == nil {
		return []Cell{{Name: "template", Hash: hash(nil), Spec: *spec.Template.Spec.DeepCopy()}}, nil
	}
	combos, err := combinations(spec.Matrix)
	if err != nil {
		return nil, err
	}
	cells := make([]Cell, 0, len(combos))
	hashes := map[string]string{}
	for _, choices := range combos {
		c, err := buildCell(&spec.Template.Spec, spec.Matrix, choices)
		if err != nil {
			return nil, err
		}
		if other, dup := hashes[c.Hash]; dup {
			return nil, &Error{Field: matrixPath.Child("axes"), Value: c.Name,
				err: fmt.Errorf("cells %s and %s share the hash %s; rename a label", other, c.Name, c.Hash)}
		}
		hashes[c.Hash] = c.Name
		cells = append(cells, c)
	}
	return cells, nil
}

// group is axes advanced together: one axis, or a zip group.
type group []*v1alpha1.MatrixAxis

// groups are the matrix's axes grouped by zip, in the order of each
// group's first axis.
func groups(m *v1alpha1.MatrixSpec) []group {
	zipOf := map[string]int{}
	for i, z := range m.Zip {
		for _, a := range z {
			zipOf[string(a)] = i
		}
	}
	var out []group
	placed := map[int]int{} // zip group index -> position in out
	for i := range m.Axes {
		a := &m.Axes[i]
		zi, zipped := zipOf[a.Name]
		if !zipped {
			out = append(out, group{a})
			continue
		}
		if pos, ok := placed[zi]; ok {
			out[pos] = append(out[pos], a)
			continue
		}
		placed[zi] = len(out)
		out = append(out, group{a})
	}
	return out
}

// combinations are the matrix's cells as choices, in the order of the
// axes, excluded cells dropped.
func combinations(m *v1alpha1.MatrixSpec) ([][]Choice, error) {
	if errs := m.Validate(matrixPath); len(errs) > 0 {
		return nil, &Error{Field: matrixPath, err: errs.ToAggregate()}
	}
	gs := groups(m)
	total := 1
	for _, g := range gs {
		total *= len(g[0].Values)
		if total > 100*MaxCells {
			break
		}
	}
	var out [][]Choice
	pos := make([]int, len(gs))
	for n := 0; n < total; n++ {
		ch := choicesAt(m, gs, pos)
		if !excluded(m, ch) {
			out = append(out, ch)
		}
		if len(out) > MaxCells {
			return nil, &Error{Field: matrixPath, err: fmt.Errorf("the matrix has more than %d cells; exclude some or split the campaign", MaxCells)}
		}
		advance(gs, pos)
	}
	if len(out) == 0 {
		return nil, &Error{Field: matrixPath.Child("exclude"), err: fmt.Errorf("exclude drops every cell of the matrix")}
	}
	return out, nil
}

// advance steps pos like an odometer, the last group fastest.
func advance(gs []group, pos []int) {
	for i := len(gs) - 1; i >= 0; i-- {
		pos[i]++
		if pos[i] < len(gs[i][0].Values) {
			return
		}
		pos[i] = 0
	}
}

func choicesAt(m *v1alpha1.MatrixSpec, gs []group, pos []int) []Choice {
	byAxis := map[string]string{}
	for i, g := range gs {
		for _, a := range g {
			byAxis[a.Name] = a.Values[pos[i]].Label
		}
	}
	out := make([]Choice, len(m.Axes))
	for i, a := range m.Axes {
		out[i] = Choice{Axis: a.Name, Label: byAxis[a.Name]}
	}
	return out
}

func excluded(m *v1alpha1.MatrixSpec, ch []Choice) bool {
	for _, sel := range m.Exclude {
		if matches(sel, ch) {
			return true
		}
	}
	return false
}

// matches reports whether a cell has every axis label of sel.
func matches(sel map[string]v1alpha1.AxisLabel, ch []Choice) bool {
	for axis, label := range sel {
		found := false
		for _, c := range ch {
			if c.Axis == axis && c.Label == string(label) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func buildCell(tmpl *v1alpha1.BenchmarkRunSpec, m *v1alpha1.MatrixSpec, choices []Choice) (Cell, error) {
	c := Cell{Name: cellName(m, choices), Choices: choices, Hash: hash(choices)}
	s, err := applyChoices(tmpl, m, choices)
	if err == nil {
		if errs := customcheck.Spec(field.NewPath("spec"), &s); len(errs) > 0 {
			err = errs.ToAggregate()
		}
	}
	if err != nil {
		return Cell{}, blame(tmpl, m, choices, err)
	}
	c.Spec = s
	return c, nil
}

// blame names the axis and value that make a cell invalid: the first
// whose value alone makes the template invalid, or else the combination.
func blame(tmpl *v1alpha1.BenchmarkRunSpec, m *v1alpha1.MatrixSpec, choices []Choice, cellErr error) error {
	for _, ch := range choices {
		s, err := applyChoices(tmpl, m, []Choice{ch})
		if err == nil {
			if errs := customcheck.Spec(field.NewPath("spec"), &s); len(errs) > 0 {
				err = errs.ToAggregate()
			}
		}
		if err != nil {
			return valueError(m, ch, fmt.Errorf("matrix axis %q value %q (%s) makes an invalid run: %w", ch.Axis, ch.Label, changes(m.Axis(ch.Axis), ch.Label), err))
		}
	}
	parts := make([]string, len(choices))
	for i, ch := range choices {
		parts[i] = ch.Axis + "=" + ch.Label
	}
	return &Error{Field: matrixPath, Value: strings.Join(parts, ","),
		err: fmt.Errorf("matrix cell %s makes an invalid run: %w", strings.Join(parts, ", "), cellErr)}
}

// changes says how the value label of axis a changes the run spec: its
// path, its patches, or both.
func changes(a *v1alpha1.MatrixAxis, label string) string {
	v := &a.Values[axisIndex(a, label)]
	var parts []string
	if a.Path != "" {
		parts = append(parts, "path "+a.Path)
	}
	if v.StrategicMergePatch != nil {
		parts = append(parts, "strategicMergePatch")
	}
	if len(v.JSONPatch) > 0 {
		parts = append(parts, "jsonPatch")
	}
	if len(parts) == 0 {
		return "no change"
	}
	return strings.Join(parts, ", ")
}

// cellName joins the labels of each group's first axis.
func cellName(m *v1alpha1.MatrixSpec, choices []Choice) string {
	var parts []string
	for _, g := range groups(m) {
		for _, ch := range choices {
			if ch.Axis == g[0].Name {
				parts = append(parts, ch.Label)
			}
		}
	}
	return strings.Join(parts, "-")
}

// hash is 6 hex digits of SHA-256 over "axis=label\n" per choice.
func hash(choices []Choice) string {
	h := sha256.New()
	for _, ch := range choices {
		fmt.Fprintf(h, "%s=%s\n", ch.Axis, ch.Label)
	}
	return hex.EncodeToString(h.Sum(nil))[:6]
}

// applyChoices applies each chosen value (applyValue) to a copy of the
// template, and decodes the result strictly, so that a path or patch that
// names no field of a run (a typo that created one) is refused.
func applyChoices(tmpl *v1alpha1.BenchmarkRunSpec, m *v1alpha1.MatrixSpec, choices []Choice) (v1alpha1.BenchmarkRunSpec, error) {
	js, err := json.Marshal(tmpl)
	if err != nil {
		return v1alpha1.BenchmarkRunSpec{}, err
	}
	doc, err := yaml.Parse(string(js))
	if err != nil {
		return v1alpha1.BenchmarkRunSpec{}, err
	}
	for _, ch := range choices {
		a := m.Axis(ch.Axis)
		if doc, err = applyValue(doc, a, &a.Values[axisIndex(a, ch.Label)]); err != nil {
			return v1alpha1.BenchmarkRunSpec{}, valueError(m, ch, fmt.Errorf("matrix axis %q value %q: %w", ch.Axis, ch.Label, err))
		}
	}
	out, err := doc.MarshalJSON()
	if err != nil {
		return v1alpha1.BenchmarkRunSpec{}, err
	}
	var s v1alpha1.BenchmarkRunSpec
	strictErrs, err := sigsjson.UnmarshalStrict(out, &s, sigsjson.DisallowUnknownFields)
	if err == nil && len(strictErrs) > 0 {
		err = strictErrs[0]
	}
	if err != nil {
		return v1alpha1.BenchmarkRunSpec{}, fmt.Errorf("not a run spec: %w", err)
	}
	return s, nil
}

func axisIndex(a *v1alpha1.MatrixAxis, label string) int {
	for i, v := range a.Values {
		if v.Label == label {
			return i
		}
	}
	return -1
}

// SetPath sets the field at path (kustomize's field path syntax, such as
// workload.operations.[name=read].api) in doc to value (JSON). Missing
// fields on the way are created as objects; a missing list element is an
// error, never appended, so that a misspelt operation name is not a new
// operation. The path must end in a field name.
func SetPath(doc *yaml.RNode, path string, value []byte) error {
	parts := utils.SmarterPathSplitter(path, ".")
	last := parts[len(parts)-1]
	if last == "" || yaml.IsListIndex(last) || yaml.IsIdxNumber(last) {
		return fmt.Errorf("path %s: must end in a field name", path)
	}
	parent := parts[:len(parts)-1]
	lastList := -1
	for i, p := range parent {
		if p == "" {
			return fmt.Errorf("path %s: empty field name", path)
		}
		if yaml.IsListIndex(p) || yaml.IsIdxNumber(p) {
			lastList = i
		}
	}
	if lastList >= 0 {
		found, err := doc.Pipe(yaml.Lookup(parent[:lastList+1]...))
		if err != nil {
			return fmt.Errorf("path %s: %w", path, err)
		}
		if found == nil {
			return fmt.Errorf("path %s: no list element %s in the template", path, strings.Join(parent[:lastList+1], "."))
		}
	}
	node, err := doc.Pipe(yaml.LookupCreate(yaml.MappingNode, parent...))
	if err != nil {
		return fmt.Errorf("path %s: %w", path, err)
	}
	if node == nil || node.YNode().Kind != yaml.MappingNode {
		return fmt.Errorf("path %s: %s is not an object in the template", path, strings.Join(parent, "."))
	}
	v, err := yaml.Parse(string(value))
	if err != nil {
		return fmt.Errorf("value %s: %w", value, err)
	}
	return node.PipeE(yaml.SetField(last, v))
}

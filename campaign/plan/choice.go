package plan

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// ChoiceSpec is the template with the one value ch applied, as a cell
// holding only that choice would run it: what that axis value alone
// changes, so that a check of a cell can name the value responsible.
func ChoiceSpec(tmpl *v1alpha1.BenchmarkRunSpec, m *v1alpha1.MatrixSpec, ch Choice) (v1alpha1.BenchmarkRunSpec, error) {
	return applyChoices(tmpl, m, []Choice{ch})
}

// ChoiceField is where the value ch lies in the campaign:
// spec.matrix.axes[i].values[j].
func ChoiceField(m *v1alpha1.MatrixSpec, ch Choice) *field.Path {
	return valueError(m, ch, nil).Field
}

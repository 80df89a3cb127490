package plan

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// Where a campaign's matrix and baseline lie.
var (
	matrixPath   = field.NewPath("spec", "matrix")
	baselinePath = field.NewPath("spec", "baseline")
)

// Error is why a campaign cannot be planned, with the campaign field at
// fault, so that admission can name it the way the API server names the
// fields its schema refuses. Its message is the whole explanation: for a
// value that makes an invalid run, the axis, the value's label, the path
// and the run field the BenchmarkRun validation refuses.
type Error struct {
	// Field is the campaign field at fault: spec.matrix.axes[i].values[j]
	// for one axis value, spec.matrix for a combination of values or the
	// matrix's shape, spec.baseline, or spec.template.spec.
	Field *field.Path
	// Value is what is at fault in Field: a value's label, the cell's
	// axis=label pairs; empty when the field as a whole is.
	Value string
	err   error
}

// Error is the explanation.
func (e *Error) Error() string { return e.err.Error() }

// Unwrap is the underlying error.
func (e *Error) Unwrap() error { return e.err }

// FieldError is the error as the API server words a refused field.
func (e *Error) FieldError() *field.Error {
	return field.Invalid(e.Field, e.Value, e.Error())
}

// valueError blames the value ch of its axis.
func valueError(m *v1alpha1.MatrixSpec, ch Choice, err error) *Error {
	p := matrixPath.Child("axes")
	for i := range m.Axes {
		if a := &m.Axes[i]; a.Name == ch.Axis {
			p = p.Index(i).Child("values").Index(axisIndex(a, ch.Label))
		}
	}
	return &Error{Field: p, Value: ch.Label, err: err}
}

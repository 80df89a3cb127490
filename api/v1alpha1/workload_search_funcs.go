package v1alpha1

import (
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Bounds of a search's SLO, as the schema states them. The search's
// figures (rates, resolution, the conditions' text, the operations they
// name, the worst case against the run's duration) are checked by
// result/capacity, which the API does not link: spanner/customcheck adds
// those checks for the webhook and the CLI alike.
const (
	maxSearchConditions    = 16
	maxSearchConditionText = 512
)

// validateShape checks what the schema checks of a search beside its
// numbers: the durations and the SLO's size.
func (s *SearchSpec) validateShape(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, bounded(path.Child("stepDuration"), &s.StepDuration, MaxRunDuration)...)
	if w := s.WarmUp; w != nil && (w.Duration < 0 || w.Duration > MaxRunDuration) {
		errs = append(errs, field.Invalid(path.Child("warmUp"), w.Duration.String(), "must be a duration from 0s to "+formatHours(MaxRunDuration)))
	}
	switch n := len(s.SLO); {
	case n == 0:
		errs = append(errs, field.Required(path.Child("slo"), "at least one condition, such as p99 <= 20ms"))
	case n > maxSearchConditions:
		errs = append(errs, field.TooMany(path.Child("slo"), n, maxSearchConditions))
	}
	for i, c := range s.SLO {
		if len(c) > maxSearchConditionText {
			errs = append(errs, field.TooLong(path.Child("slo").Index(i), "", maxSearchConditionText))
		}
	}
	errs = append(errs, OneOf(path.Child("confirm"), s.Confirm, SearchConfirmMajority, SearchConfirmRetryWins, SearchConfirmNone)...)
	return errs
}

// StepWarmUp is each step's warm-up (0 when unset).
func (s *SearchSpec) StepWarmUp() time.Duration {
	if s.WarmUp == nil {
		return 0
	}
	return s.WarmUp.Duration
}

// PerStep is one step's length: its warm-up and its measured time.
func (s *SearchSpec) PerStep() time.Duration {
	return SaturatingSum(s.StepWarmUp(), s.StepDuration.Duration)
}

// MeasuredTimes is the measured window of a step that starts at at: from
// the end of its warm-up to its end, the minutes whose server CPU judge
// it (spanner/monitoring.StepCPU), for `spanbench run` and the manager
// alike.
func (s *SearchSpec) MeasuredTimes(at time.Time) (from, end time.Time) {
	return at.Add(s.StepWarmUp()), at.Add(s.PerStep())
}

// SearchStepIntervals are a resolved workload's search step's warm-up and
// whole length (warm-up and measured time), in its intervals (admission
// holds both to whole intervals).
func (w *WorkloadSpec) SearchStepIntervals() (warm, whole int) {
	iv := w.Interval.Duration
	return int(w.Load.Search.StepWarmUp() / iv), int(w.Load.Search.PerStep() / iv)
}

// SearchWindow is search step k's measured intervals in the search's
// document, [first, end): each step's intervals follow the previous
// steps', and the first warm of them are its warm-up.
func (w *WorkloadSpec) SearchWindow(k int) (first, end int) {
	warm, whole := w.SearchStepIntervals()
	return k*whole + warm, (k + 1) * whole
}

// OperationNames are the names of a resolved workload's operations, in
// order: what a search's SLO may name.
func (w *WorkloadSpec) OperationNames() []string {
	names := make([]string, 0, len(w.Operations))
	for i := range w.Operations {
		names = append(names, w.Operations[i].EffectiveName())
	}
	return names
}

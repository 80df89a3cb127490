package v1alpha1

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Bounds of streams the schema sets with markers, repeated for Validate.
const (
	maxStreams          = 8
	maxStreamNameLength = 40
	maxStreamRunners    = 100
	maxRunnerIndex      = 999
	maxIterations       = 1_000_000_000_000
)

// HasStreams reports whether the workload declares streams; without them
// it is one implicit stream of every operation at load.
func (w *WorkloadSpec) HasStreams() bool { return w.Streams != nil }

// IsBatch reports whether the stream runs a fixed number of iterations.
func (s *StreamSpec) IsBatch() bool { return s.Iterations != nil }

// Window is when the stream runs within a run of length run: from its
// start offset for its duration, its steps' sum, or to the run's end.
func (s *StreamSpec) Window(run time.Duration) (offset, length time.Duration) {
	if s.StartOffset != nil {
		offset = s.StartOffset.Duration
	}
	switch {
	case s.Duration != nil:
		return offset, s.Duration.Duration
	case s.Load.Steps != nil:
		return offset, s.Load.stepsDuration()
	}
	return offset, run - offset
}

// RunsOn reports whether the stream runs on runner pod index.
func (s *StreamSpec) RunsOn(index int32) bool {
	if s.Runners == nil {
		return true
	}
	for _, r := range s.Runners {
		if r == index {
			return true
		}
	}
	return false
}

// defaultStreams fills each stream's load defaults, as setDefaults does for
// the workload's own load.
func (w *WorkloadSpec) defaultStreams() {
	for i := range w.Streams {
		w.Streams[i].Load.setDefaults()
	}
}

// validateStreams checks load-versus-streams and every stream, the way the
// schema's rules on WorkloadSpec and StreamSpec do.
func (w *WorkloadSpec) validateStreams(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	p := path.Child("streams")
	switch {
	case w.Streams == nil:
		return w.Load.validate(path.Child("load"))
	case !w.Load.isZero():
		errs = append(errs, field.Invalid(path.Child("load"), "", "set load (one stream of every operation) or streams (each with its own load), exactly one of them"))
	case len(w.Streams) == 0:
		return append(errs, field.Required(p, "at least one stream, or no streams field"))
	}
	if len(w.Streams) > maxStreams {
		errs = append(errs, field.TooMany(p, len(w.Streams), maxStreams))
	}
	ops := w.operationNames()
	names := map[string]bool{}
	for i := range w.Streams {
		s := &w.Streams[i]
		if names[s.Name] {
			errs = append(errs, field.Duplicate(p.Index(i).Child("name"), s.Name))
		}
		names[s.Name] = true
		errs = append(errs, s.validate(p.Index(i), ops)...)
		if w.Duration != nil && w.Duration.Duration <= MaxRunDuration {
			errs = append(errs, s.validateWindow(p.Index(i), w.Duration.Duration)...)
		}
	}
	return errs
}

// operationNames are the names streams may refer to: the operations', or
// TPCC's default mix when it has none.
func (w *WorkloadSpec) operationNames() map[string]bool {
	names := map[string]bool{}
	ops := w.Operations
	if len(ops) == 0 && w.Type == WorkloadTPCC {
		ops = TPCCStandardMix()
	}
	for i := range ops {
		names[ops[i].EffectiveName()] = true
	}
	return names
}

func (s *StreamSpec) validate(path *field.Path, ops map[string]bool) field.ErrorList {
	var errs field.ErrorList
	if !validDNSLabel(s.Name, maxStreamNameLength) {
		errs = append(errs, field.Invalid(path.Child("name"), s.Name, fmt.Sprintf("must be a DNS label: lower case letters, digits and '-', starting with a letter and ending with a letter or digit, at most %d characters", maxStreamNameLength)))
	}
	errs = append(errs, s.validateOperations(path.Child("operations"), ops)...)
	errs = append(errs, s.Load.validate(path.Child("load"))...)
	if s.Load.Search != nil {
		errs = append(errs, field.Forbidden(path.Child("load", "search"), "a capacity search is the run's load (workload.load.search), not a stream's"))
	}
	errs = append(errs, InRange(path.Child("iterations"), s.Iterations, 1, maxIterations)...)
	if s.Iterations != nil && s.Load.Concurrency == nil {
		errs = append(errs, field.Invalid(path.Child("iterations"), *s.Iterations, "a batch stream runs a fixed number of iterations with load.concurrency workers; set load.concurrency"))
	}
	if s.StartOffset != nil && (s.StartOffset.Duration < 0 || s.StartOffset.Duration > MaxRunDuration) {
		errs = append(errs, field.Invalid(path.Child("startOffset"), s.StartOffset.Duration.String(), "must be a duration from 0s to "+formatHours(MaxRunDuration)))
	}
	if s.Duration != nil {
		errs = append(errs, bounded(path.Child("duration"), s.Duration, MaxRunDuration)...)
		if s.Load.Steps != nil {
			errs = append(errs, field.Invalid(path.Child("duration"), s.Duration.Duration.String(), "set the stream's duration, or load.steps (whose durations add up to the stream's), not both"))
		}
	}
	return append(errs, s.validateRunners(path.Child("runners"))...)
}

func (s *StreamSpec) validateOperations(path *field.Path, ops map[string]bool) field.ErrorList {
	var errs field.ErrorList
	if len(s.Operations) == 0 {
		return append(errs, field.Required(path, "at least one operation of the workload's, by name"))
	}
	if len(s.Operations) > maxOperations {
		errs = append(errs, field.TooMany(path, len(s.Operations), maxOperations))
	}
	seen := map[string]bool{}
	for i, o := range s.Operations {
		p := path.Index(i)
		if seen[o.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), o.Name))
		}
		seen[o.Name] = true
		if !ops[o.Name] {
			errs = append(errs, field.NotFound(p.Child("name"), o.Name))
		}
		errs = append(errs, InRange(p.Child("weight"), &o.Weight, 1, 1_000_000)...)
	}
	return errs
}

func (s *StreamSpec) validateRunners(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Runners != nil && len(s.Runners) == 0 {
		return append(errs, field.Required(path, "at least one runner index, or no runners field (every runner pod)"))
	}
	if len(s.Runners) > maxStreamRunners {
		errs = append(errs, field.TooMany(path, len(s.Runners), maxStreamRunners))
	}
	seen := map[int32]bool{}
	for i, r := range s.Runners {
		if seen[r] {
			errs = append(errs, field.Duplicate(path.Index(i), r))
		}
		seen[r] = true
		errs = append(errs, InRange(path.Index(i), &r, 0, maxRunnerIndex)...)
	}
	return errs
}

// validateWindow keeps the stream within the run: its start offset plus
// its length must not pass the run's end.
func (s *StreamSpec) validateWindow(path *field.Path, run time.Duration) field.ErrorList {
	for _, st := range s.Load.Steps {
		if st.Duration.Duration > MaxRunDuration {
			return nil // the schema's rule skips a stream whose steps are invalid
		}
	}
	offset, length := s.Window(run)
	if s.Duration == nil && s.Load.Steps == nil {
		length = time.Nanosecond
	}
	if SaturatingSum(offset, length) > run {
		return field.ErrorList{field.Invalid(path, s.Name, fmt.Sprintf("the stream's startOffset plus its duration (or its load.steps' sum) must not pass the run's duration (%s)", run))}
	}
	return nil
}

// validateStreamRunners keeps every pinned runner index below the run's
// runner count.
func (s *BenchmarkRunSpec) validateStreamRunners(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	replicas := int32(1)
	if s.Runners.Replicas != nil {
		replicas = *s.Runners.Replicas
	}
	for i := range s.Workload.Streams {
		for j, r := range s.Workload.Streams[i].Runners {
			if r >= replicas {
				errs = append(errs, field.Invalid(path.Index(i).Child("runners").Index(j), r, fmt.Sprintf("runner indexes must be below runners.replicas (%d)", replicas)))
			}
		}
	}
	return errs
}

// isZero reports whether the load was left out (a streams workload).
func (l *LoadSpec) isZero() bool {
	return l.Rate == nil && l.Steps == nil && l.Ramp == nil && l.Concurrency == nil && l.Arrivals == "" && l.MaxInFlight == nil
}

// validDNSLabel is an RFC 1123 label of at most n characters.
func validDNSLabel(s string, n int) bool {
	if !validName(s) || len(s) > n {
		return false
	}
	return s[len(s)-1] != '-'
}

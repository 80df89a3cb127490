package customcheck

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/capacity"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/monitoring"
)

// Search checks a workload's capacity search (load.search) with
// result/capacity, the search's one owner of its rules, which the API
// package does not link: the rates and resolution, the SLO's conditions
// and the operations they name, each step a whole number of intervals,
// and the worst case (CheckSearchWorstCase; judgesCPU counts each step's
// wait for its CPU, SearchJudgesCPU) within the workload's duration, which
// bounds the run and which the operator's --max-duration bounds in turn.
// It checks nothing for a workload without a search; Workload, Spec, Run
// and Campaign call it, so the webhook and `spanbench run` refuse the
// same searches alike.
func Search(path *field.Path, w *v1alpha1.WorkloadSpec, judgesCPU bool) field.ErrorList {
	s := w.Load.Search
	if s == nil {
		return nil
	}
	sp := path.Child("load", "search")
	p, slo, errs := SearchParams(sp, s)
	resolved := w.Resolved()
	for _, fe := range capacity.Validate(p, slo, resolved.OperationNames()) {
		errs = append(errs, searchFieldError(sp, s, fe))
	}
	if iv := resolved.Interval.Duration; iv > 0 {
		if d := s.StepDuration.Duration; d > 0 && d%iv != 0 {
			errs = append(errs, field.Invalid(sp.Child("stepDuration"), d.String(), fmt.Sprintf("must be a whole number of the workload's intervals (%s): a step is measured from its own intervals", iv)))
		}
		if d := s.StepWarmUp(); d%iv != 0 {
			errs = append(errs, field.Invalid(sp.Child("warmUp"), d.String(), fmt.Sprintf("must be a whole number of the workload's intervals (%s)", iv)))
		}
	}
	if wu := w.WarmUp; wu != nil && wu.Mode != "" && wu.Mode != v1alpha1.WarmUpNone {
		errs = append(errs, field.Forbidden(path.Child("warmUp", "mode"), "a capacity search warms each step up itself (load.search.warmUp): leave the run's warm-up None"))
	}
	if len(errs) == 0 {
		if fe := CheckSearchWorstCase(path, w, judgesCPU); fe != nil {
			errs = append(errs, fe)
		}
	}
	return errs
}

// SearchJudgesCPU says whether each step of w's search waits, after it
// ends, for Cloud Monitoring's CPU minutes of it before it is judged: its
// SLO has a cpu condition and t is Cloud Spanner (the emulator reports no
// CPU, and its condition stays not measured). The manager's step judge
// and `spanbench run` read the CPU exactly then.
func SearchJudgesCPU(w *v1alpha1.WorkloadSpec, t v1alpha1.TargetSpec) bool {
	return w.Load.Search != nil && capacity.HasCPU(w.Load.Search.SLO) && !endpoint.For(t, endpoint.Endpoint{}).IsEmulator()
}

// SearchStepWait is the longest a step's judge waits after the step for
// its CPU minutes (monitoring.StepCPU.MaxWait, as the manager and
// `spanbench run` read them), when judgesCPU; else none.
func SearchStepWait(judgesCPU bool) time.Duration {
	if !judgesCPU {
		return 0
	}
	return monitoring.StepCPU{}.MaxWait()
}

// CheckSearchWorstCase refuses a search (load.search of the workload at
// path) whose worst case exceeds the workload's duration: MaxSteps steps,
// each its warm-up, its measured time and, when judgesCPU, the wait for
// its CPU after it (SearchStepWait). It is the one owner of a search's
// worst case: admission (Search) and `spanbench run` call it. nil when
// the search fits, or has no duration to fit (the API refuses that).
func CheckSearchWorstCase(path *field.Path, w *v1alpha1.WorkloadSpec, judgesCPU bool) *field.Error {
	s := w.Load.Search
	if s == nil || w.Duration == nil {
		return nil
	}
	p, _, errs := SearchParams(path.Child("load", "search"), s)
	if len(errs) > 0 {
		return errs[0]
	}
	wait := SearchStepWait(judgesCPU)
	fe := capacity.CheckWorstCase(p, s.PerStep()+wait, w.Duration.Duration, "stepDuration")
	if fe == nil {
		return nil
	}
	step := "a step is its warm-up and its measured time"
	if wait > 0 {
		step = fmt.Sprintf("a step is its warm-up, its measured time and up to %s waiting after it for Cloud Monitoring's CPU minutes, which a cpu condition on Cloud Spanner is judged by", wait)
	}
	return field.Invalid(path.Child("load", "search", fe.Field), s.StepDuration.Duration.String(),
		fmt.Sprintf("%s (%s; the limit is the workload's duration)", fe.Detail, step))
}

// SearchParams are a search spec's parameters and its SLO as
// result/capacity reads them, with the conditions that do not parse
// refused at their index under path.
func SearchParams(path *field.Path, s *v1alpha1.SearchSpec) (capacity.Params, capacity.SLO, field.ErrorList) {
	p := capacity.Params{From: float64(s.From), Max: float64(s.Max), Resolution: float64(s.Resolution), Confirm: capacity.Confirm(s.Confirm)}
	var slo capacity.SLO
	var errs field.ErrorList
	for i, text := range s.SLO {
		c, err := capacity.ParseCondition(text)
		if err != nil {
			errs = append(errs, field.Invalid(path.Child("slo").Index(i), text, err.Error()))
			continue
		}
		slo = append(slo, c)
	}
	return p, slo, errs
}

// searchFieldError words a capacity.FieldError at its field: a parameter
// of the search, or a condition of the SLO (whose text is the field's
// value; the part of it at fault leads the detail).
func searchFieldError(path *field.Path, s *v1alpha1.SearchSpec, fe *capacity.FieldError) *field.Error {
	rest, ok := strings.CutPrefix(fe.Field, "slo[")
	if !ok {
		return field.Invalid(path.Child(fe.Field), fe.Value, fe.Detail)
	}
	idx, part, _ := strings.Cut(rest, "]")
	i, err := strconv.Atoi(idx)
	if err != nil || i < 0 || i >= len(s.SLO) {
		return field.Invalid(path.Child("slo"), fe.Value, fe.Detail)
	}
	detail := fe.Detail
	if part = strings.TrimPrefix(part, "."); part != "" {
		detail = fmt.Sprintf("%s %s: %s", part, fe.Value, fe.Detail)
	}
	return field.Invalid(path.Child("slo").Index(i), s.SLO[i], detail)
}

// SearchPlan is a workload's capacity search as it runs: its parameters,
// its SLO resolved for the target's instance configuration, and its
// section of the result document before any step. `spanbench run` and
// the manager both plan a search with PlanSearch, so that a step is
// judged by the same SLO wherever it runs.
type SearchPlan struct {
	Params  capacity.Params
	SLO     capacity.SLO
	Section *result.Search
}

// PlanSearch plans w's search (load.search, which must be set) on an
// instance of instanceConfig; a search that does not validate is refused
// with its fields named.
func PlanSearch(w *v1alpha1.WorkloadSpec, instanceConfig string) (SearchPlan, error) {
	spec := w.Load.Search
	if spec == nil {
		return SearchPlan{}, fmt.Errorf("the workload has no load.search")
	}
	p, slo, errs := SearchParams(field.NewPath("workload", "load", "search"), spec)
	if len(errs) > 0 {
		return SearchPlan{}, errs.ToAggregate()
	}
	if fes := p.Validate(); len(fes) > 0 {
		return SearchPlan{}, fes[0]
	}
	plan := SearchPlan{Params: p, SLO: slo.Resolve(instanceConfig)}
	plan.Section = &result.Search{From: p.From, Max: p.Max, Resolution: p.Resolution, Confirm: string(p.Confirm),
		WarmUpSeconds: spec.StepWarmUp().Seconds(), StepSeconds: spec.StepDuration.Seconds(), MaxSteps: p.MaxSteps()}
	if plan.Section.Confirm == "" {
		plan.Section.Confirm = string(capacity.ConfirmMajority)
	}
	for _, c := range plan.SLO {
		plan.Section.SLO = append(plan.Section.SLO, c.String())
	}
	return plan, nil
}

package benchmarkrun

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/result"
	searchcap "github.com/spanbench/spanbench/result/capacity"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/spanner/customcheck"
	"github.com/spanbench/spanbench/spanner/monitoring"
)

// A capacity search in the cluster (docs/capacity.md, protocol.SearchStep):
// the runners stay up across the steps; the controller decides every step.
// While the run is Running, each reconcile (woken by a runner's report in
// its shard map, or at the step's deadline) reads the step published in
// the control map; once every runner has reported its measurement of it,
// it merges them exactly, judges the step with the SLO
// (searchcap.Evaluate), tells the search (searchcap.Search, the rules
// `spanbench run` follows too) and publishes, in one patch with the
// judged steps, the next step a startup grace ahead, or the end of the
// search. A runner that does not report within protocol.SearchReportTimeout
// of a step's end fails the run (SearchStalled); a next step that would
// end after the workload's duration is never published (the search stops
// OutOfTime), so a search takes at most the workload's duration.

// searchState is a run's search as the control map records it.
type searchState struct {
	plan   customcheck.SearchPlan
	search *searchcap.Search
	judged []result.SearchStep
	// step is the published step (step 0 from the start time while none is).
	step protocol.SearchStep
	// control is the control map, for the next publication.
	control *corev1.ConfigMap
}

// advanceSearch moves a running search forward (see above) and keeps
// status.search in step with it; it returns when to look again (0: when
// a report arrives). It fails the run when the search cannot go on.
func (r *BenchmarkRunReconciler) advanceSearch(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec,
	reports []shardReport, control controlRecord, outbox *statuswrite.Outbox) (time.Duration, error) {
	if w.Load.Search == nil || run.Status.StartTime == nil {
		return 0, nil
	}
	st, err := readSearch(run, w, control)
	if err != nil {
		if se := (*searchError)(nil); errors.As(err, &se) {
			r.fail(run, outbox, v1alpha1.ReasonResultInvalid, err.Error())
			return 0, nil
		}
		return 0, err
	}
	applySearch(run, st)
	if st.step.Done {
		return 0, nil
	}
	m, missing, problem := stepMeasurement(reports, st.step)
	if problem != "" {
		r.fail(run, outbox, v1alpha1.ReasonRunnerFailed, problem)
		return 0, nil
	}
	per := w.Load.Search.PerStep()
	if len(missing) > 0 {
		deadline := st.step.At.Add(per + protocol.SearchReportTimeout)
		if left := deadline.Sub(r.now()); left > 0 {
			return left, nil
		}
		r.fail(run, outbox, v1alpha1.ReasonSearchStalled, fmt.Sprintf(
			"runner shards %v did not report search step %d (%g ops/s, from %s) within %s of its end: the step cannot be judged",
			missing, st.step.Step+1, st.step.Rate, st.step.At.UTC().Format(time.RFC3339), protocol.SearchReportTimeout))
		return 0, nil
	}
	if again, err := r.stepCPU(ctx, run, w, st.step, &m); err != nil || again > 0 {
		return again, err
	}
	judged, err := searchcap.Evaluate(st.plan.SLO, m)
	if err != nil {
		r.fail(run, outbox, v1alpha1.ReasonResultInvalid, fmt.Sprintf("search step %d: %v", st.step.Step+1, err))
		return 0, nil
	}
	judged.FirstInterval, judged.EndInterval = w.SearchWindow(st.step.Step)
	if err := st.search.Record(judged); err != nil {
		r.fail(run, outbox, v1alpha1.ReasonResultInvalid, fmt.Sprintf("search step %d: %v", st.step.Step+1, err))
		return 0, nil
	}
	st.judged = append(st.judged, judged)
	next := r.nextSearchStep(run, w, st)
	if err := r.publishSearch(ctx, st, next); err != nil {
		return 0, err
	}
	st.step = next
	applySearch(run, st)
	if next.Done {
		outbox.Normal(v1alpha1.ReasonSearchEnded, "capacity search ended: "+run.Status.Search.Summary)
		return 0, nil
	}
	return max(next.At.Add(per).Sub(r.now()), time.Second), nil
}

// stepCPU gives m the high-priority CPU of step's measured window, read
// from Cloud Monitoring (monitoring.StepCPU, the rules `spanbench run`
// follows too) for a search whose SLO has a cpu condition on Cloud
// Spanner; the emulator reports none and the condition stays not
// measured. Its minutes are published a few minutes after the step, so
// while they are not all in it returns when to look again (the runners
// wait for the next step, published once this one is judged), at most
// monitoring.DefaultDelay after the step's last whole minute; then, or
// when the manager does not read Cloud Monitoring, the figure is not
// measured with a note saying why.
func (r *BenchmarkRunReconciler) stepCPU(ctx context.Context, run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec,
	step protocol.SearchStep, m *searchcap.Measurement) (time.Duration, error) {
	if !customcheck.SearchJudgesCPU(w, run.Spec.Target) {
		return 0, nil
	}
	if r.ServerMetrics.Client == nil {
		m.CPUNote = "not measured: the manager does not read Cloud Monitoring (" + statuswrite.Truncate(r.ServerMetrics.Off, 200) + ")"
		return 0, nil
	}
	reader := monitoring.StepCPU{Client: r.ServerMetrics.Client, Clock: r.Clock,
		Instance: monitoring.Instance{Project: run.Spec.Target.Project, Instance: run.Spec.Target.Instance.Name, Database: run.Spec.Target.Database}}
	from, end := w.Load.Search.MeasuredTimes(step.At)
	cpu, note, again, err := reader.Try(ctx, from, end)
	if err != nil || again > 0 {
		return again, err
	}
	m.CPU, m.CPUNote = cpu, note
	return 0, nil
}

// searchError is a search record in the control map that the controller
// cannot continue from.
type searchError struct{ msg string }

func (e *searchError) Error() string { return e.msg }

// readSearch reads the run's search from its control map: the judged
// steps, the published step, and the search resumed from them.
func readSearch(run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec, control controlRecord) (*searchState, error) {
	plan, err := customcheck.PlanSearch(w, run.Spec.Target.Instance.Config)
	if err != nil {
		return nil, &searchError{"the run's capacity search: " + err.Error()}
	}
	cm := control.cm
	if cm == nil {
		return nil, control.err // the map could not be read: retried
	}
	st := &searchState{plan: plan, control: cm}
	step, judged, err := decodeSearchRecord(control, plan.Params.From)
	if err != nil {
		return nil, &searchError{fmt.Sprintf("ConfigMap %s: %v", cm.Name, err)}
	}
	st.judged = judged
	switch {
	case !step.Start.Equal(control.start):
		return nil, &searchError{fmt.Sprintf("ConfigMap %s publishes a search step of a run started at %s, not this one", cm.Name, step.Start.UTC().Format(time.RFC3339))}
	case len(st.judged) != step.Step:
		return nil, &searchError{fmt.Sprintf("ConfigMap %s records %d judged search steps with step %d published", cm.Name, len(st.judged), step.Step)}
	}
	st.step = step
	if st.search, err = searchcap.Resume(plan.Params, st.judged); err != nil {
		return nil, &searchError{fmt.Sprintf("ConfigMap %s: the judged search steps: %v", cm.Name, err)}
	}
	if rate, due := st.search.Next(); !step.Done && (!due || rate != step.Rate) {
		return nil, &searchError{fmt.Sprintf("ConfigMap %s publishes search step %d at %g ops/s, not the search's next rate", cm.Name, step.Step, step.Rate)}
	}
	if step.Done && st.search.Outcome(0).Reason == "" {
		st.search.StopOutOfTime() // published done with the search unfinished: it ran out of time
	}
	return st, nil
}

// decodeSearchRecord reads the control map's published step (step 0 at
// from, from its start time, while none is) and its judged steps.
func decodeSearchRecord(control controlRecord, from float64) (step protocol.SearchStep, judged []result.SearchStep, err error) {
	if control.err != nil {
		return step, nil, control.err
	}
	step, ok, err := protocol.DecodeSearchStep(control.cm.Data)
	if err == nil {
		judged, err = protocol.DecodeSearchJudged(control.cm.Data)
	}
	if err == nil && !ok {
		step = protocol.SearchStep{Start: control.start, Rate: from, At: control.start}
	}
	return step, judged, err
}

// stepMeasurement merges the runners' reports of step exactly; missing
// are the shards that have not reported it yet, problem why the search
// cannot go on (a runner failed, or sent what does not decode).
func stepMeasurement(reports []shardReport, step protocol.SearchStep) (m searchcap.Measurement, missing []int, problem string) {
	m = searchcap.Measurement{Offered: step.Rate}
	merged := false
	for _, s := range reports {
		switch {
		case s.err != nil:
			return m, nil, fmt.Sprintf("runner shard %d: unreadable report during the capacity search: %v", s.index, s.err)
		case s.State == protocol.StateFailed:
			return m, nil, fmt.Sprintf("runner shard %d failed during capacity search step %d: %s", s.index, step.Step+1, s.Message)
		case s.Search == "":
			missing = append(missing, s.index)
			continue
		}
		rep, sm, err := protocol.DecodeSearchReport(s.Search)
		switch {
		case err != nil:
			return m, nil, fmt.Sprintf("runner shard %d: %v", s.index, err)
		case !rep.Start.Equal(step.Start) || rep.Step != step.Step:
			missing = append(missing, s.index) // an earlier step's, or an earlier life's
			continue
		case rep.Offered != step.Rate:
			return m, nil, fmt.Sprintf("runner shard %d ran search step %d at %g ops/s, not the %g published", s.index, step.Step+1, rep.Offered, step.Rate)
		}
		if !merged {
			m.Seconds, merged = sm.Seconds, true
		}
		if err := m.Add(sm); err != nil {
			return m, nil, fmt.Sprintf("runner shard %d, search step %d: %v", s.index, step.Step+1, err)
		}
	}
	return m, missing, ""
}

// nextSearchStep is the step to publish after the ones judged: the
// search's next rate a startup grace from now, so that every runner sees
// it in time; or the search's end, when it is done or when the step would
// end after the workload's duration.
func (r *BenchmarkRunReconciler) nextSearchStep(run *v1alpha1.BenchmarkRun, w *v1alpha1.WorkloadSpec, st *searchState) protocol.SearchStep {
	next := protocol.SearchStep{Start: st.step.Start, Step: st.step.Step + 1}
	rate, due := st.search.Next()
	if !due {
		next.Done = true
		return next
	}
	grace := r.Runner.StartupGrace
	if grace <= 0 {
		grace = DefaultStartupGrace
	}
	at := r.now().Add(grace).Add(time.Millisecond - 1).Truncate(time.Millisecond)
	if at.Add(w.Load.Search.PerStep()).After(run.Status.StartTime.Add(w.Duration.Duration)) {
		st.search.StopOutOfTime()
		next.Done = true
		return next
	}
	next.Rate, next.At = rate, at
	return next
}

// publishSearch writes the judged steps and the next step into the
// control map in one patch, under an optimistic lock: two managers (or a
// stale cache) never publish two different steps.
func (r *BenchmarkRunReconciler) publishSearch(ctx context.Context, st *searchState, next protocol.SearchStep) error {
	judged, err := protocol.EncodeSearchJudged(st.judged)
	if err != nil {
		return err
	}
	step, err := protocol.EncodeSearchStep(next)
	if err != nil {
		return err
	}
	before := st.control.DeepCopy()
	if st.control.Data == nil {
		st.control.Data = map[string]string{}
	}
	maps.Copy(st.control.Data, judged)
	maps.Copy(st.control.Data, step)
	return r.Patch(ctx, st.control, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
}

// applySearch writes the search so far into status.search.
func applySearch(run *v1alpha1.BenchmarkRun, st *searchState) {
	o := st.search.Outcome(run.Spec.Target.Instance.Capacity())
	s := &v1alpha1.SearchStatus{MaxSteps: int32(st.search.MaxSteps()), SLO: slices.Clone(st.plan.Section.SLO), Reason: o.Reason, Done: o.Done}
	for _, step := range st.judged {
		s.Steps = append(s.Steps, searchStepStatus(step))
	}
	if o.Reason != "" {
		if o.Capacity > 0 {
			s.Capacity = v1alpha1.FormatThroughput(o.Capacity)
		}
		if o.CapacityPerNode > 0 {
			s.CapacityPerNode = v1alpha1.FormatThroughput(o.CapacityPerNode)
		}
		if o.FirstFailing > 0 {
			s.FirstFailing = v1alpha1.FormatThroughput(o.FirstFailing)
		}
		s.FailedConditions = o.FailedConditions
		s.Summary = searchSummary(o)
	}
	run.Status.Search = s
}

// searchSummary is the capacity as `kubectl get` shows it.
func searchSummary(o result.SearchOutcome) string {
	switch {
	case o.Capacity == 0:
		return "<" + v1alpha1.FormatThroughput(o.FirstFailing) + "/s"
	case !o.Done:
		return ">=" + v1alpha1.FormatThroughput(o.Capacity) + "/s (unfinished)"
	case o.FirstFailing == 0:
		return ">=" + v1alpha1.FormatThroughput(o.Capacity) + "/s"
	}
	return v1alpha1.FormatThroughput(o.Capacity) + "/s"
}

// searchStepStatus is one judged step as the status shows it.
func searchStepStatus(step result.SearchStep) v1alpha1.SearchStepStatus {
	out := v1alpha1.SearchStepStatus{Offered: v1alpha1.FormatThroughput(step.Offered), Achieved: v1alpha1.FormatThroughput(step.Achieved), Pass: step.Pass}
	if step.CPU != nil {
		out.CPU = fmt.Sprintf("%.1f%%", *step.CPU*100)
	}
	for _, f := range step.Figures {
		fs := v1alpha1.SearchFigureStatus{Condition: f.Condition, Note: statuswrite.Shorten(f.Note, 512), Pass: f.Pass, Measured: f.Measured}
		if v, ok := f.BaseValue(); ok {
			fs.Value, fs.BaseValue = f.ValueText(), v1alpha1.FormatDecimal(v)
		}
		out.Figures = append(out.Figures, fs)
	}
	return out
}

// runSearchSection is the search's section of the run's merged document:
// its plan and the steps the controller judged, from the control map; nil
// for a run without a search, or one whose record cannot be read (the
// status keeps what was judged).
func (r *BenchmarkRunReconciler) runSearchSection(ctx context.Context, run *v1alpha1.BenchmarkRun) (*result.Search, error) {
	w := run.Spec.Workload.Resolved()
	if w.Load.Search == nil || run.Status.StartTime == nil {
		return nil, nil
	}
	st, err := readSearch(run, &w, r.readControl(ctx, run))
	if se := (*searchError)(nil); errors.As(err, &se) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sec := *st.plan.Section
	sec.Outcome = st.search.Outcome(run.Spec.Target.Instance.Capacity())
	return &sec, nil
}

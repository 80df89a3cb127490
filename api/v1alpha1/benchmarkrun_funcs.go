package v1alpha1

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Defaults and bounds of a BenchmarkRun outside the workload.
const (
	// DefaultRunnerReplicas is spec.runners.replicas when unset.
	DefaultRunnerReplicas int32 = 1
	// DefaultPrepareDeadline is spec.deadlines.prepare when unset.
	DefaultPrepareDeadline = 15 * time.Minute
	// DefaultLoadDeadline is spec.deadlines.load when unset.
	DefaultLoadDeadline = time.Hour
	// DefaultRunnersReadyDeadline is spec.deadlines.runnersReady when unset.
	DefaultRunnersReadyDeadline = 10 * time.Minute
	// DefaultOverrunDeadline is spec.deadlines.overrun when unset.
	DefaultOverrunDeadline = 5 * time.Minute
	// DefaultAggregateDeadline is spec.deadlines.aggregate when unset.
	DefaultAggregateDeadline = 5 * time.Minute
	// MaxStageDeadline bounds every spec.deadlines entry.
	MaxStageDeadline = 7 * 24 * time.Hour
	// MaxRunNameLength bounds a BenchmarkRun's name, so that the names of its
	// children (RunnerJobName, the shard ConfigMaps, ...) stay within the 63
	// characters of a label value and a DNS label.
	MaxRunNameLength = 50
)

// LabelRun is the label every child object of a run carries, valued with the
// run's name.
const LabelRun = "bench.spanbench.io/run"

// FinalizerInstance holds a run whose Ephemeral instance may exist: the
// run object stays until the instance is deleted, so the instance is
// deleted even when the run is deleted while the manager is down.
const FinalizerInstance = "bench.spanbench.io/ephemeral-instance"

// MaxServerMetricsItems bounds the status's lists of server metrics (the
// CRD's MaxItems).
const MaxServerMetricsItems = 32

// runNamePattern is the metadata.name rule of the CRD: a DNS-1035 label, so
// that a Service can be named after the run.
var runNamePattern = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// Replicas is the number of runner pods, defaulted.
func (r *BenchmarkRun) Replicas() int32 {
	if p := r.Spec.Runners.Replicas; p != nil {
		return *p
	}
	return DefaultRunnerReplicas
}

// LoaderPods is the number of loader pods, defaulted.
func (r *BenchmarkRun) LoaderPods() int32 {
	if p := r.Spec.Workload.Dataset.LoaderPods; p != nil {
		return *p
	}
	return DefaultLoaderPods
}

// RunnerJobName is the name of the run's Indexed Job of runners.
func RunnerJobName(r *BenchmarkRun) string { return r.Name + "-runners" }

// LoaderJobName is the name of the run's Indexed Job of loader pods.
func LoaderJobName(r *BenchmarkRun) string { return r.Name + "-loader" }

// RunnerServiceAccountName is the service account spanbench creates for the
// run's runners when spec.runners.serviceAccountName is empty.
func RunnerServiceAccountName(r *BenchmarkRun) string { return r.Name + "-runner" }

// ResultConfigMapName is the ConfigMap holding the run's merged result
// document (status.report).
func ResultConfigMapName(r *BenchmarkRun) string { return r.Name + "-result" }

// RunLabels are the labels of the run's child objects.
func RunLabels(r *BenchmarkRun) map[string]string {
	return map[string]string{
		LabelRun:                       r.Name,
		"app.kubernetes.io/name":       "spanbench",
		"app.kubernetes.io/managed-by": "spanbench",
	}
}

// Deadlines are a run's stage deadlines with the defaults applied.
// +kubebuilder:object:generate=false
type Deadlines struct {
	Prepare, Load, RunnersReady, Overrun, Aggregate time.Duration //nolint:kubeapilinter // jsontags: a resolved value for code, never serialized, not an API type.
}

// Resolve applies the defaults to the deadlines.
func (d *DeadlinesSpec) Resolve() Deadlines {
	get := func(p *metav1.Duration, def time.Duration) time.Duration {
		if p == nil {
			return def
		}
		return p.Duration
	}
	return Deadlines{
		Prepare:      get(d.Prepare, DefaultPrepareDeadline),
		Load:         get(d.Load, DefaultLoadDeadline),
		RunnersReady: get(d.RunnersReady, DefaultRunnersReadyDeadline),
		Overrun:      get(d.Overrun, DefaultOverrunDeadline),
		Aggregate:    get(d.Aggregate, DefaultAggregateDeadline),
	}
}

// StageDeadline is when the run's current stage must end, and the
// spec.deadlines field that sets it (prepare, load, runnersReady, overrun,
// aggregate). ok is false for a finished run, and for one whose stage start
// is unknown. A controller requeues at the deadline and fails the run with
// ReasonDeadlineExceeded past it.
//
//	Pending, Preparing  creationTimestamp + prepare, or, once the run
//	                    holds its database, DatabaseClaimed's transition
//	                    + prepare (the wait for another run's database
//	                    does not eat into preparing it)
//	Loading             TargetReady's transition + load
//	WaitingForRunners   DatasetLoaded's transition + runnersReady
//	Running             startTime + the workload's duration + overrun
//	Aggregating         LoadCompleted's transition + aggregate
func (r *BenchmarkRun) StageDeadline() (fieldName string, at time.Time, ok bool) {
	d := r.Spec.Deadlines.Resolve()
	since := func(condType string) time.Time {
		if c := meta.FindStatusCondition(r.Status.Conditions, condType); c != nil {
			return c.LastTransitionTime.Time
		}
		return time.Time{}
	}
	var start time.Time
	var limit time.Duration
	switch DerivePhase(r.Status.Conditions) {
	case PhasePending, PhasePreparing:
		fieldName, start, limit = "prepare", r.CreationTimestamp.Time, d.Prepare
		if meta.IsStatusConditionTrue(r.Status.Conditions, ConditionDatabaseClaimed) {
			start = since(ConditionDatabaseClaimed)
		}
	case PhaseLoading:
		fieldName, start, limit = "load", since(ConditionTargetReady), d.Load
	case PhaseWaitingForRunners:
		fieldName, start, limit = "runnersReady", since(ConditionDatasetLoaded), d.RunnersReady
	case PhaseRunning:
		start = since(ConditionRunnersReady)
		if r.Status.StartTime != nil {
			start = r.Status.StartTime.Time
		}
		fieldName, limit = "overrun", SaturatingSum(r.Spec.Workload.TotalDuration(), d.Overrun)
	case PhaseAggregating:
		fieldName, start, limit = "aggregate", since(ConditionLoadCompleted), d.Aggregate
	default:
		return "", time.Time{}, false
	}
	if start.IsZero() {
		return "", time.Time{}, false
	}
	return fieldName, start.Add(limit), true
}

// DerivePhase summarises conditions as a phase: the outcome when Succeeded
// is set, else the stage after the last gate passed (TargetReady,
// DatasetLoaded, RunnersReady, LoadCompleted, checked from the last). A run
// without conditions, or one waiting for its database (DatabaseClaimed
// False, reason DatabaseInUse), is Pending.
func DerivePhase(conds []metav1.Condition) BenchmarkRunPhase {
	if c := meta.FindStatusCondition(conds, ConditionSucceeded); c != nil {
		switch c.Status {
		case metav1.ConditionTrue:
			return PhaseSucceeded
		case metav1.ConditionFalse:
			return PhaseFailed
		}
	}
	gates := []struct {
		cond  string
		phase BenchmarkRunPhase
	}{
		{ConditionLoadCompleted, PhaseAggregating},
		{ConditionRunnersReady, PhaseRunning},
		{ConditionDatasetLoaded, PhaseWaitingForRunners},
		{ConditionTargetReady, PhaseLoading},
	}
	for _, g := range gates {
		if meta.IsStatusConditionTrue(conds, g.cond) {
			return g.phase
		}
	}
	if c := meta.FindStatusCondition(conds, ConditionDatabaseClaimed); len(conds) == 0 || c != nil && c.Reason == ReasonDatabaseInUse {
		return PhasePending
	}
	return PhasePreparing
}

// SetCondition sets a condition stamped with the run's generation, keeps
// lastTransitionTime unless the status changes (then it is now), and
// re-derives status.phase and status.observedGeneration. It reports whether
// the condition changed.
func (r *BenchmarkRun) SetCondition(condType string, status metav1.ConditionStatus, reason, message string, now time.Time) bool {
	changed := meta.SetStatusCondition(&r.Status.Conditions, metav1.Condition{
		Type:               condType,
		Status:             status,
		Reason:             reason,
		Message:            message,
		ObservedGeneration: r.Generation,
		LastTransitionTime: metav1.NewTime(now),
	})
	r.Status.Phase = DerivePhase(r.Status.Conditions)
	r.Status.ObservedGeneration = r.Generation
	return changed
}

// MarkFailed ends the run: Succeeded=False with reason (one of the failure
// reasons) and a message saying what to do, and completionTime.
func (r *BenchmarkRun) MarkFailed(reason, message string, now time.Time) bool {
	r.setCompletion(now)
	return r.SetCondition(ConditionSucceeded, metav1.ConditionFalse, reason, message, now)
}

// MarkSucceeded ends the run with results: Succeeded=True, reason Completed,
// or PartialResults (and status.partial) when some runners did not report.
func (r *BenchmarkRun) MarkSucceeded(partial bool, message string, now time.Time) bool {
	r.setCompletion(now)
	r.Status.Partial = partial
	reason := ReasonCompleted
	if partial {
		reason = ReasonPartialResults
	}
	return r.SetCondition(ConditionSucceeded, metav1.ConditionTrue, reason, message, now)
}

func (r *BenchmarkRun) setCompletion(now time.Time) {
	if r.Status.CompletionTime == nil {
		t := metav1.NewTime(now)
		r.Status.CompletionTime = &t
	}
}

// IsFinished reports whether the run has an outcome (Succeeded True or
// False). A finished run is never acted on again.
func (r *BenchmarkRun) IsFinished() bool {
	c := meta.FindStatusCondition(r.Status.Conditions, ConditionSucceeded)
	return c != nil && c.Status != metav1.ConditionUnknown
}

// FormatThroughput renders operations per second as status.*.throughput: a
// decimal with one fractional digit, such as "812.4". Values that are not
// finite and non-negative render as "0.0"; values above MaxThroughput
// render as MaxThroughput, so that the figure always fits the schema's 24
// characters (a result's counts come from pods, its measured time may be a
// nanosecond).
func FormatThroughput(opsPerSecond float64) string {
	if math.IsNaN(opsPerSecond) || math.IsInf(opsPerSecond, 0) || opsPerSecond < 0 {
		opsPerSecond = 0
	}
	opsPerSecond = min(opsPerSecond, MaxThroughput)
	return strconv.FormatFloat(opsPerSecond, 'f', 1, 64)
}

// MaxThroughput is the largest throughput FormatThroughput writes: 1e18,
// 21 characters with its fraction.
const MaxThroughput = 1e18

// ParseThroughput reads a status.*.throughput value.
func ParseThroughput(s string) (float64, error) { return ParseDecimal(s) }

// FormatDecimal renders a non-negative figure that must keep its
// precision, such as status.search's baseValue, as a decimal string of at
// most 12 significant digits and no exponent: a ratio of 1e-05 is
// "0.00001", never a rounded "0.00". Values that are not finite, negative
// or below MinDecimal render as "0", values above MaxThroughput as
// MaxThroughput, so that the text always fits 40 characters.
func FormatDecimal(v float64) string {
	if !(v >= MinDecimal) || math.IsInf(v, 0) {
		return "0"
	}
	rounded, err := strconv.ParseFloat(strconv.FormatFloat(min(v, MaxThroughput), 'e', 11, 64), 64)
	if err != nil {
		return "0" // unreachable: FormatFloat's 'e' form of a finite value parses
	}
	return strconv.FormatFloat(rounded, 'f', -1, 64)
}

// MinDecimal is the smallest figure FormatDecimal writes as itself: 1e-24,
// far below any ratio of 64-bit counts a step can have.
const MinDecimal = 1e-24

// ParseDecimal reads a non-negative decimal status figure, such as
// FormatDecimal's or FormatThroughput's.
func ParseDecimal(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: not a non-negative decimal", s)
	}
	return v, nil
}

// LatencyFromMicros turns a histogram value in microseconds into a
// status latency, such as 4.211ms.
func LatencyFromMicros(us int64) *metav1.Duration {
	return &metav1.Duration{Duration: time.Duration(us) * time.Microsecond}
}

// Validate checks a run the way the API server's schema and CEL rules do,
// naming each field by its path from the object (metadata.name,
// spec.workload.load.rate). It accepts a spec before or after defaulting.
// Immutability is the API server's alone: it needs the old object.
func (r *BenchmarkRun) Validate() field.ErrorList {
	var errs field.ErrorList
	if p := field.NewPath("metadata", "name"); len(r.Name) > MaxRunNameLength || !runNamePattern.MatchString(r.Name) {
		errs = append(errs, field.Invalid(p, r.Name, fmt.Sprintf("at most %d characters of lower-case letters, digits and '-', starting with a letter and ending with a letter or digit", MaxRunNameLength)))
	}
	return append(errs, r.Spec.Validate(field.NewPath("spec"))...)
}

// Validate checks a spec the way the API server's schema and CEL rules do.
func (s *BenchmarkRunSpec) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, s.Target.Validate(path.Child("target"))...)
	errs = append(errs, s.Workload.Validate(path.Child("workload"))...)
	errs = append(errs, s.Runners.validate(path.Child("runners"))...)
	errs = append(errs, s.validateStreamRunners(path.Child("workload", "streams"))...)
	errs = append(errs, s.Deadlines.validate(path.Child("deadlines"))...)
	if s.Target.SplitPoints != nil && s.Workload.Type == WorkloadTPCC {
		errs = append(errs, field.Forbidden(path.Child("target", "splitPoints"), "split points are keys of YCSB's and Tweet's string ids; pre-splitting TPCC's warehouse-keyed tables is not built"))
	}
	errs = append(errs, s.validateSplitPointsFit(path.Child("target", "splitPoints"))...)
	errs = append(errs, s.validateLoadPace(path.Child("workload", "dataset", "maxRowsPerSecond"))...)
	return errs
}

// maxLoadRowsPerSecond is the highest dataset.maxRowsPerSecond (the
// schema's maximum, and the CEL rule's on BenchmarkRunSpec).
const maxLoadRowsPerSecond = 100_000_000

// validateLoadPace refuses a load cap (dataset.maxRowsPerSecond) under
// which a YCSB or Tweet dataset cannot load within deadlines.load: the
// run would spend the whole deadline loading and then fail. TPCC's and
// Custom's load units follow from other fields; their cap is not checked
// here (the CEL rule on BenchmarkRunSpec holds the same cases). Values out
// of their own range are reported on their own fields.
func (s *BenchmarkRunSpec) validateLoadPace(path *field.Path) field.ErrorList {
	d, w := &s.Workload.Dataset, s.Workload.Type
	if d.MaxRowsPerSecond == nil || w == WorkloadTPCC || w == WorkloadCustom || *d.MaxRowsPerSecond < 1 || *d.MaxRowsPerSecond > maxLoadRowsPerSecond {
		return nil
	}
	rows := *defaulted(d.Rows, DefaultDatasetRows)
	load := s.Deadlines.Resolve().Load
	if rows < 0 || load <= 0 || load > MaxStageDeadline {
		return nil
	}
	if rows > *d.MaxRowsPerSecond*int64(load/time.Second) {
		return field.ErrorList{field.Invalid(path, *d.MaxRowsPerSecond, fmt.Sprintf("at this cap the dataset's %d rows take at least %s to load, more than deadlines.load (%s) allows; raise the cap or deadlines.load",
			rows, (time.Duration((rows+*d.MaxRowsPerSecond-1) / *d.MaxRowsPerSecond)*time.Second).String(), load))}
	}
	return nil
}

// validateSplitPointsFit refuses more split points than the dataset has
// rows (YCSB and Tweet, whose keys the split points divide): the extra
// splits would hold no row, and Spanner would merge them again.
func (s *BenchmarkRunSpec) validateSplitPointsFit(path *field.Path) field.ErrorList {
	sp := s.Target.SplitPoints
	if sp == nil || s.Workload.Type == WorkloadTPCC || s.Workload.Type == WorkloadCustom {
		return nil
	}
	n := int64(len(sp.Keys))
	if sp.Keys == nil && sp.Count != nil {
		n = int64(*sp.Count)
	}
	if n > MaxSplitPoints {
		return nil // reported on keys or count
	}
	if rows := *defaulted(s.Workload.Dataset.Rows, DefaultDatasetRows); n > rows {
		return field.ErrorList{field.Invalid(path, n, fmt.Sprintf("more split points than the dataset has rows (workload.dataset.rows: %d, default %d): a split would hold no row", rows, DefaultDatasetRows))}
	}
	return nil
}

func (d *DeadlinesSpec) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name string
		d    *metav1.Duration
	}{
		{"prepare", d.Prepare}, {"load", d.Load}, {"runnersReady", d.RunnersReady},
		{"overrun", d.Overrun}, {"aggregate", d.Aggregate},
	} {
		if f.d != nil && (f.d.Duration <= 0 || f.d.Duration > MaxStageDeadline) {
			errs = append(errs, field.Invalid(path.Child(f.name), f.d.Duration.String(), "must be a positive duration of at most 168h"))
		}
	}
	return errs
}

// ExpectsRows says whether an operation of type t reads keys the dataset
// holds, so that finding no row is a not-found rather than an answer: point
// reads (Read, of YCSB and Tweet alike), key lists (ReadKeys) and scans
// (Scan, always within one loaded key block), and a Custom workload's
// ReadRows (keys of loaded rows). QueryBySort (a value range that may hold
// nothing), FullScan (an aggregate) and a Custom Query (any SQL) may
// rightly return nothing; writes count the rows they wrote instead.
func (t OperationType) ExpectsRows() bool {
	switch t {
	case OpRead, OpScan, OpReadKeys, OpReadRows:
		return true
	}
	return false
}

// StalenessMargin is added to the staleness bound when waiting for stale
// reads to see a freshly loaded dataset: the emulator's clock runs a
// little ahead of real time (EMULATOR.md) and commit timestamps with it.
const StalenessMargin = time.Second

// StaleReadsSeeDataAfter is the longest staleness any operation of w reads
// at (exact or max): a stale read started sooner than that after the
// dataset was loaded may read the empty pre-load snapshot. 0 when every
// read is strong.
func (w *WorkloadSpec) StaleReadsSeeDataAfter() time.Duration {
	var longest time.Duration
	for _, o := range w.Operations {
		if s := o.Staleness; s != nil {
			if s.Exact != nil {
				longest = max(longest, s.Exact.Duration)
			}
			if s.Max != nil {
				longest = max(longest, s.Max.Duration)
			}
		}
	}
	return longest
}

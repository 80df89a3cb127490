package v1alpha1

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Defaults of the workload model. The CRD carries none of them as schema
// defaults on purpose: Resolved fills them in one place for both the CLI and
// the controller, and the resolved spec is recorded with every result.
const (
	DefaultDatasetRows     int64 = 1000
	DefaultFieldBytes      int32 = 100
	DefaultBatchRows       int32 = 500
	DefaultLoaders         int32 = 4
	DefaultLoaderPods      int32 = 1
	MaxLoaderPods          int32 = 100
	DefaultRows            int32 = 10
	DefaultMaxInFlight     int32 = 512
	DefaultWarmUpWindow    int32 = 3
	DefaultWarmUpTolerance int32 = 10
	DefaultInterval              = 10 * time.Second
	MaxCommitDelay               = 500 * time.Millisecond
)

// Bounds of the workload's durations, as the schema's CEL rules set them.
const (
	// MaxRunDuration bounds a run's duration (or its steps' sum), and each
	// part of it: a step, the ramp, a Fixed warm-up, an Auto warm-up's max.
	MaxRunDuration = 168 * time.Hour
	// MinInterval and MaxInterval bound workload.interval.
	MinInterval = time.Second
	MaxInterval = time.Hour
	// MaxStaleness bounds staleness.exact and staleness.max: Spanner keeps
	// old versions for at most 7 days (version_retention_period).
	MaxStaleness = 168 * time.Hour
)

// Bounds the schema sets with markers, repeated for Validate.
const (
	maxOperationNameLength = 40
	maxOperations          = 16
	maxSteps               = 100
	maxReplicaSelections   = 10
	maxRate                = 10_000_000
)

// readOps are the operations that only read: they may be stale and directed.
var readOps = map[OperationType]bool{OpRead: true, OpScan: true, OpReadKeys: true, OpQueryBySort: true, OpFullScan: true,
	OpOrderStatus: true, OpStockLevel: true, OpQuery: true, OpReadRows: true}

// workloadOps lists the operations each built-in workload implements.
var workloadOps = map[WorkloadType][]OperationType{
	WorkloadYCSB:   {OpRead, OpScan, OpReadKeys, OpInsert, OpUpdate, OpDelete, OpReadModifyWrite},
	WorkloadTweet:  {OpRead, OpInsert, OpUpdate, OpDelete, OpQueryBySort, OpFullScan},
	WorkloadTPCC:   {OpNewOrder, OpPayment, OpOrderStatus, OpDelivery, OpStockLevel},
	WorkloadCustom: customOps,
}

// IsRead reports whether the operation only reads.
func (t OperationType) IsRead() bool { return readOps[t] }

// IsWrite reports whether the operation commits a read-write transaction or
// mutations.
func (t OperationType) IsWrite() bool { return !readOps[t] }

// StatisticsTags says where Spanner's statistics hold the operation's
// work. The runner gives its requests and its transactions one tag
// (RequestTag); statements reports whether the operation sends queries,
// DML or reads, which QUERY_STATS and READ_STATS keep by request tag, and
// transactions whether it commits (a read-write transaction or
// mutations), which TXN_STATS and LOCK_STATS keep by transaction tag. A
// write made of mutations alone sends no statement; a TPC-C or Custom
// transaction reads and commits, so it has both.
func (o OperationSpec) StatisticsTags() (statements, transactions bool) {
	switch o.Type {
	case OpMutation:
		statements = false
	case OpInsert, OpUpdate, OpDelete:
		statements = o.WritePath == WriteDML
	default:
		statements = true
	}
	return statements, o.Type.IsWrite()
}

// HasWritePath reports whether the operation can choose Mutation or DML.
func (t OperationType) HasWritePath() bool {
	switch t {
	case OpInsert, OpUpdate, OpDelete, OpNewOrder, OpPayment, OpDelivery:
		return true
	}
	return false
}

// HasAPIChoice reports whether the operation can go through the Read or the
// SQL API.
func (t OperationType) HasAPIChoice() bool {
	return t == OpRead || t == OpScan || t == OpReadKeys
}

// DefaultName is the operation's name when the spec gives none: the type in
// kebab case (ReadModifyWrite -> read-modify-write).
func (t OperationType) DefaultName() string {
	var b strings.Builder
	for i, r := range string(t) {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// Resolved is the workload as it runs: a deep copy with every optional
// field the user left out filled in. It is the one place the workload's
// defaults are applied: the controller resolves a run's workload once per
// reconcile and hands the result on (the control document carries it to the
// pods), the CLI once per invocation. w itself is never changed: it may be
// an object in the manager's cache, or the user's manifest. Resolving a
// resolved workload changes nothing.
func (w *WorkloadSpec) Resolved() WorkloadSpec {
	out := w.DeepCopy()
	out.setDefaults()
	return *out
}

// setDefaults fills every optional field left out, in place; Resolved is
// its only caller, on its own copy.
func (w *WorkloadSpec) setDefaults() {
	if w.Type == WorkloadTPCC {
		w.defaultTPCC()
	}
	d := &w.Dataset
	if w.Custom != nil && d.Rows == nil {
		units := w.Custom.Units()
		d.Rows = &units
	}
	d.Rows = defaulted(d.Rows, DefaultDatasetRows)
	d.FieldBytes = defaulted(d.FieldBytes, DefaultFieldBytes)
	d.BatchRows = defaulted(d.BatchRows, DefaultBatchRows)
	d.Loaders = defaulted(d.Loaders, DefaultLoaders)
	d.LoaderPods = defaulted(d.LoaderPods, DefaultLoaderPods)
	for i := range w.Operations {
		w.Operations[i].defaultOp()
	}
	if w.HasStreams() {
		w.defaultStreams()
	} else {
		w.Load.setDefaults()
	}
	if w.WarmUp == nil {
		w.WarmUp = &WarmUpSpec{}
	}
	w.WarmUp.defaultWarmUp(w.TotalDuration())
	if w.Interval == nil {
		w.Interval = &metav1.Duration{Duration: DefaultInterval}
	}
}

func (o *OperationSpec) defaultOp() {
	if o.Name == "" && !o.Type.IsCustom() {
		// A Custom operation has no default name: Validate asks for one.
		o.Name = o.Type.DefaultName()
	}
	if o.Type.HasAPIChoice() && o.API == "" {
		o.API = APIRead
	}
	if o.Type.HasWritePath() && o.WritePath == "" {
		o.WritePath = WriteMutation
	}
	if o.Type.ReturnsRows() {
		o.Rows = defaulted(o.Rows, DefaultRows)
	}
	if o.Keys == "" {
		o.Keys = KeysUniform
	}
}

func (wu *WarmUpSpec) defaultWarmUp(run time.Duration) {
	if wu.Mode == "" {
		wu.Mode = WarmUpNone
	}
	if wu.Mode != WarmUpAuto {
		return
	}
	wu.Window = defaulted(wu.Window, DefaultWarmUpWindow)
	wu.TolerancePercent = defaulted(wu.TolerancePercent, DefaultWarmUpTolerance)
	if wu.Max == nil {
		wu.Max = &metav1.Duration{Duration: run / 2}
	}
}

func defaulted[T comparable](p *T, def T) *T {
	if p != nil {
		return p
	}
	return &def
}

// setDefaults fills a load's arrivals (open loop) and maxInFlight.
func (l *LoadSpec) setDefaults() {
	if l.Concurrency == nil && l.Arrivals == "" {
		l.Arrivals = ArrivalsUniform
	}
	l.MaxInFlight = defaulted(l.MaxInFlight, DefaultMaxInFlight)
}

// TotalDuration is how long the load runs: duration, or the sum of the
// steps.
func (w *WorkloadSpec) TotalDuration() time.Duration {
	if w.Duration != nil {
		return w.Duration.Duration
	}
	return w.Load.stepsDuration()
}

// stepsDuration is the sum of the steps' durations, saturating at the
// largest time.Duration rather than wrapping: steps that add up past
// int64 must never look short to a --max-duration check.
func (l *LoadSpec) stepsDuration() time.Duration {
	var total time.Duration
	for _, s := range l.Steps {
		total = SaturatingSum(total, s.Duration.Duration)
	}
	return total
}

// SaturatingSum adds durations, saturating at the largest (or smallest)
// time.Duration instead of wrapping. Derived deadlines (a stage's start
// plus its limits) add with it.
func SaturatingSum(ds ...time.Duration) time.Duration {
	var total time.Duration
	for _, d := range ds {
		switch {
		case d > 0 && total > math.MaxInt64-d:
			total = math.MaxInt64
		case d < 0 && total < math.MinInt64-d:
			total = math.MinInt64
		default:
			total += d
		}
	}
	return total
}

// Validate checks a workload the way the API server's schema and CEL rules
// do (config/crd/bases), so that the CLI refuses bad input before anything
// starts, naming the field. It accepts a spec before or after Resolved. The
// one thing it cannot check is the text of a duration: a malformed one never
// decodes into a metav1.Duration. A Custom workload's DDL and SQL need a SQL
// parser, which the API package does not link: spanner/customcheck's
// Workload adds those checks, in a database's dialect.
func (w *WorkloadSpec) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, ok := workloadOps[w.Type]; !ok {
		errs = append(errs, field.NotSupported(path.Child("type"), w.Type, []WorkloadType{WorkloadYCSB, WorkloadTweet, WorkloadTPCC, WorkloadCustom}))
	}
	errs = append(errs, w.validateTPCC(path)...)
	errs = append(errs, w.ValidateCustomShape(path)...)
	errs = append(errs, w.Dataset.validate(path.Child("dataset"))...)
	errs = append(errs, w.validateBatch(path.Child("dataset", "batchRows"))...)
	errs = append(errs, w.validateOperations(path.Child("operations"))...)
	errs = append(errs, w.validateInsertBytes(path.Child("operations"))...)
	errs = append(errs, w.validateStreams(path)...)
	errs = append(errs, w.validateDurations(path)...)
	return errs
}

// Cloud Spanner's limits on one commit, which one load batch is, and one
// Insert of several rows (an operation's rows): "Mutations per commit
// (including indexes)" and "Commit size (including indexes and change
// streams)" in
// https://cloud.google.com/spanner/quotas#limits_for_creating_reading_updating_and_deleting_data
// (how mutations are counted:
// https://cloud.google.com/spanner/docs/commit-statistics). The CRD's CEL
// rules cannot name these constants and state the same figures (80000,
// 90000000, 7272); test/apivalidation holds them to each other.
const (
	// MaxMutationsPerCommit is Spanner's mutation limit per commit: each
	// column an insert or update writes is one mutation, and each index
	// entry it adds one more.
	MaxMutationsPerCommit = 80_000
	// MaxCommitBytes is Spanner's commit size limit, 100 MB.
	MaxCommitBytes = 100_000_000
	// MaxBatchBytes is what the text of one commit's rows may hold: the
	// commit size less a tenth, the room for keys, the other columns and
	// overhead.
	MaxBatchBytes = MaxCommitBytes / 10 * 9
)

// rowCost is what one preloaded row of a workload costs a commit:
// mutations (columns written, plus index entries) and text fields.
var rowCost = map[WorkloadType]struct{ mutations, textFields int64 }{
	WorkloadYCSB:  {mutations: 11, textFields: 10},
	WorkloadTweet: {mutations: 10, textFields: 1},
	// TPCC's load unit is several rows of several tables; its text has
	// the specification's sizes, far from the byte limit.
	WorkloadTPCC: {mutations: TPCCUnitMutations, textFields: 0},
}

// commitText is the text rows rows of the workload's table hold in one
// commit (rows x fieldBytes x its text fields per row), the figure
// MaxBatchBytes bounds for a load batch and a batched Insert alike.
func (w *WorkloadSpec) commitText(rows int64) int64 {
	return rows * int64(*defaulted(w.Dataset.FieldBytes, DefaultFieldBytes)) * rowCost[w.Type].textFields
}

// validateBatch keeps one load batch within a Spanner commit's limits, so
// that a load against a real (paid) instance does not fail on its first
// batch. The emulator does not enforce them.
func (w *WorkloadSpec) validateBatch(path *field.Path) field.ErrorList {
	cost, ok := rowCost[w.Type]
	if !ok {
		return nil
	}
	rows := int64(*defaulted(w.Dataset.BatchRows, w.Type.defaultBatchRows()))
	bytes := w.commitText(rows)
	switch {
	case rows*cost.mutations > MaxMutationsPerCommit:
		return field.ErrorList{field.Invalid(path, rows, fmt.Sprintf("one batch is one commit: %d rows of %s are %d mutations, more than the %d Cloud Spanner takes; use at most %d",
			rows, w.Type, rows*cost.mutations, MaxMutationsPerCommit, MaxMutationsPerCommit/cost.mutations))}
	case bytes > MaxBatchBytes:
		return field.ErrorList{field.Invalid(path, rows, fmt.Sprintf("one batch is one commit: %d rows of %s hold %d bytes of text, more than the %d a Cloud Spanner commit (100 MB) leaves room for; use fewer rows per batch or smaller fields",
			rows, w.Type, bytes, MaxBatchBytes))}
	}
	return nil
}

// validateInsertBytes keeps each Insert of several rows, one commit,
// within a commit's size, as validateBatch keeps a load batch: rows x
// dataset.fieldBytes x the row's text fields at most MaxBatchBytes. (Its
// mutations are bounded by the operation's own rule, MaxInsertRows.) The
// refusal is at operations, where the CRD's rule, which needs the
// workload's type and fieldBytes, puts it; its message names the
// operation.
func (w *WorkloadSpec) validateInsertBytes(path *field.Path) field.ErrorList {
	if _, ok := rowCost[w.Type]; !ok {
		return nil
	}
	for i := range w.Operations {
		o := &w.Operations[i]
		if o.Type != OpInsert || o.Rows == nil {
			continue
		}
		rows := int64(*o.Rows)
		if bytes := w.commitText(rows); bytes > MaxBatchBytes {
			perRow := w.commitText(1)
			return field.ErrorList{field.Invalid(path, rows, fmt.Sprintf("operations[%d].rows: an Insert of %d rows is one commit: %d rows of %s hold %d bytes of text (%d a row: dataset.fieldBytes x %d text fields), more than the %d a Cloud Spanner commit (100 MB) leaves room for; use at most %d rows or smaller fields",
				i, rows, rows, w.Type, bytes, perRow, rowCost[w.Type].textFields, MaxBatchBytes, max(MaxBatchBytes/perRow, 1)))}
		}
	}
	return nil
}

// defaultBatchRows is dataset.batchRows when the spec leaves it out.
func (t WorkloadType) defaultBatchRows() int32 {
	if t == WorkloadTPCC {
		return DefaultTPCCBatchRows
	}
	return DefaultBatchRows
}

func (d *DatasetSpec) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, InRange(path.Child("rows"), d.Rows, 0, 10_000_000_000)...)
	errs = append(errs, InRange(path.Child("fieldBytes"), d.FieldBytes, 1, 1<<20)...)
	errs = append(errs, InRange(path.Child("batchRows"), d.BatchRows, 1, 10_000)...)
	errs = append(errs, InRange(path.Child("loaders"), d.Loaders, 1, 256)...)
	errs = append(errs, InRange(path.Child("loaderPods"), d.LoaderPods, 1, MaxLoaderPods)...)
	errs = append(errs, InRange(path.Child("maxRowsPerSecond"), d.MaxRowsPerSecond, 1, maxLoadRowsPerSecond)...)
	return errs
}

// EffectiveName is the operation's name, or its default when it has none.
func (o *OperationSpec) EffectiveName() string {
	if o.Name != "" {
		return o.Name
	}
	return o.Type.DefaultName()
}

func (w *WorkloadSpec) validateOperations(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if w.Operations != nil && len(w.Operations) == 0 {
		return append(errs, field.Required(path, "at least one operation, or no operations field"))
	}
	if len(w.Operations) == 0 && w.Type != WorkloadTPCC {
		return append(errs, field.Required(path, "at least one operation; only TPCC has a default mix"))
	}
	if len(w.Operations) > maxOperations {
		errs = append(errs, field.TooMany(path, len(w.Operations), maxOperations))
	}
	names := map[string]bool{}
	for i := range w.Operations {
		o := &w.Operations[i]
		p := path.Index(i)
		name := o.EffectiveName()
		if names[name] {
			errs = append(errs, field.Duplicate(p.Child("name"), name))
		}
		names[name] = true
		errs = append(errs, o.validate(p, w.Type)...)
	}
	return errs
}

func (o *OperationSpec) validate(path *field.Path, wt WorkloadType) field.ErrorList {
	var errs field.ErrorList
	if o.Name != "" && !validName(o.Name) {
		errs = append(errs, field.Invalid(path.Child("name"), o.Name, "must be lower case letters, digits and '-', start with a letter, at most 40 characters"))
	}
	if supported, ok := workloadOps[wt]; ok && !slices.Contains(supported, o.Type) {
		errs = append(errs, field.NotSupported(path.Child("type"), o.Type, supported))
	}
	errs = append(errs, InRange(path.Child("weight"), &o.Weight, 1, 1_000_000)...)
	errs = append(errs, InRange(path.Child("rows"), o.Rows, 1, 10_000)...)
	errs = append(errs, o.validateOptions(path)...)
	return errs
}

// validateOptions checks that each option applies to the operation type.
func (o *OperationSpec) validateOptions(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	t := o.Type
	if o.API != "" && (!t.HasAPIChoice() || (o.API != APIRead && o.API != APISQL)) {
		errs = append(errs, field.Invalid(path.Child("api"), o.API, "only Read, Scan and ReadKeys choose an API: Read or SQL"))
	}
	if o.WritePath != "" && (!t.HasWritePath() || (o.WritePath != WriteMutation && o.WritePath != WriteDML)) {
		errs = append(errs, field.Invalid(path.Child("writePath"), o.WritePath, "only Insert, Update and Delete choose a write path: Mutation or DML"))
	}
	errs = append(errs, o.validateRows(path.Child("rows"))...)
	if o.Staleness != nil {
		errs = append(errs, o.Staleness.validate(path.Child("staleness"), t)...)
	}
	if o.DirectedRead != nil {
		errs = append(errs, o.DirectedRead.validate(path.Child("directedRead"), t)...)
	}
	if o.Commit != nil {
		errs = append(errs, o.Commit.validate(path.Child("commit"), t)...)
	}
	errs = append(errs, OneOf(path.Child("keys"), o.Keys, KeysUniform, KeysZipfian, KeysLatest)...)
	errs = append(errs, OneOf(path.Child("priority"), o.Priority, PriorityLow, PriorityMedium, PriorityHigh)...)
	return errs
}

// ReturnsRows reports whether the operation reads a number of rows set by
// the operation's rows.
// validateRows checks rows: several rows returned by a read that returns
// a range or a list, or written by an Insert in one commit of mutations.
func (o *OperationSpec) validateRows(path *field.Path) field.ErrorList {
	switch {
	case o.Rows == nil || o.Type.ReturnsRows():
	case o.Type != OpInsert:
		return field.ErrorList{field.Forbidden(path, "only Scan, ReadKeys, QueryBySort and ReadRows return several rows, and only Insert writes several")}
	case o.WritePath == WriteDML || *o.Rows > MaxInsertRows:
		return field.ErrorList{field.Invalid(path, *o.Rows, fmt.Sprintf("an Insert of several rows is one commit of mutations (writePath Mutation), and Cloud Spanner takes at most 80,000 mutations per commit: at most %d rows (11 mutations a YCSB row, 10 a Tweet row with its index)", MaxInsertRows))}
	}
	return nil
}

// MaxInsertRows bounds the rows one Insert writes in its one commit: as
// many of the costliest workload row (YCSB's 11 mutations, rowCost) as a
// Cloud Spanner commit holds. The CEL rule on rows states the figure.
const MaxInsertRows = MaxMutationsPerCommit / 11

// InsertRows is how many rows an Insert writes in its one commit: rows,
// default 1.
func (o *OperationSpec) InsertRows() int {
	if o.Rows == nil {
		return 1
	}
	return int(*o.Rows)
}

func (t OperationType) ReturnsRows() bool {
	return t == OpScan || t == OpReadKeys || t == OpQueryBySort || t == OpReadRows
}

func (s *StalenessSpec) validate(path *field.Path, t OperationType) field.ErrorList {
	if !t.IsRead() {
		return field.ErrorList{field.Forbidden(path, "only reads can be stale; "+string(t)+" runs in a read-write transaction")}
	}
	if (s.Exact == nil) == (s.Max == nil) {
		return field.ErrorList{field.Invalid(path, "", "set exactly one of exact and max")}
	}
	if s.Exact != nil {
		return bounded(path.Child("exact"), s.Exact, MaxStaleness)
	}
	if t == OpOrderStatus || t == OpStockLevel {
		return field.ErrorList{field.Forbidden(path.Child("max"), "OrderStatus and StockLevel read several times in one read-only transaction, which takes exact staleness only")}
	}
	return bounded(path.Child("max"), s.Max, MaxStaleness)
}

func (d *DirectedReadSpec) validate(path *field.Path, t OperationType) field.ErrorList {
	if !t.IsRead() {
		return field.ErrorList{field.Forbidden(path, "only read-only operations can be directed")}
	}
	// Presence, not length, as in the CRD: an empty list is reported below.
	if (d.Include != nil) == (d.Exclude != nil) {
		return field.ErrorList{field.Invalid(path, "", "set exactly one of include and exclude")}
	}
	var errs field.ErrorList
	for _, l := range []struct {
		name string
		list []ReplicaSelection
	}{{"include", d.Include}, {"exclude", d.Exclude}} {
		if l.list != nil && len(l.list) == 0 {
			errs = append(errs, field.Required(path.Child(l.name), "at least one replica selection, or no "+l.name+" field"))
		}
		if len(l.list) > maxReplicaSelections {
			errs = append(errs, field.TooMany(path.Child(l.name), len(l.list), maxReplicaSelections))
		}
		for i, r := range l.list {
			p := path.Child(l.name).Index(i)
			if r.Location == "" && r.Type == "" {
				errs = append(errs, field.Required(p, "a location, a type or both"))
			}
			errs = append(errs, syntax(p.Child("location"), r.Location, maxLocationLength, locationPattern)...)
			errs = append(errs, OneOf(p.Child("type"), r.Type, ReplicaReadWrite, ReplicaReadOnly)...)
		}
	}
	return errs
}

func (c *CommitSpec) validate(path *field.Path, t OperationType) field.ErrorList {
	if !t.IsWrite() {
		return field.ErrorList{field.Forbidden(path, "commit options apply only to writes")}
	}
	if c.MaxCommitDelay != nil && (c.MaxCommitDelay.Duration < 0 || c.MaxCommitDelay.Duration > MaxCommitDelay) {
		return field.ErrorList{field.Invalid(path.Child("maxCommitDelay"), c.MaxCommitDelay.Duration.String(), "must be between 0 and 500ms")}
	}
	return nil
}

func (l *LoadSpec) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	set := 0
	for _, isSet := range []bool{l.Rate != nil, l.Steps != nil, l.Ramp != nil, l.Search != nil, l.Concurrency != nil} {
		if isSet {
			set++
		}
	}
	if set != 1 {
		errs = append(errs, field.Invalid(path, "", "set exactly one of rate, steps, ramp, search and concurrency"))
	}
	if sr := l.Search; sr != nil {
		errs = append(errs, sr.validateShape(path.Child("search"))...)
	}
	errs = append(errs, InRange(path.Child("rate"), l.Rate, 1, maxRate)...)
	errs = append(errs, InRange(path.Child("concurrency"), l.Concurrency, 1, 10_000)...)
	errs = append(errs, InRange(path.Child("maxInFlight"), l.MaxInFlight, 1, 100_000)...)
	if l.Steps != nil && len(l.Steps) == 0 {
		errs = append(errs, field.Required(path.Child("steps"), "at least one step, or no steps field"))
	}
	if len(l.Steps) > maxSteps {
		errs = append(errs, field.TooMany(path.Child("steps"), len(l.Steps), maxSteps))
	}
	for i, s := range l.Steps {
		p := path.Child("steps").Index(i)
		errs = append(errs, InRange(p.Child("rate"), &s.Rate, 1, maxRate)...)
		errs = append(errs, bounded(p.Child("duration"), &s.Duration, MaxRunDuration)...)
	}
	if sum := l.stepsDuration(); l.Steps != nil && sum > MaxRunDuration {
		errs = append(errs, field.Invalid(path.Child("steps"), sum.String(), fmt.Sprintf("the steps' durations must add up to at most %s", formatHours(MaxRunDuration))))
	}
	if r := l.Ramp; r != nil {
		p := path.Child("ramp")
		errs = append(errs, InRange(p.Child("from"), &r.From, 1, maxRate)...)
		errs = append(errs, InRange(p.Child("to"), &r.To, 1, maxRate)...)
		errs = append(errs, bounded(p.Child("duration"), &r.Duration, MaxRunDuration)...)
	}
	errs = append(errs, OneOf(path.Child("arrivals"), l.Arrivals, ArrivalsUniform, ArrivalsPoisson)...)
	if l.Concurrency != nil && l.Arrivals != "" {
		errs = append(errs, field.Forbidden(path.Child("arrivals"), "applies only to open-loop loads (rate, steps, ramp, search), not to concurrency"))
	}
	return errs
}

func (w *WorkloadSpec) validateDurations(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case w.Duration != nil && w.Load.Steps != nil:
		errs = append(errs, field.Invalid(path.Child("duration"), w.Duration.Duration.String(), "set duration, or load.steps (whose durations add up to the run's), not both"))
	case w.Duration == nil && w.Load.Steps == nil:
		errs = append(errs, field.Required(path.Child("duration"), "how long the load runs"))
	case w.Duration != nil:
		errs = append(errs, bounded(path.Child("duration"), w.Duration, MaxRunDuration)...)
	}
	run := w.TotalDuration()
	runKnown := run > 0 && run <= MaxRunDuration
	errs = append(errs, w.validateWithinRun(path, run, runKnown)...)
	if wu := w.WarmUp; wu != nil {
		errs = append(errs, wu.validate(path.Child("warmUp"), run)...)
		if runKnown {
			errs = append(errs, wu.validateRoom(path.Child("warmUp"), run, w.intervalOrDefault())...)
			errs = append(errs, wu.validateMeasured(path.Child("warmUp"), run, w.intervalOrDefault())...)
		}
	}
	return append(errs, w.validateRows(path.Child("dataset", "rows"))...)
}

// validateWithinRun bounds the interval and keeps it and the ramp within
// the run, when the run's length is known and valid.
func (w *WorkloadSpec) validateWithinRun(path *field.Path, run time.Duration, runKnown bool) field.ErrorList {
	var errs field.ErrorList
	switch iv := w.intervalOrDefault(); {
	case iv < MinInterval || iv > MaxInterval:
		errs = append(errs, field.Invalid(path.Child("interval"), iv.String(), "must be a duration from 1s to 1h"))
	case runKnown && iv > run:
		// The default too: a run shorter than its one interval ends
		// before its first point is complete and measures nothing.
		errs = append(errs, field.Invalid(path.Child("interval"), iv.String(), fmt.Sprintf("the run's duration (%s) must hold at least one interval (default 10s): shorten the interval or lengthen the run", run)))
	}
	if r := w.Load.Ramp; r != nil && w.Duration != nil && runKnown && r.Duration.Duration > run {
		errs = append(errs, field.Invalid(path.Child("load", "ramp", "duration"), r.Duration.Duration.String(), fmt.Sprintf("must not be longer than the run's duration (%s)", run)))
	}
	return errs
}

func (w *WorkloadSpec) intervalOrDefault() time.Duration {
	if w.Interval != nil {
		return w.Interval.Duration
	}
	return DefaultInterval
}

// validateRoom checks that an Auto warm-up can end on its own: window
// stable intervals must fit before max (default: half the run). A run too
// short for that (a 1 ns run, whose default max is 0) is refused rather
// than run with a warm-up that can only time out.
func (wu *WarmUpSpec) validateRoom(path *field.Path, run, interval time.Duration) field.ErrorList {
	if wu.Mode != WarmUpAuto || interval < MinInterval || interval > MaxInterval {
		return nil
	}
	limit := run / 2
	if wu.Max != nil {
		if wu.Max.Duration > MaxRunDuration {
			return nil // reported on max itself
		}
		limit = wu.Max.Duration
	}
	window := int64(*defaulted(wu.Window, DefaultWarmUpWindow))
	if window*int64(interval) > int64(limit) {
		return field.ErrorList{field.Invalid(path, "", fmt.Sprintf("an Auto warm-up needs room for its window: %d x %s is more than max (%s; default: half the run's duration)", window, interval, limit))}
	}
	return nil
}

// validateMeasured checks that at least one interval of the run follows
// its warm-up: a Fixed warm-up's duration, or the longest an Auto one may
// last (max). Results exclude whole intervals (a Fixed warm-up is rounded
// up to them), so a run with less than one interval after its warm-up
// would report nothing. Values out of their own bounds are reported on
// their own.
func (wu *WarmUpSpec) validateMeasured(path *field.Path, run, interval time.Duration) field.ErrorList {
	if interval < MinInterval || interval > MaxInterval {
		return nil
	}
	var errs field.ErrorList
	for _, f := range []struct {
		name string
		d    *metav1.Duration
		mode WarmUpMode
	}{{"duration", wu.Duration, WarmUpFixed}, {"max", wu.Max, WarmUpAuto}} {
		if f.d == nil || wu.Mode != f.mode || f.d.Duration <= 0 || f.d.Duration >= run || f.d.Duration > MaxRunDuration {
			continue
		}
		if f.d.Duration+interval > run {
			errs = append(errs, field.Invalid(path.Child(f.name), f.d.Duration.String(), fmt.Sprintf("must leave at least one interval (%s) of the run (%s) after the warm-up", interval, run)))
		}
	}
	return errs
}

// keyedOps are the operations that read or change rows the dataset holds.
var keyedOps = map[OperationType]bool{OpRead: true, OpScan: true, OpReadKeys: true, OpUpdate: true, OpReadModifyWrite: true}

// validateRows checks that the dataset holds what keyed operations need:
// one row for a point operation, the operation's rows for Scan and
// ReadKeys.
func (w *WorkloadSpec) validateRows(path *field.Path) field.ErrorList {
	rows := *defaulted(w.Dataset.Rows, DefaultDatasetRows)
	for _, o := range w.Operations {
		if !keyedOps[o.Type] {
			continue
		}
		need := int64(1)
		if o.Type == OpScan || o.Type == OpReadKeys {
			need = int64(*defaulted(o.Rows, DefaultRows))
		}
		if rows < need {
			return field.ErrorList{field.Invalid(path, rows, fmt.Sprintf("operations on existing keys need rows to find: %s %s needs at least %d", o.Type, o.EffectiveName(), need))}
		}
	}
	return nil
}

func (wu *WarmUpSpec) validate(path *field.Path, run time.Duration) field.ErrorList {
	var errs field.ErrorList
	if wu.Mode != WarmUpFixed && wu.Duration != nil {
		errs = append(errs, field.Forbidden(path.Child("duration"), "applies only to mode Fixed"))
	}
	if wu.Mode != WarmUpAuto && (wu.Window != nil || wu.TolerancePercent != nil || wu.Max != nil) {
		errs = append(errs, field.Forbidden(path, "window, tolerancePercent and max apply only to mode Auto"))
	}
	switch wu.Mode {
	case WarmUpNone, "":
	case WarmUpFixed:
		if wu.Duration == nil {
			return append(errs, field.Required(path.Child("duration"), "required when mode is Fixed"))
		}
		errs = append(errs, bounded(path.Child("duration"), wu.Duration, MaxRunDuration)...)
		errs = append(errs, shorterThanRun(path.Child("duration"), wu.Duration, run)...)
	case WarmUpAuto:
		errs = append(errs, InRange(path.Child("window"), wu.Window, 2, 100)...)
		errs = append(errs, InRange(path.Child("tolerancePercent"), wu.TolerancePercent, 1, 100)...)
		if wu.Max != nil {
			errs = append(errs, bounded(path.Child("max"), wu.Max, MaxRunDuration)...)
			errs = append(errs, shorterThanRun(path.Child("max"), wu.Max, run)...)
		}
	default:
		errs = append(errs, field.NotSupported(path.Child("mode"), wu.Mode, []WarmUpMode{WarmUpNone, WarmUpFixed, WarmUpAuto}))
	}
	return errs
}

// shorterThanRun checks a positive part of the run. A run of unknown length
// (no duration) is reported on its own, not here.
func shorterThanRun(path *field.Path, d *metav1.Duration, run time.Duration) field.ErrorList {
	if d.Duration <= 0 || (run > 0 && d.Duration >= run) {
		return field.ErrorList{field.Invalid(path, d.Duration.String(), fmt.Sprintf("must be positive and shorter than the run (%s)", run))}
	}
	return nil
}

// InRange checks an optional integer: unset, or within [lo, hi].
func InRange[T int32 | int64](path *field.Path, v *T, lo, hi T) field.ErrorList {
	if v == nil || (*v >= lo && *v <= hi) {
		return nil
	}
	return field.ErrorList{field.Invalid(path, *v, fmt.Sprintf("must be between %d and %d", lo, hi))}
}

// bounded checks a positive duration of at most hi.
func bounded(path *field.Path, d *metav1.Duration, hi time.Duration) field.ErrorList {
	if d.Duration > 0 && d.Duration <= hi {
		return nil
	}
	return field.ErrorList{field.Invalid(path, d.Duration.String(), "must be a positive duration of at most "+formatHours(hi))}
}

// formatHours writes a bound as the schema's messages do: 168h, 1h.
func formatHours(d time.Duration) string {
	return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
}

// OneOf checks an optional enum: empty, or one of the values.
func OneOf[T ~string](path *field.Path, v T, values ...T) field.ErrorList {
	if v == "" || slices.Contains(values, v) {
		return nil
	}
	return field.ErrorList{field.NotSupported(path, v, values)}
}

func maxLen(path *field.Path, s string, n int) field.ErrorList {
	if len(s) <= n {
		return nil
	}
	return field.ErrorList{field.TooLong(path, s, n)}
}

func validName(s string) bool {
	if s == "" || len(s) > maxOperationNameLength || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return false
		}
	}
	return true
}

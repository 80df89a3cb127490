package v1alpha1

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Defaults of a BenchmarkCampaign.
const (
	DefaultRepetitions       int32 = 1
	DefaultMaxParallel       int32 = 1
	DefaultSeed              int64 = 1
	DefaultMinEffect               = 0.05
	DefaultConfidence              = 0.95
	DefaultTrendIterations   int32 = 30
	DefaultTrendLatest       int32 = 5
	DefaultSuccessfulHistory int32 = 3
	DefaultFailedHistory     int32 = 1
)

var (
	cronPattern     = regexp.MustCompile(`^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[^ ]+( +[^ ]+){4})$`)
	timeZonePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$`)
	percentPattern  = regexp.MustCompile(`^[0-9]{1,2}([.][0-9]{1,2})?%$`)
	axisNamePattern = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
	labelPattern    = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
)

// RepetitionCount is spec.repetitions, defaulted.
func (s *BenchmarkCampaignSpec) RepetitionCount() int {
	if s.Repetitions != nil {
		return int(*s.Repetitions)
	}
	return int(DefaultRepetitions)
}

// RunOrder is spec.order, defaulted.
func (s *BenchmarkCampaignSpec) RunOrder() RunOrder {
	if s.Order == "" {
		return OrderInterleaved
	}
	return s.Order
}

// OrderSeed is spec.seed, defaulted.
func (s *BenchmarkCampaignSpec) OrderSeed() int64 {
	if s.Seed != nil {
		return *s.Seed
	}
	return DefaultSeed
}

// Parallelism is spec.maxParallel, defaulted.
func (s *BenchmarkCampaignSpec) Parallelism() int {
	if s.MaxParallel != nil {
		return int(*s.MaxParallel)
	}
	return int(DefaultMaxParallel)
}

// ParsePercent reads a percentage such as "5%" or "99.5%" as a fraction
// (0.05, 0.995); "" is def.
func ParsePercent(s string, def float64) (float64, error) {
	if s == "" {
		return def, nil
	}
	if !percentPattern.MatchString(s) {
		return 0, fmt.Errorf("%q is not a percentage such as 5%%", s)
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		return 0, err
	}
	return v / 100, nil
}

// MinEffectFraction is comparison.minEffect as a fraction, defaulted.
func (c *ComparisonSpec) MinEffectFraction() (float64, error) {
	return ParsePercent(c.MinEffect, DefaultMinEffect)
}

// ConfidenceFraction is comparison.confidence as a fraction, defaulted.
func (c *ComparisonSpec) ConfidenceFraction() (float64, error) {
	return ParsePercent(c.Confidence, DefaultConfidence)
}

// DefaultMetrics are compared when comparison.metrics is empty.
func DefaultMetrics() []MetricSpec {
	return []MetricSpec{{Statistic: StatisticP50}, {Statistic: StatisticP99}, {Statistic: StatisticThroughput}}
}

// EffectiveMetrics is comparison.metrics, defaulted.
func (c *ComparisonSpec) EffectiveMetrics() []MetricSpec {
	if len(c.Metrics) == 0 {
		return DefaultMetrics()
	}
	return c.Metrics
}

// EffectiveDirection is direction, defaulted by the statistic.
func (m *MetricSpec) EffectiveDirection() MetricDirection {
	if m.Direction != "" {
		return m.Direction
	}
	switch m.Statistic {
	case StatisticThroughput, StatisticTpmC, StatisticCapacity, StatisticCapacityPerNode, StatisticCapacityRowsPerNode:
		return HigherIsBetter
	}
	return LowerIsBetter
}

// CapacityStatistics are the statistics a capacity search defines: one
// figure per run, read from its search section. Every other statistic is
// read from the run's measured window — its intervals' histograms and
// counts (Throughput, the percentiles, ErrorRate, TpmC), the server's
// figures over it (ServerCPUPerOp, ServerQueryP99, ServerHighPriorityCPU,
// ServerLatencyP99), or its cost per operation measured in it
// (CostPerMillionOps: the window's cost over its operations) — which over
// a search holds steps offered at different rates, and pooled describes no
// one load.
func CapacityStatistics() []CampaignStatistic {
	return []CampaignStatistic{StatisticCapacity, StatisticCapacityPerNode, StatisticCapacityRowsPerNode}
}

// IsCapacity says whether s is one of CapacityStatistics.
func (s CampaignStatistic) IsCapacity() bool {
	return slices.Contains(CapacityStatistics(), s)
}

// OverSearch is why s cannot be compared over capacity search runs, or ""
// when it can (CapacityStatistics): what admission says of a campaign
// that asks for it, and the comparison of a row that reads it.
func (s CampaignStatistic) OverSearch() string {
	if s.IsCapacity() {
		return ""
	}
	return fmt.Sprintf("%s is not defined over a capacity search: a search run's steps are offered different rates, and one figure over them pools the steps; use %s",
		s, StatisticNames(CapacityStatistics()))
}

// StatisticNames lists statistics for a message: "Capacity,
// CapacityPerNode, CapacityRowsPerNode".
func StatisticNames(ss []CampaignStatistic) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// Validate checks a campaign the way the API server's schema and CEL rules
// do, naming each field by its path, and checks the template as a run. It
// does not expand the matrix: a cell that is invalid as a run is found by
// the matrix expansion, which names the axis and value.
func (c *BenchmarkCampaign) Validate() field.ErrorList {
	var errs field.ErrorList
	if len(c.Name) > 63 || !runNamePattern.MatchString(c.Name) {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), c.Name,
			"a BenchmarkCampaign name must be at most 63 lower-case letters, digits and '-', start with a letter and end with a letter or digit, so that its runs can be named after it"))
	}
	return append(errs, c.Spec.Validate(field.NewPath("spec"))...)
}

// Validate checks a campaign spec the way the API server does.
func (s *BenchmarkCampaignSpec) Validate(path *field.Path) field.ErrorList {
	errs := s.validateSchedule(path)
	errs = append(errs, s.validateBounds(path)...)
	errs = append(errs, s.Template.Spec.Validate(path.Child("template", "spec"))...)
	if s.Matrix != nil {
		errs = append(errs, s.Matrix.Validate(path.Child("matrix"))...)
	}
	errs = append(errs, s.validateBaseline(path.Child("baseline"))...)
	errs = append(errs, s.Comparison.validate(path.Child("comparison"))...)
	return append(errs, s.Trend.validate(path.Child("trend"))...)
}

func (s *BenchmarkCampaignSpec) validateSchedule(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if sc := s.Schedule; sc != "" {
		p := path.Child("schedule")
		if !cronPattern.MatchString(sc) {
			errs = append(errs, field.Invalid(p, sc, "must be five cron fields (minute hour day-of-month month day-of-week) or a macro such as @daily"))
		}
		if strings.Contains(sc, "TZ=") {
			errs = append(errs, field.Invalid(p, sc, "set the time zone with timeZone, not TZ= or CRON_TZ="))
		}
	}
	if tz := s.TimeZone; tz != nil {
		if s.Schedule == "" {
			errs = append(errs, field.Invalid(path.Child("timeZone"), *tz, "only meaningful with a schedule"))
		} else if !timeZonePattern.MatchString(*tz) {
			errs = append(errs, field.Invalid(path.Child("timeZone"), *tz, "must be an IANA time zone name such as Europe/Paris"))
		}
	}
	if d := s.StartingDeadlineSeconds; d != nil && s.Schedule == "" {
		errs = append(errs, field.Invalid(path.Child("startingDeadlineSeconds"), *d, "only meaningful with a schedule"))
	}
	return errs
}

func (s *BenchmarkCampaignSpec) validateBounds(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	in := func(name string, p *int32, lo, hi int32) {
		if p != nil && (*p < lo || *p > hi) {
			errs = append(errs, field.Invalid(path.Child(name), *p, fmt.Sprintf("must be from %d to %d", lo, hi)))
		}
	}
	in("repetitions", s.Repetitions, 1, 30)
	in("maxParallel", s.MaxParallel, 1, 100)
	in("successfulIterationsHistoryLimit", s.SuccessfulIterationsHistoryLimit, 0, 100)
	in("failedIterationsHistoryLimit", s.FailedIterationsHistoryLimit, 0, 100)
	if d := s.StartingDeadlineSeconds; d != nil && (*d < 1 || *d > 86400) {
		errs = append(errs, field.Invalid(path.Child("startingDeadlineSeconds"), *d, "must be from 1 to 86400"))
	}
	if s.Seed != nil && *s.Seed < 0 {
		errs = append(errs, field.Invalid(path.Child("seed"), *s.Seed, "must not be negative"))
	}
	enum := func(name, v string, allowed ...string) {
		if v != "" && !contains(allowed, v) {
			errs = append(errs, field.NotSupported(path.Child(name), v, allowed))
		}
	}
	enum("concurrencyPolicy", string(s.ConcurrencyPolicy), string(ConcurrencyAllow), string(ConcurrencyForbid), string(ConcurrencyReplace))
	enum("order", string(s.Order), string(OrderInterleaved), string(OrderRandomized), string(OrderSequential))
	return errs
}

// Validate checks a matrix the way the API server does.
func (m *MatrixSpec) Validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(m.Axes) == 0 || len(m.Axes) > 8 {
		errs = append(errs, field.Invalid(path.Child("axes"), len(m.Axes), "must have 1 to 8 axes"))
	}
	seen := map[string]bool{}
	for i, a := range m.Axes {
		p := path.Child("axes").Index(i)
		if !axisNamePattern.MatchString(a.Name) || len(a.Name) > 20 {
			errs = append(errs, field.Invalid(p.Child("name"), a.Name, "must be at most 20 lower-case letters, digits and '-', starting with a letter"))
		}
		if seen[a.Name] {
			errs = append(errs, field.Duplicate(p.Child("name"), a.Name))
		}
		seen[a.Name] = true
		errs = append(errs, a.validate(p)...)
	}
	errs = append(errs, m.validateZip(path.Child("zip"))...)
	for i, e := range m.Exclude {
		if !m.names(e) {
			errs = append(errs, field.Invalid(path.Child("exclude").Index(i), e, "every key must name an axis and every value one of that axis's labels"))
		}
	}
	return errs
}

func (a *MatrixAxis) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(a.Path) > 256 {
		errs = append(errs, field.Invalid(p.Child("path"), a.Path, "must be 1 to 256 characters"))
	} else if strings.HasPrefix(a.Path, "spec.") {
		errs = append(errs, field.Invalid(p.Child("path"), a.Path, "is relative to the run spec; drop the leading spec."))
	}
	if len(a.Values) == 0 || len(a.Values) > 32 {
		errs = append(errs, field.Invalid(p.Child("values"), len(a.Values), "must have 1 to 32 values"))
	}
	labels := map[string]bool{}
	for j, v := range a.Values {
		vp := p.Child("values").Index(j)
		if !labelPattern.MatchString(v.Label) || len(v.Label) > 20 {
			errs = append(errs, field.Invalid(vp.Child("label"), v.Label, "must be at most 20 lower-case letters, digits and '-'"))
		}
		if labels[v.Label] {
			errs = append(errs, field.Duplicate(vp.Child("label"), v.Label))
		}
		labels[v.Label] = true
		if hasPath, hasValue := a.Path != "", len(v.Value.Raw) > 0; hasPath != hasValue {
			errs = append(errs, field.Invalid(vp.Child("value"), string(v.Value.Raw),
				"with a path every value sets it (value); without one no value has a value, only patches"))
		}
		if v.StrategicMergePatch != nil && !isObject(v.StrategicMergePatch.Raw) {
			errs = append(errs, field.Invalid(vp.Child("strategicMergePatch"), string(v.StrategicMergePatch.Raw), "must be an object: fields of the run spec"))
		}
		if len(v.JSONPatch) > 16 {
			errs = append(errs, field.TooMany(vp.Child("jsonPatch"), len(v.JSONPatch), 16))
		}
		for k := range v.JSONPatch {
			errs = append(errs, v.JSONPatch[k].validate(vp.Child("jsonPatch").Index(k))...)
		}
	}
	return errs
}

// isObject says whether raw JSON is an object.
func isObject(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

var jsonPatchOps = []string{"add", "remove", "replace", "move", "copy", "test"}

func (o *JSONPatchOperation) validate(p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !contains(jsonPatchOps, string(o.Op)) {
		errs = append(errs, field.NotSupported(p.Child("op"), o.Op, jsonPatchOps))
	}
	for _, f := range []struct {
		name, ptr string
		set       bool
	}{{"path", o.Path, true}, {"from", o.From, o.From != ""}} {
		if f.set && (len(f.ptr) > 256 || !strings.HasPrefix(f.ptr, "/") || strings.HasPrefix(f.ptr, "/spec/")) {
			errs = append(errs, field.Invalid(p.Child(f.name), f.ptr, "a JSON pointer into the run spec, such as /workload/load/rate (no /spec prefix)"))
		}
	}
	if (o.Op == "move" || o.Op == "copy") != (o.From != "") {
		errs = append(errs, field.Invalid(p.Child("from"), o.From, "required by move and copy, and only by them"))
	}
	if (o.Op == "add" || o.Op == "replace" || o.Op == "test") != (o.Value != nil) {
		var v string
		if o.Value != nil {
			v = string(o.Value.Raw)
		}
		errs = append(errs, field.Invalid(p.Child("value"), v, "required by add, replace and test, and only by them"))
	}
	return errs
}

func (m *MatrixSpec) validateZip(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	group := map[string]int{}
	for i, z := range m.Zip {
		if len(z) < 2 || len(z) > 8 {
			errs = append(errs, field.Invalid(path.Index(i), z, "a zip group has 2 to 8 axes"))
			continue
		}
		first := m.Axis(string(z[0]))
		for j, n := range z {
			name := string(n)
			a := m.Axis(name)
			switch {
			case a == nil:
				errs = append(errs, field.Invalid(path.Index(i).Index(j), name, "every entry must name an axis of the matrix"))
			case first != nil && len(a.Values) != len(first.Values):
				errs = append(errs, field.Invalid(path.Index(i).Index(j), name, "zipped axes must have the same number of values"))
			}
			if g, ok := group[name]; ok && g != i {
				errs = append(errs, field.Invalid(path.Index(i).Index(j), name, "an axis may be in one zip group only"))
			}
			group[name] = i
		}
	}
	return errs
}

// Axis is the axis named name, or nil.
func (m *MatrixSpec) Axis(name string) *MatrixAxis {
	for i := range m.Axes {
		if m.Axes[i].Name == name {
			return &m.Axes[i]
		}
	}
	return nil
}

// names reports whether every key of sel names an axis and every value one
// of that axis's labels.
func (m *MatrixSpec) names(sel map[string]AxisLabel) bool {
	for axis, label := range sel {
		a := m.Axis(axis)
		if a == nil || a.index(string(label)) < 0 {
			return false
		}
	}
	return true
}

// index is the position of the value labelled label, or -1.
func (a *MatrixAxis) index(label string) int {
	for i, v := range a.Values {
		if v.Label == label {
			return i
		}
	}
	return -1
}

func (s *BenchmarkCampaignSpec) validateBaseline(path *field.Path) field.ErrorList {
	if len(s.Baseline) == 0 {
		return nil
	}
	if s.Matrix == nil || !s.Matrix.names(s.Baseline) {
		return field.ErrorList{field.Invalid(path, s.Baseline, "every key must name an axis of the matrix and every value one of that axis's labels")}
	}
	return nil
}

func (c *ComparisonSpec) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if _, err := c.MinEffectFraction(); err != nil {
		errs = append(errs, field.Invalid(path.Child("minEffect"), c.MinEffect, "must be a percentage from 0% to 99.99%, such as 5%"))
	}
	if v, err := c.ConfidenceFraction(); err != nil || v == 0 {
		errs = append(errs, field.Invalid(path.Child("confidence"), c.Confidence, "must be a percentage above 0% and below 100%, such as 95%"))
	}
	stats := []string{string(StatisticThroughput), string(StatisticP50), string(StatisticP90), string(StatisticP99), string(StatisticP999), string(StatisticErrorRate), string(StatisticServerCPUPerOp), string(StatisticTpmC),
		string(StatisticServerHighPriorityCPU), string(StatisticServerLatencyP99), string(StatisticServerQueryP99), string(StatisticCostPerMillionOps), string(StatisticCapacity),
		string(StatisticCapacityPerNode), string(StatisticCapacityRowsPerNode)}
	for i, m := range c.Metrics {
		p := path.Child("metrics").Index(i)
		if !contains(stats, string(m.Statistic)) {
			errs = append(errs, field.NotSupported(p.Child("statistic"), m.Statistic, stats))
		}
		if d := m.Direction; d != "" && d != LowerIsBetter && d != HigherIsBetter {
			errs = append(errs, field.NotSupported(p.Child("direction"), d, []string{string(LowerIsBetter), string(HigherIsBetter)}))
		}
	}
	return errs
}

func (t *TrendSpec) validate(path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if v, err := ParsePercent(t.Significance, DefaultTrendSignificance); err != nil || v == 0 {
		errs = append(errs, field.Invalid(path.Child("significance"), t.Significance, "must be a percentage above 0% and below 100%, such as 5%"))
	}
	if _, err := ParsePercent(t.MinMagnitude, DefaultTrendMinMagnitude); err != nil {
		errs = append(errs, field.Invalid(path.Child("minMagnitude"), t.MinMagnitude, "must be a percentage from 0% to 99.99%, such as 5%"))
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

package stats

import (
	"math"
	"sort"
)

// Comparison is a variant's value relative to its baseline.
type Comparison struct {
	// Ratio is the point estimate of variant / baseline.
	Ratio float64
	// Lo and Hi bound Ratio's confidence interval; meaningful only when
	// HasInterval.
	Lo, Hi float64
	// HasInterval is false when the samples are too small for any interval
	// at the requested confidence (e.g. 3+3 runs at 95 %).
	HasInterval bool
	// Confidence is the interval's actual confidence level: the exact
	// Mann–Whitney interval's discrete coverage is at least the requested
	// one and often a little above it.
	Confidence float64
	// PValue is the two-sided p-value against "no difference".
	PValue float64
	// NBaseline and NVariant are the sample sizes: runs, or intervals for
	// the bootstrap.
	NBaseline, NVariant int
	// Method names the procedure that produced the interval.
	Method string
	// Verdict is the decision of the verdict rule (see decide).
	Verdict Verdict
	// Reason says in a few words why the verdict is what it is.
	Reason string
}

// Methods reported in Comparison.Method.
const (
	MethodExact      = "Hodges-Lehmann, exact Mann-Whitney"
	MethodNormal     = "Hodges-Lehmann, normal approximation"
	MethodSectioning = "sectioning, Student t, AR(1) allowance"
)

// CompareRuns compares a variant's runs with its baseline's, one exact value
// per run (a percentile of the run's merged histogram, or its throughput).
//
// The shift is estimated on the log scale, so it is a ratio and one
// multiplicative noise model fits latencies and throughputs alike: the
// Hodges–Lehmann estimate is the median of the m·n differences
// log(variant_i) - log(baseline_j), and the interval is their order
// statistics at the Mann–Whitney critical value. Neither assumes a
// distribution; both only assume the variant is the baseline shifted.
// Values must be finite and above zero.
func CompareRuns(baseline, variant []float64, opts Options) (Comparison, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Comparison{}, err
	}
	if err := checkPositive("baseline", baseline); err != nil {
		return Comparison{}, err
	}
	if err := checkPositive("variant", variant); err != nil {
		return Comparison{}, err
	}
	lb, lv := logs(baseline), logs(variant)
	diffs := pairwiseDifferences(lv, lb)
	c := Comparison{
		Ratio:     math.Exp(median(diffs)),
		PValue:    mannWhitneyPValue(lv, lb),
		NBaseline: len(baseline),
		NVariant:  len(variant),
		Method:    MethodExact,
	}
	if len(baseline)+len(variant) > ExactMaxN {
		c.Method = MethodNormal
	}
	k, achieved := criticalOrder(len(variant), len(baseline), o.Confidence)
	if k > 0 {
		c.HasInterval = true
		c.Lo, c.Hi = math.Exp(diffs[k-1]), math.Exp(diffs[len(diffs)-k])
		c.Confidence = achieved
	}
	c.Verdict, c.Reason = decide(c.Ratio, c.Lo, c.Hi, c.HasInterval, o)
	return c, nil
}

// HodgesLehmann returns the Hodges–Lehmann estimate of the shift of y
// relative to x: the median of all differences y_i - x_j.
func HodgesLehmann(x, y []float64) float64 {
	if len(x) == 0 || len(y) == 0 {
		return math.NaN()
	}
	return median(pairwiseDifferences(y, x))
}

// pairwiseDifferences returns every y_i - x_j, sorted.
func pairwiseDifferences(y, x []float64) []float64 {
	d := make([]float64, 0, len(x)*len(y))
	for _, a := range y {
		for _, b := range x {
			d = append(d, a-b)
		}
	}
	sort.Float64s(d)
	return d
}

// median of sorted values.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func logs(v []float64) []float64 {
	l := make([]float64, len(v))
	for i, x := range v {
		l[i] = math.Log(x)
	}
	return l
}

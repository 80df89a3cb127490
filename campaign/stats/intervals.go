package stats

import (
	"fmt"
	"math"
	"sort"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/spanbench/spanbench/result/histogram"
)

// Interval is one measurement interval of a run: the latency histogram of
// the operation and the operations it completed, over Seconds.
type Interval struct {
	// Latency is the interval's histogram, in the shared geometry of
	// result/histogram; it is read, never modified.
	Latency *hdr.Histogram
	// Ops is the number of operations counted for throughput.
	Ops int64
	// Seconds is the interval's length.
	Seconds float64
}

// Statistic says what is read from a (merged) run.
type Statistic struct {
	// Percentile, in (0, 100], read from the merged latency histogram;
	// ignored when Throughput is set.
	Percentile float64
	// Throughput reads Σ Ops / Σ Seconds instead of a percentile.
	Throughput bool
}

// BootstrapOptions tunes CompareIntervals.
type BootstrapOptions struct {
	// Sections is the number k of contiguous sections each run is split
	// into; 0 means DefaultSections(n) for the shorter run's n intervals.
	Sections int
}

// MinIntervals is the fewest intervals per run accepted as evidence: with
// fewer, sections of a few intervals each would share most of their
// autocorrelation and the interval would be narrower than the truth.
const MinIntervals = 10

// DefaultSections is the number of sections for runs of n intervals:
// ⌈√n⌉, so that sections are about √n intervals long (the batch size of
// consistent batch means; Jones, Haran, Caffo & Neath, JASA 101(476),
// 2006), at least 4 and at most maxSections: 4 up to 16 intervals, 5 at
// 20, 7 at 40, 8 at 60, 11 from 101 on. It never decreases as runs
// lengthen, so one more interval never costs a wider interval.
//
// More sections narrow the interval (a smaller t quantile), and the
// autocorrelation allowance pays for the bias their shorter length would
// cause, so what limits k is coverage: sections of autocorrelated
// intervals are correlated with their neighbours, which Student's t with
// k−1 degrees of freedom does not see. Measured from 10 to 480 intervals
// at AR(1) φ ≤ MaxAutocorrelation, this count keeps the coverage at its
// nominal 95 % and calls a true +20 % p99 Regressed at least as often as
// the former count, 4 or one per 30 intervals (docs/statistics.md,
// TestSectionCountAcrossRunLengths).
func DefaultSections(n int) int {
	return max(4, min(maxSections, int(math.Ceil(math.Sqrt(float64(max(n, 0)))))))
}

// maxSections caps DefaultSections. More than 11 sections buy little
// once runs are long (the power against a true +20 % at φ =
// MaxAutocorrelation is 97-100 % from 121 intervals on either way) and
// cost coverage there: at φ = 0.8, ⌈√n⌉ fell more than a Monte Carlo
// standard error short of 95 % once on each seed measured (22 sections
// of 480 intervals 94.35 %, 16 of 240 94.6 %), where 11 sections of the
// same pairs of runs covered 95.05 % and 95.1 % (docs/statistics.md).
const maxSections = 11

// MaxAutocorrelation is the lag-1 autocorrelation φ of consecutive
// intervals up to which CompareIntervals keeps its stated coverage: the
// sectioning variance is widened by the batch-means bias an AR(1) process
// with this φ would cause (autocorrelationAllowance). 0.8 is the strongest
// autocorrelation docs/statistics.md claims, where a run of 40 intervals
// holds only about four independent pieces of evidence; intervals that
// drift more slowly than that need repetitions, not a wider single-run
// interval.
const MaxAutocorrelation = 0.8

// autocorrelationAllowance is the factor by which the sectioning variance
// of the k sections CompareIntervals cuts from a run of n intervals
// (sections(n, k): near-equal, so of ⌊n/k⌋ or ⌈n/k⌉ intervals)
// underestimates the variance of the whole-run mean of an AR(1) series
// with coefficient phi: the true variance of the mean over the expected
// sectioning estimate,
//
//	(S(n)/n²) / (Σ_j E[(B_j − B̄)²] / (k(k−1))),
//	E[(B_j − B̄)²] = S(m_j)/m_j² − 2·C_j/(m_j·n) + S(n)/n²,
//
// where section j covers intervals [a, b) of m_j = b − a, B_j is its mean
// and B̄ the whole run's, S(l) = l(1+φ)/(1−φ) − 2φ(1−φˡ)/(1−φ)² is the
// variance of a sum of l consecutive values over one value's, and
// C_j = (S(b) − S(a) + S(n−a) − S(n−b))/2 the covariance of the section's
// sum with the whole run's (the batch-means bias of Song & Schmeiser 1995,
// exact rather than its first-order form, and for the sections' actual
// lengths). It is at least 1 (exactly 1 at φ = 0 with equal sections) and
// grows with φ; fewer, longer sections need less of it.
func autocorrelationAllowance(n, k int, phi float64) float64 {
	sum := func(l int) float64 {
		fl := float64(l)
		if phi == 0 || l == 0 {
			return fl
		}
		return fl*(1+phi)/(1-phi) - 2*phi*(1-math.Pow(phi, fl))/((1-phi)*(1-phi))
	}
	fn := float64(n)
	whole := sum(n) / (fn * fn)
	var spread float64
	for j := range k {
		a, b := sectionBounds(n, k, j)
		m := float64(b - a)
		cross := (sum(b) - sum(a) + sum(n-a) - sum(n-b)) / 2
		spread += sum(b-a)/(m*m) - 2*cross/(m*fn) + whole
	}
	return max(1, whole/(spread/float64(k*(k-1))))
}

// CompareIntervals compares one variant run with one baseline run from
// their per-interval histograms, for cells with a single repetition, by
// sectioning (batch means; Asmussen & Glynn, Stochastic Simulation, ch.
// IV.5). Each run is split into k contiguous sections; each section's
// histograms are MERGED and the statistic read from the merge; section j
// of the variant is paired with section j of the baseline, giving k
// independent log ratios d_j. The point estimate is the ratio of the two
// whole runs' merged statistics, R, and the interval is
// exp(log R ± t_{k−1}·s·√(a/k)), s² = Σ(d_j − log R)²/(k−1): centring s
// on the whole-run estimate rather than on the mean of the d_j also counts
// the small-sample bias of a section's percentile, which can only widen
// the interval. Sections of autocorrelated intervals are themselves
// correlated, so s alone underestimates the spread of log R; a is the
// factor of that bias for intervals autocorrelated up to
// MaxAutocorrelation (autocorrelationAllowance), which keeps the coverage
// at or above the stated level in docs/statistics.md's simulations up to
// that φ, and above it, at the price of width, when the intervals are less
// autocorrelated. The p-value is the matching two-sided t test. Warm-up
// intervals are the caller's to leave out. Sectioning draws nothing at
// random: the same runs always give the same interval.
//
// The interval describes the variability within these two runs only: it
// cannot see run-to-run variation (a noisy neighbour for a whole run), so
// repetitions remain the better evidence.
func CompareIntervals(baseline, variant []Interval, stat Statistic, opts Options, bopts BootstrapOptions) (Comparison, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return Comparison{}, err
	}
	if !stat.Throughput && !(stat.Percentile > 0 && stat.Percentile <= 100) {
		return Comparison{}, fmt.Errorf("percentile %g is not in (0, 100]", stat.Percentile)
	}
	b, err := newRunSeries("baseline", baseline)
	if err != nil {
		return Comparison{}, err
	}
	v, err := newRunSeries("variant", variant)
	if err != nil {
		return Comparison{}, err
	}
	return compareSeries(b, v, stat, o, bopts.Sections)
}

// compareSeries is CompareIntervals on runs already in series form, with
// options already defaulted; k ≤ 0 means DefaultSections. The simulations
// call it to section one pair of runs several ways.
func compareSeries(b, v *runSeries, stat Statistic, o Options, k int) (Comparison, error) {
	c := Comparison{NBaseline: len(b.ops), NVariant: len(v.ops), Method: MethodSectioning, PValue: math.NaN()}
	sb, sv := b.statistic(b.all(), stat), v.statistic(v.all(), stat)
	if !(sb > 0) || !(sv > 0) {
		return Comparison{}, fmt.Errorf("statistic is %g for the baseline and %g for the variant: a ratio needs both above zero", sb, sv)
	}
	c.Ratio = sv / sb
	n := min(len(b.ops), len(v.ops))
	if k <= 0 {
		k = DefaultSections(n)
	}
	if n < MinIntervals || k < 2 || k > n {
		// No interval, so no p-value: NaN prints as "-", where 0 would
		// read as overwhelming evidence.
		c.Verdict, c.Reason = Inconclusive, fmt.Sprintf("fewer than %d intervals per run", max(MinIntervals, k))
		return c, nil
	}
	s, missing := sectionSpread(b, v, stat, k, math.Log(c.Ratio))
	if missing != "" {
		c.Verdict, c.Reason = Inconclusive, missing
		return c, nil
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(k - 1)}
	// Each run is cut by its own length: the allowance of the run whose
	// sections are the more biased bounds the pair's.
	a := max(autocorrelationAllowance(len(b.ops), k, MaxAutocorrelation), autocorrelationAllowance(len(v.ops), k, MaxAutocorrelation))
	se := s * math.Sqrt(a/float64(k))
	half := t.Quantile(1-(1-o.Confidence)/2) * se
	c.HasInterval, c.Confidence = true, o.Confidence
	c.Lo, c.Hi = c.Ratio*math.Exp(-half), c.Ratio*math.Exp(half)
	c.PValue = 1
	if se > 0 {
		c.PValue = 2 * t.CDF(-math.Abs(math.Log(c.Ratio))/se)
	}
	c.Verdict, c.Reason = decide(c.Ratio, c.Lo, c.Hi, c.HasInterval, o)
	return c, nil
}

// sectionSpread returns s, the spread about logRatio of the k paired
// section log ratios log(variant_j / baseline_j); a section whose
// statistic is zero (no operations, or no errors for an error rate) has no
// log ratio: the comparison then has no interval, and missing says why.
func sectionSpread(b, v *runSeries, stat Statistic, k int, logRatio float64) (s float64, missing string) {
	sb, sv := sections(len(b.ops), k), sections(len(v.ops), k)
	var ss float64
	for j := range k {
		x, y := b.statistic(sb[j], stat), v.statistic(sv[j], stat)
		if !(x > 0) || !(y > 0) {
			return 0, fmt.Sprintf("section %d of %d reads %g in the baseline and %g in the variant: too few events per section for an interval", j+1, k, x, y)
		}
		d := math.Log(y/x) - logRatio
		ss += d * d
	}
	return math.Sqrt(ss / float64(k-1)), ""
}

// sections returns the interval indices of each of k contiguous,
// near-equal sections of a run of n ≥ k intervals.
func sections(n, k int) [][]int {
	out := make([][]int, k)
	for j := range k {
		a, b := sectionBounds(n, k, j)
		for i := a; i < b; i++ {
			out[j] = append(out[j], i)
		}
	}
	return out
}

// sectionBounds is section j of the k that a run of n intervals is cut
// into: intervals [a, b). The one rule for where sections fall, which the
// comparison cuts by and the autocorrelation allowance is computed for.
func sectionBounds(n, k, j int) (a, b int) { return j * n / k, (j + 1) * n / k }

// runSeries is a run's intervals in a form cheap to merge many times: each
// histogram as its non-empty buckets, numbered in one ascending list for
// the run. Adding bucket counts is exactly what an HDR merge of histograms
// with one geometry does, so a percentile read from the sum equals the one
// read from the merged histograms (TestSparseMergeEqualsHDRMerge).
type runSeries struct {
	highest []int64     // per bucket number: the bucket's highest equivalent value
	sparse  [][]bucketN // per interval: (bucket number, count)
	ops     []int64
	seconds []float64
	scratch []int64 // merged counts per bucket, reused across resamples
}

type bucketN struct {
	bucket int
	count  int64
}

func newRunSeries(what string, in []Interval) (*runSeries, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("%s has no intervals", what)
	}
	rs := &runSeries{sparse: make([][]bucketN, len(in)), ops: make([]int64, len(in)), seconds: make([]float64, len(in))}
	if err := checkIntervals(what, in); err != nil {
		return nil, err
	}
	bars := bucketBars()
	number := map[int]int{} // counts index -> bucket number
	var used []int
	for i, it := range in {
		rs.ops[i], rs.seconds[i] = it.Ops, it.Seconds
		for idx, c := range it.Latency.Export().Counts {
			if c == 0 {
				continue
			}
			if _, ok := number[idx]; !ok {
				number[idx] = 0
				used = append(used, idx)
			}
			rs.sparse[i] = append(rs.sparse[i], bucketN{bucket: idx, count: c})
		}
	}
	sort.Ints(used)
	rs.highest = make([]int64, len(used))
	for j, idx := range used {
		if idx >= len(bars) {
			return nil, fmt.Errorf("%s: bucket %d lies outside spanbench's histogram geometry", what, idx)
		}
		number[idx], rs.highest[j] = j, bars[idx].To
	}
	for _, sp := range rs.sparse {
		for k := range sp {
			sp[k].bucket = number[sp[k].bucket]
		}
	}
	rs.scratch = make([]int64, len(used))
	return rs, nil
}

// checkIntervals refuses intervals the bootstrap cannot merge exactly.
func checkIntervals(what string, in []Interval) error {
	for i, it := range in {
		if it.Latency == nil || !(it.Seconds > 0) || it.Ops < 0 {
			return fmt.Errorf("%s interval %d: needs a histogram, Ops ≥ 0 and Seconds > 0", what, i)
		}
		if err := checkGeometry(it.Latency); err != nil {
			return fmt.Errorf("%s interval %d: %w", what, i, err)
		}
	}
	return nil
}

// bucketBars returns every bucket of the shared geometry in counts-index
// order (the order of hdr's Export().Counts), each with its lowest and
// highest equivalent values. A histogram holding only the top value walks
// the whole geometry once; hdrhistogram-go exports no cheaper way to map a
// counts index to its values.
func bucketBars() []hdr.Bar {
	probe := histogram.New()
	_ = probe.RecordValue(histogram.HighestMicros) // in range by construction
	return probe.Distribution()
}

// checkGeometry refuses histograms whose buckets are not spanbench's, since
// merging them would not be exact.
func checkGeometry(h *hdr.Histogram) error {
	if h.LowestTrackableValue() != histogram.LowestMicros || h.HighestTrackableValue() != histogram.HighestMicros ||
		h.SignificantFigures() != histogram.SigFigs {
		return fmt.Errorf("histogram geometry differs from spanbench's shared one")
	}
	return nil
}

func (rs *runSeries) all() []int {
	idx := make([]int, len(rs.ops))
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// statistic merges the intervals idx (with repeats) and reads stat.
func (rs *runSeries) statistic(idx []int, stat Statistic) float64 {
	if stat.Throughput {
		var ops int64
		var secs float64
		for _, i := range idx {
			ops += rs.ops[i]
			secs += rs.seconds[i]
		}
		return float64(ops) / secs
	}
	clear(rs.scratch)
	var total int64
	for _, i := range idx {
		for _, b := range rs.sparse[i] {
			rs.scratch[b.bucket] += b.count
			total += b.count
		}
	}
	if total == 0 {
		return 0
	}
	return float64(rs.highest[rankBucket(rs.scratch, total, stat.Percentile)])
}

// rankBucket returns the bucket holding the value at percentile p, with the
// rank rule of hdrhistogram-go's ValueAtPercentile, so both agree exactly.
func rankBucket(counts []int64, total int64, p float64) int {
	rank := int64(1)
	if r := p/100*float64(total) + 0.5; r >= float64(total) {
		rank = total
	} else if r >= 1 {
		rank = int64(r)
	}
	var seen int64
	for j, c := range counts {
		seen += c
		if seen >= rank {
			return j
		}
	}
	return len(counts) - 1
}

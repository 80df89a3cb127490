package capacity_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/capacity"
	"github.com/spanbench/spanbench/result/histogram"
)

// queue is the synthetic system the simulation searches: an M/M/c queue
// (Poisson arrivals, c servers, exponential service times), the textbook
// model of a pool of workers behind a queue. Its latency percentiles are
// exact and rise past a knee as the offered rate approaches c·mu, the way
// a saturating server's do, so the capacity under a p99 bound is known.
type queue struct {
	c  int     // servers
	mu float64 // each server's service rate, per second
}

// erlangC is the probability that an arrival waits (Erlang's C formula).
func (q queue) erlangC(lambda float64) float64 {
	a := lambda / q.mu // offered load in erlangs
	rho := a / float64(q.c)
	if rho >= 1 {
		return 1
	}
	term, sum := 1.0, 1.0 // a^k/k!, summed for k < c
	for k := 1; k < q.c; k++ {
		term *= a / float64(k)
		sum += term
	}
	last := term * a / float64(q.c) / (1 - rho) // a^c/c! · 1/(1-rho)
	return last / (sum + last)
}

// survival is P(sojourn > t): service Exp(mu) plus, with probability
// erlangC, a wait Exp(c·mu − lambda).
func (q queue) survival(lambda, t float64) float64 {
	pw, theta := q.erlangC(lambda), float64(q.c)*q.mu-lambda
	service := math.Exp(-q.mu * t)
	if math.Abs(theta-q.mu) < 1e-9 {
		return (1-pw)*service + pw*(1+q.mu*t)*service
	}
	both := (q.mu*math.Exp(-theta*t) - theta*service) / (q.mu - theta)
	return (1-pw)*service + pw*both
}

// quantile is the sojourn time's p-th percentile, in seconds; +Inf at or
// past saturation.
func (q queue) quantile(lambda, p float64) float64 {
	if lambda >= float64(q.c)*q.mu {
		return math.Inf(1)
	}
	lo, hi := 0.0, 1.0
	for q.survival(lambda, hi) > 1-p/100 {
		hi *= 2
	}
	for range 100 {
		mid := (lo + hi) / 2
		if q.survival(lambda, mid) > 1-p/100 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// simulation is one configuration of the simulated searches.
type simulation struct {
	q        queue
	bound    time.Duration // the SLO's p99 bound
	seconds  float64       // each step's measured time
	sigma    float64       // per-step multiplicative noise on the servers' rate: mu × exp(sigma·Z)
	hiccup   float64       // probability that a step fails whatever its rate (a transient: a split, a leader move)
	params   capacity.Params
	slo      capacity.SLO
	truth    float64 // the noise-free system's capacity under the SLO
	maxSteps int
}

func newSimulation(t *testing.T, sigma, hiccup float64, confirm capacity.Confirm, factor float64) *simulation {
	t.Helper()
	slo, err := capacity.ParseSLO([]string{"p99 <= 100ms"})
	if err != nil {
		t.Fatal(err)
	}
	s := &simulation{
		q: queue{c: 8, mu: 100}, bound: 100 * time.Millisecond, seconds: 60, sigma: sigma, hiccup: hiccup,
		params: capacity.Params{From: 50, Max: 2000, Resolution: simulationResolution, Factor: factor, Confirm: confirm},
		slo:    slo.Resolve("regional-asia-northeast1"),
	}
	s.maxSteps = s.params.MaxSteps()
	// The truth is where the noise-free step, measured and judged as the
	// search's are, stops passing: the model's exact p99 = bound, up to
	// the histogram's 3 significant digits.
	lo, hi := 0.0, float64(s.q.c)*s.q.mu
	for range 60 {
		mid := (lo + hi) / 2
		if s.step(t, mid, 1, false).Pass {
			lo = mid
		} else {
			hi = mid
		}
	}
	s.truth = lo
	return s
}

// step measures the system at rate lambda, its servers' rate multiplied
// by noise for this step (a step where background work, a split or a
// neighbour takes some of the capacity), through the package's own
// Evaluate: a histogram whose p99 is the step's exact p99, and the counts
// of an open loop whose in-flight cap turns the excess over c·mu into
// missed sends.
func (s *simulation) step(t *testing.T, lambda, noise float64, hiccup bool) capacity.StepResult {
	t.Helper()
	q := queue{c: s.q.c, mu: s.q.mu * noise}
	p99 := int64(histogram.HighestMicros) // saturated: latency grows without bound, clamped as the histograms clamp it
	if sec := q.quantile(lambda, 99); hiccup {
		p99 = histogram.Micros(2 * s.bound)
	} else if sec < float64(histogram.HighestMicros)/1e6 {
		p99 = histogram.Micros(time.Duration(sec * float64(time.Second)))
	}
	h := histogram.NewCompact()
	h.RecordValues(histogram.Micros(time.Millisecond), 98)
	h.RecordValues(p99, 2) // ranks 99 and 100 of 100: the p99 is this value
	intended := uint64(math.Round(lambda * s.seconds))
	ok := min(intended, uint64(float64(q.c)*q.mu*s.seconds))
	m := capacity.Measurement{Offered: lambda, Seconds: s.seconds, Missed: intended - ok,
		Operations: map[string]*capacity.OperationMeasurement{"read": {Counts: result.Counts{OK: ok}, Latency: h}}}
	r, err := capacity.Evaluate(s.slo, m)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// trial is one search's result.
type trial struct {
	found float64
	steps int
}

func (s *simulation) run(t *testing.T, rng *rand.Rand) trial {
	t.Helper()
	search, err := capacity.New(s.params)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; ; n++ {
		rate, ok := search.Next()
		if !ok {
			break
		}
		if n == s.maxSteps {
			t.Fatalf("the search asks for a step after %d, its bound", n)
		}
		if rate > s.params.Max {
			t.Fatalf("the search offered %g, above max %g", rate, s.params.Max)
		}
		noise, hiccup := math.Exp(s.sigma*rng.NormFloat64()), rng.Float64() < s.hiccup
		if err := search.Record(s.step(t, rate, noise, hiccup)); err != nil {
			t.Fatal(err)
		}
	}
	o := search.Outcome(0)
	if len(o.Steps) > s.maxSteps || o.Reason == string(capacity.StepLimit) {
		t.Fatalf("the search took %d steps (%s), its bound is %d", len(o.Steps), o.Reason, s.maxSteps)
	}
	return trial{found: o.Capacity, steps: len(o.Steps)}
}

// stats summarises trials against the truth.
type stats struct {
	bias, spread, p5, p95 float64 // relative to the truth
	early, late           float64 // shares below truth−resolution, above truth+resolution
	meanSteps             float64
	maxSteps              int
}

func (s *simulation) trials(t *testing.T, n int, seed uint64) stats {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	rel := make([]float64, n)
	var st stats
	for i := range rel {
		tr := s.run(t, rng)
		rel[i] = (tr.found - s.truth) / s.truth
		st.bias += rel[i] / float64(n)
		st.meanSteps += float64(tr.steps) / float64(n)
		st.maxSteps = max(st.maxSteps, tr.steps)
		if tr.found < s.truth-s.params.Resolution {
			st.early++
		}
		if tr.found > s.truth+s.params.Resolution {
			st.late++
		}
	}
	for _, r := range rel {
		st.spread += (r - st.bias) * (r - st.bias) / float64(n-1)
	}
	st.spread = math.Sqrt(st.spread)
	st.early, st.late = st.early/float64(n), st.late/float64(n)
	slices.Sort(rel)
	st.p5, st.p95 = rel[n*5/100], rel[n*95/100]
	return st
}

// The simulation's size and resolution: about 5 % of the true capacity,
// what a user sizing an instance asks for.
const (
	simulationTrials     = 1000
	simulationResolution = 40
)

// TestSearchSimulation searches a synthetic M/M/c system of known
// capacity 1,000 times per noise level and confirmation rule, prints the
// error of the found capacity (docs/capacity.md quotes the table) and
// asserts what a correct search guarantees: without noise it lands within
// the resolution below the truth every time, whatever the rule; transient
// failures alone never make it overshoot; confirming a failure cuts the
// false-early-stop rate that transients cause; and best-of-three
// overshoots less than taking the retry's verdict.
func TestSearchSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 searches per cell")
	}
	type cell struct{ sigma, hiccup float64 }
	cells := []cell{{0, 0}, {0, 0.05}, {0, 0.1}, {0.02, 0}, {0.05, 0}, {0.1, 0}, {0.05, 0.05}, {0.1, 0.05}}
	rules := []capacity.Confirm{capacity.ConfirmNone, capacity.ConfirmRetryWins, capacity.ConfirmMajority}
	results := map[cell]map[capacity.Confirm]stats{}
	var table strings.Builder
	fmt.Fprintf(&table, "| noise σ | transients | rule | bias | spread (sd) | 5th to 95th pct | early stop | overshoot | mean steps | max steps (bound) |\n|---|---|---|---|---|---|---|---|---|---|\n")
	var truth float64
	for _, c := range cells {
		results[c] = map[capacity.Confirm]stats{}
		for _, rule := range rules {
			sim := newSimulation(t, c.sigma, c.hiccup, rule, 0)
			truth = sim.truth
			st := sim.trials(t, simulationTrials, 27)
			results[c][rule] = st
			fmt.Fprintf(&table, "| %.2f | %.0f %% | %s | %+.1f %% | %.1f %% | %+.1f %% to %+.1f %% | %.1f %% | %.1f %% | %.1f | %d (%d) |\n",
				c.sigma, 100*c.hiccup, rule, 100*st.bias, 100*st.spread, 100*st.p5, 100*st.p95, 100*st.early, 100*st.late, st.meanSteps, st.maxSteps, sim.maxSteps)
		}
	}
	t.Logf("true capacity %.1f/s (M/M/8, mu 100/s, p99 <= 100ms), resolution %d/s, from 50 to 2000, factor 2\n%s", truth, simulationResolution, table.String())

	for _, rule := range rules {
		if st := results[cell{}][rule]; st.early != 0 || st.late != 0 || st.p5 < -simulationResolution/truth || st.p95 > 0 {
			t.Errorf("%s without noise: found capacity off the truth by %+.2f%% to %+.2f%% (early %.1f%%, late %.1f%%); want within the resolution below it every time",
				rule, 100*st.p5, 100*st.p95, 100*st.early, 100*st.late)
		}
		for _, h := range []float64{0.05, 0.1} {
			if st := results[cell{0, h}][rule]; st.late != 0 || st.p95 > 0 {
				t.Errorf("%s with %.0f%% transient failures only: found up to %+.2f%% off the truth, above it beyond the resolution in %.1f%% of searches; a failure can never raise the capacity",
					rule, 100*h, 100*st.p95, 100*st.late)
			}
		}
	}
	for _, h := range []float64{0.05, 0.1} {
		none, majority := results[cell{0, h}][capacity.ConfirmNone], results[cell{0, h}][capacity.ConfirmMajority]
		if majority.early > none.early/3 {
			t.Errorf("%.0f%% transient failures: confirming failures left the false-early-stop rate at %.1f%% (without: %.1f%%); want at most a third",
				100*h, 100*majority.early, 100*none.early)
		}
	}
	for _, c := range []cell{{0.05, 0}, {0.1, 0}} {
		majority, retry := results[c][capacity.ConfirmMajority], results[c][capacity.ConfirmRetryWins]
		if majority.late >= retry.late || majority.bias >= retry.bias {
			t.Errorf("noise %.2f: best of three overshot the truth in %.1f%% of searches (bias %+.1f%%), retry-wins in %.1f%% (%+.1f%%); want fewer and less",
				c.sigma, 100*majority.late, 100*majority.bias, 100*retry.late, 100*retry.bias)
		}
	}
}

// TestFactorSimulation prints what the geometric factor costs and buys on
// the same system (docs/capacity.md): steps taken, the error, and how far
// past the truth the geometric phase loads the system, with noise and
// transients under the default rule. Where the truth falls between the
// geometric rates decides much of it, so each factor's 1,000 searches
// start from eight rates spread log-uniformly over one factor. It asserts
// what the default factor was chosen for: the geometric phase never loads
// the system at twice its capacity or more, it takes fewer steps on
// average than factor 1.5, and no search takes more steps than its bound.
func TestFactorSimulation(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 searches per factor")
	}
	const starts = 8
	factors := []float64{1.5, 2, 3, 4}
	if !slices.Contains(factors, capacity.DefaultFactor) {
		t.Fatalf("the default factor %g is not among the simulated %v", capacity.DefaultFactor, factors)
	}
	meanSteps := map[float64]float64{}
	var table strings.Builder
	fmt.Fprintf(&table, "| factor | bias | spread | early stop | overshoot | mean steps | max steps (largest bound) | first rate past the truth / truth (mean, max) |\n|---|---|---|---|---|---|---|---|\n")
	for _, f := range factors {
		var all stats
		var bound int
		var pastMean, pastMax float64
		for k := range starts {
			sim := newSimulation(t, 0.05, 0.05, capacity.ConfirmMajority, f)
			sim.params.From = 50 * math.Pow(f, float64(k)/starts)
			sim.maxSteps = sim.params.MaxSteps()
			st := sim.trials(t, simulationTrials/starts, 27+uint64(k))
			all.bias += st.bias / starts
			all.spread += st.spread / starts
			all.early += st.early / starts
			all.late += st.late / starts
			all.meanSteps += st.meanSteps / starts
			all.maxSteps, bound = max(all.maxSteps, st.maxSteps), max(bound, sim.maxSteps)
			r := sim.params.From // the geometric phase's first rate past the truth
			for r <= sim.truth {
				r = math.Min(r*f, sim.params.Max)
			}
			pastMean, pastMax = pastMean+r/sim.truth/starts, max(pastMax, r/sim.truth)
		}
		fmt.Fprintf(&table, "| %g | %+.1f %% | %.1f %% | %.1f %% | %.1f %% | %.1f | %d (%d) | %.2f, %.2f |\n",
			f, 100*all.bias, 100*all.spread, 100*all.early, 100*all.late, all.meanSteps, all.maxSteps, bound, pastMean, pastMax)
		meanSteps[f] = all.meanSteps
		if all.maxSteps > bound {
			t.Errorf("factor %g: a search took %d steps, more than its bound %d", f, all.maxSteps, bound)
		}
		if f == capacity.DefaultFactor && pastMax >= 2 {
			t.Errorf("the default factor %g loads the system at up to %.2f times its capacity in the geometric phase; want under 2", f, pastMax)
		}
	}
	if d := meanSteps[capacity.DefaultFactor]; d >= meanSteps[1.5] {
		t.Errorf("the default factor %g takes %.1f steps on average, factor 1.5 %.1f; want fewer", capacity.DefaultFactor, d, meanSteps[1.5])
	}
	t.Logf("noise σ 0.05, 5 %% transients, best of three (bias, spread and rates: means over the eight starts)\n%s", table.String())
}

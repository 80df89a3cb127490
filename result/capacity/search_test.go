package capacity_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/spanbench/spanbench/result/capacity"
)

// step is a step result at rate with the verdict pass; a failing one
// fails its latency condition.
func step(rate float64, pass bool) capacity.StepResult {
	f := capacity.Figure{Condition: "p99 <= 20ms", Measured: true, Pass: pass}
	return capacity.StepResult{Offered: rate, Pass: pass, Figures: []capacity.Figure{f}}
}

// drive runs a search whose step at a rate gets the next verdict from
// verdicts (then passes below truth and fails above it), returning the
// rates offered.
func drive(t *testing.T, s *capacity.Search, truth float64, verdicts ...bool) []float64 {
	t.Helper()
	var rates []float64
	for {
		r, ok := s.Next()
		if !ok {
			return rates
		}
		if len(rates) == s.MaxSteps() {
			t.Fatalf("the search asks for a step after %d, its MaxSteps: %v", len(rates), rates)
		}
		rates = append(rates, r)
		pass := r <= truth
		if len(verdicts) > 0 {
			pass, verdicts = verdicts[0], verdicts[1:]
		}
		if err := s.Record(step(r, pass)); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSearchSteps(t *testing.T) {
	p := capacity.Params{From: 100, Max: 1600, Resolution: 50}
	for _, tc := range []struct {
		name     string
		rule     capacity.Confirm
		truth    float64
		verdicts []bool
		rates    []float64
		reason   capacity.StopReason
		capacity float64
		failing  float64
	}{
		{"geometric then bisection, failures confirmed", capacity.ConfirmMajority, 700, nil,
			[]float64{100, 200, 400, 800, 800, 600, 700, 750, 750}, capacity.Resolved, 700, 750},
		{"without confirmation", capacity.ConfirmNone, 700, nil,
			[]float64{100, 200, 400, 800, 600, 700, 750}, capacity.Resolved, 700, 750},
		{"a transient at 200 is outvoted", capacity.ConfirmMajority, 700, []bool{true, false, true, true},
			[]float64{100, 200, 200, 200, 400, 800, 800, 600, 700, 750, 750}, capacity.Resolved, 700, 750},
		{"a transient at 200 ends an unconfirmed search", capacity.ConfirmNone, 700, []bool{true, false},
			[]float64{100, 200, 150}, capacity.Resolved, 150, 200},
		{"retry wins: a pass on retry decides", capacity.ConfirmRetryWins, 700, []bool{true, false, true},
			[]float64{100, 200, 200, 400, 800, 800, 600, 700, 750, 750}, capacity.Resolved, 700, 750},
		{"best of three: fail, pass, fail is a failure", capacity.ConfirmMajority, 700, []bool{true, false, true, false},
			[]float64{100, 200, 200, 200, 150}, capacity.Resolved, 150, 200},
		{"max passes", capacity.ConfirmMajority, 5000, nil,
			[]float64{100, 200, 400, 800, 1600}, capacity.ReachedMax, 1600, 0},
		{"from fails", capacity.ConfirmMajority, 50, nil,
			[]float64{100, 100}, capacity.BelowFrom, 0, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := p
			p.Confirm = tc.rule
			s, err := capacity.New(p)
			if err != nil {
				t.Fatal(err)
			}
			rates := drive(t, s, tc.truth, tc.verdicts...)
			if d := cmp.Diff(tc.rates, rates); d != "" {
				t.Errorf("rates offered (-want +got):\n%s", d)
			}
			o := s.Outcome(3000)
			if !o.Done || o.Reason != string(tc.reason) || o.Capacity != tc.capacity || o.FirstFailing != tc.failing {
				t.Errorf("outcome done %v %s capacity %g first failing %g; want %s %g %g", o.Done, o.Reason, o.Capacity, o.FirstFailing, tc.reason, tc.capacity, tc.failing)
			}
			if o.CapacityPerNode != tc.capacity/3 {
				t.Errorf("capacity per node on 3 nodes %g, want %g", o.CapacityPerNode, tc.capacity/3)
			}
			if len(o.Steps) != len(rates) {
				t.Errorf("%d steps recorded, %d taken", len(o.Steps), len(rates))
			}
			if tc.failing != 0 && !slices.Equal(o.FailedConditions, []string{"p99 <= 20ms"}) {
				t.Errorf("failed conditions %v, want the failing step's", o.FailedConditions)
			}
		})
	}
}

// TestSearchBounds drives searches of random parameters with random
// verdicts: none offers more than max or takes more than MaxSteps, none
// stops on the step limit, the capacity is a rate that passed and below
// the first failing one, and a resolved bracket is within the resolution.
func TestSearchBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 5))
	rules := []capacity.Confirm{capacity.ConfirmNone, capacity.ConfirmRetryWins, capacity.ConfirmMajority}
	for i := range 20000 {
		p := capacity.Params{From: 1 + rng.Float64()*1000, Resolution: 0.5 + rng.Float64()*100, Factor: 1.2 + rng.Float64()*4, Confirm: rules[i%3]}
		p.Max = p.From * (1 + rng.Float64()*1000)
		if p.Validate() != nil {
			continue
		}
		s, err := capacity.New(p)
		if err != nil {
			t.Fatal(err)
		}
		passRate := rng.Float64()
		passed := map[float64]bool{}
		for n := 0; ; n++ {
			r, ok := s.Next()
			if !ok {
				break
			}
			if n == p.MaxSteps() {
				t.Fatalf("%+v: the search asks for a step after %d, its MaxSteps", p, n)
			}
			if r > p.Max || r < p.From {
				t.Fatalf("%+v: offered %g outside [from, max]", p, r)
			}
			pass := rng.Float64() < passRate
			passed[r] = passed[r] || pass
			if err := s.Record(step(r, pass)); err != nil {
				t.Fatal(err)
			}
		}
		o := s.Outcome(0)
		if len(o.Steps) > p.MaxSteps() || o.Reason == string(capacity.StepLimit) {
			t.Fatalf("%+v: %d steps (%s), MaxSteps %d", p, len(o.Steps), o.Reason, p.MaxSteps())
		}
		if o.Capacity != 0 && !passed[o.Capacity] {
			t.Fatalf("%+v: capacity %g never passed", p, o.Capacity)
		}
		if o.FirstFailing != 0 && o.FirstFailing <= o.Capacity {
			t.Fatalf("%+v: first failing %g not above capacity %g", p, o.FirstFailing, o.Capacity)
		}
		if o.Reason == string(capacity.Resolved) && o.FirstFailing-o.Capacity > p.Resolution {
			t.Fatalf("%+v: resolved with a bracket of %g", p, o.FirstFailing-o.Capacity)
		}
	}
}

// TestMaxStepsIsReached: the worst case is a real path, not a loose bound.
// Every rate fails, passes, and is decided by a third step; the widest
// bracket (800 to 1600) is then bisected to the resolution.
func TestMaxStepsIsReached(t *testing.T) {
	p := capacity.Params{From: 100, Max: 1600, Resolution: 50}
	s, err := capacity.New(p)
	if err != nil {
		t.Fatal(err)
	}
	// Each rate: fail, pass, then the third step decides: pass below the
	// truth 1599 (the widest bracket is 800..1600), fail above it.
	n := 0
	for {
		r, ok := s.Next()
		if !ok {
			break
		}
		if n == p.MaxSteps() {
			t.Fatalf("the search asks for a step after %d, its MaxSteps", n)
		}
		pass := n%3 == 1 || (n%3 == 2 && r <= 1599)
		if err := s.Record(step(r, pass)); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != p.MaxSteps() {
		t.Errorf("the adversarial path took %d steps, MaxSteps says %d", n, p.MaxSteps())
	}
}

func TestSearchRefuses(t *testing.T) {
	if _, err := capacity.New(capacity.Params{From: 10, Max: 5, Resolution: 1}); err == nil {
		t.Error("New with from above max succeeded")
	}
	s, err := capacity.New(capacity.Params{From: 10, Max: 10, Resolution: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Record(step(20, true)); err == nil {
		t.Error("a step at a rate the search did not ask for was recorded")
	}
	if err := s.Record(step(10, true)); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Next(); ok {
		t.Error("a search whose only rate, max, passed asks for another step")
	}
	if err := s.Record(step(10, true)); err == nil {
		t.Error("a step was recorded after the search ended")
	}
}

package pricing

import (
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func usd(t *testing.T, m Money, want string) {
	t.Helper()
	if got := m.String(); got != want {
		t.Errorf("cost = %s; want %s", got, want)
	}
}

// The figures below are computed by hand from the test catalog's rates
// (0.9 per node-hour, 0.3 per GiB-month, 0.04 per vCPU-hour).
func TestFormulasAgainstHandComputedCases(t *testing.T) {
	c := mustParse(t, validFile)
	r, _, _ := c.Lookup("regional-test1", Standard)
	held := func(h Holding, pu int64, d time.Duration) Held {
		return Held{Holding: h, ProcessingUnits: pu, From: t0, To: t0.Add(d)}
	}
	// 3 nodes × 0.5 h × 0.9 = 1.35.
	usd(t, InstanceCost(r, held(Existing, 3000, 30*time.Minute)), "USD 1.35")
	// An Ephemeral instance held 42 min is billed Spanner's minimum hour:
	// 3 × 1 × 0.9 = 2.70.
	usd(t, InstanceCost(r, held(Ephemeral, 3000, 42*time.Minute)), "USD 2.70")
	// Past the minimum, prorated: 3 × 1.5 × 0.9 = 4.05.
	usd(t, InstanceCost(r, held(Ephemeral, 3000, 90*time.Minute)), "USD 4.05")
	// The pricing page's example: 200 PU for 6 h is 1.2 node-hours; × 0.9.
	usd(t, InstanceCost(r, held(Existing, 200, 6*time.Hour)), "USD 1.08")
	// 10 GiB for 73 h (a tenth of a 730-hour month) × 0.3 = 0.30.
	usd(t, StorageCost(r, 10<<30, 73*time.Hour), "USD 0.30")
	// 2 vCPU for 30 min × 0.04 = 0.04.
	usd(t, RunnerCost(c, 2000, 30*time.Minute), "USD 0.04")
	// 1.35 over 900,000 operations: 1.50 a million.
	m := InstanceCost(r, held(Existing, 3000, 30*time.Minute))
	usd(t, PerMillionOps(m, 900_000), "USD 1.50")
	// The measured 20 minutes of an hour held at 2.70: 0.90.
	usd(t, WindowShare(InstanceCost(r, held(Ephemeral, 3000, time.Hour)), 20*time.Minute, time.Hour), "USD 0.90")
	usd(t, Sum(m, m, m), "USD 4.05")
}

func TestRoundingIsHalfAwayFromZeroOnce(t *testing.T) {
	c := mustParse(t, validFile)
	r, _, _ := c.Lookup("regional-test1", Standard)
	// 100 PU for 2 s: 0.9 × 0.1 × 2/3600 = 0.00005 exactly: 50 micros.
	if got := InstanceCost(r, Held{Holding: Existing, ProcessingUnits: 100, From: t0, To: t0.Add(2 * time.Second)}).Micros(); got != 50 {
		t.Errorf("micros = %d; want 50", got)
	}
	// 1 s: 25 micros; 1 ms: 0.025 micros, rounds to 0 (not float noise).
	if got := InstanceCost(r, Held{Holding: Existing, ProcessingUnits: 100, From: t0, To: t0.Add(time.Millisecond)}).Micros(); got != 0 {
		t.Errorf("micros of 1 ms = %d; want 0", got)
	}
	// 0.0000005 rounds away from zero to 1 micro.
	if got := moneyOf(parseMust(t, "0.0000005"), "USD").Micros(); got != 1 {
		t.Errorf("0.0000005 -> %d micros; want 1", got)
	}
}

func parseMust(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, err := parseDecimal(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestUnknownPropagates(t *testing.T) {
	c := mustParse(t, validFile)
	storageless, _, _ := c.Lookup("multi1", EnterprisePlus)
	h := Held{Holding: Existing, ProcessingUnits: 1000, From: t0, To: t0.Add(time.Hour)}
	s := StorageCost(storageless, 1<<30, time.Hour)
	if s.Known() || !strings.Contains(s.Reason(), "no storage price for multi1") {
		t.Errorf("storage without a price = %v; want unknown, saying why", s)
	}
	known := InstanceCost(storageless, h)
	for name, m := range map[string]Money{
		"sum":                 Sum(known, s),
		"sum, unknown first":  Sum(s, known),
		"per million":         PerMillionOps(s, 1000),
		"window share":        WindowShare(s, time.Minute, time.Hour),
		"no operations":       PerMillionOps(known, 0),
		"no processing units": InstanceCost(storageless, Held{Holding: Existing, From: t0, To: t0.Add(time.Hour)}),
		"two currencies":      known.Add(moneyOf(parseMust(t, "1"), "EUR")),
		"zero value":          {},
	} {
		if m.Known() {
			t.Errorf("%s = %v; want unknown", name, m)
		}
		if !strings.HasPrefix(m.String(), "unknown") {
			t.Errorf("%s prints %q; want it to say unknown", name, m)
		}
	}
	nothing := mustParse(t, strings.Replace(validFile, "runnerVCPUHour: \"0.04\"\n", "", 1))
	if m := RunnerCost(nothing, 1000, time.Hour); m.Known() {
		t.Errorf("runner cost without an admin price = %v; want unknown", m)
	}
}

func TestMonthlyCountsTheScheduleRuns(t *testing.T) {
	c := mustParse(t, validFile)
	r, _, _ := c.Lookup("regional-test1", Standard)
	// One iteration: 6 runs of 3 nodes held for 20 min, billed 1 h each
	// (Ephemeral): 6 × 2.70 = 16.20; nightly, 30 runs in 30 days: 486.00.
	var it Money
	for range 6 {
		it = it.Add(InstanceCost(r, Held{Holding: Ephemeral, ProcessingUnits: 3000, From: t0, To: t0.Add(20 * time.Minute)}))
	}
	if it.Known() {
		t.Fatal("a sum starting from the zero Money must stay unknown")
	}
	it = Sum(func() []Money {
		var ms []Money
		for range 6 {
			ms = append(ms, InstanceCost(r, Held{Holding: Ephemeral, ProcessingUnits: 3000, From: t0, To: t0.Add(20 * time.Minute)}))
		}
		return ms
	}()...)
	sched, err := cron.ParseStandard("0 2 * * *")
	if err != nil {
		t.Fatal(err)
	}
	m, n, err := Monthly(it, sched, time.UTC, t0)
	if err != nil || n != 30 {
		t.Fatalf("Monthly: %d runs, %v; want 30", n, err)
	}
	usd(t, m, "USD 486.00")
	if m, _, _ := Monthly(Unknown("x"), sched, time.UTC, t0); m.Known() {
		t.Error("the projection of an unknown iteration is unknown")
	}
	every, _ := cron.ParseStandard("* * * * *")
	if _, n, err := Monthly(it, every, time.UTC, t0); err != nil || n != 43200 {
		t.Errorf("every minute: %d runs, %v; want 43200", n, err)
	}
	dense := cron.Every(time.Second)
	if _, _, err := Monthly(it, dense, time.UTC, t0); !errors.Is(err, ErrScheduleTooDense) {
		t.Errorf("every second: %v; want ErrScheduleTooDense (the walk is bounded)", err)
	}
}

func TestEstimateRun(t *testing.T) {
	c := mustParse(t, validFile)
	p := Plan{Config: "regional-test1", Holding: Ephemeral, ProcessingUnits: 1000,
		Setup: 10 * time.Minute, Run: 30 * time.Minute, DatasetBytes: 73 << 30, RunnerMilliCPU: 3000, Emulator: true}
	e := EstimateRun(c, p, t0)
	// Instance: 1 node, 40 min held, billed 1 h: 0.90. Storage: 73 GiB for
	// 40 min: 73 × (2/3)/730 × 0.3 = 0.02. Runners: 3 vCPU × 0.5 h × 0.04
	// = 0.06. Total 0.98.
	usd(t, e.Instance, "USD 0.90")
	usd(t, e.Storage, "USD 0.02")
	usd(t, e.Runners, "USD 0.06")
	usd(t, e.Total, "USD 0.98")
	if !strings.Contains(strings.Join(e.Notes, "; "), "estimate for regional-test1 on Cloud Spanner") {
		t.Errorf("notes %v do not label the emulator run's estimate", e.Notes)
	}
	p.Config = "regional-test2"
	e = EstimateRun(c, p, t0)
	if e.Total.Known() || !strings.Contains(e.Total.Reason(), "not published") {
		t.Errorf("estimate over an unpriced configuration = %v; want unknown with the catalog's reason", e.Total)
	}
	p.Config = EmulatorConfig
	if e := EstimateRun(c, p, t0); e.Total.Known() {
		t.Errorf("estimate for emulator-config = %v; want unknown", e.Total)
	}
}

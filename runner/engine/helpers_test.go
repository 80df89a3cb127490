package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/operation"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/runner/schedule"
)

// recordedSpec is a spec as a result records it, naming the operations,
// without a warm-up.
func recordedSpec(tb testing.TB, names ...string) result.Spec {
	tb.Helper()
	return specWithWarmUp(tb, `{"mode":"None"}`, names...)
}

// specWithWarmUp is recordedSpec with the warmUp given as JSON.
func specWithWarmUp(tb testing.TB, warmUp string, names ...string) result.Spec {
	tb.Helper()
	ops := make([]string, len(names))
	for i, n := range names {
		ops[i] = fmt.Sprintf(`{"name":%q,"type":"Read","weight":1}`, n)
	}
	s, err := result.NewSpec([]byte(`{"operations":[` + strings.Join(ops, ",") + `],"warmUp":` + warmUp + `}`))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// noopConfig runs ops (named op0, op1...) with equal weights at a constant
// rate, with the API's defaults: 512 in flight, 10 s intervals.
func noopConfig(tb testing.TB, rate float64, d time.Duration, ops ...operation.Operation) engine.Config {
	tb.Helper()
	cfg := engine.Config{
		Run:      "bench",
		Load:     engine.Load{Profile: schedule.Profile{{From: rate, To: rate, Duration: d}}, MaxInFlight: 512},
		Interval: 10 * time.Second, Shards: 1,
	}
	var names []string
	for i, op := range ops {
		names = append(names, fmt.Sprint("op", i))
		cfg.Operations = append(cfg.Operations, engine.Operation{Name: names[i], Weight: 1, Op: op})
	}
	cfg.Spec = recordedSpec(tb, names...)
	return cfg
}

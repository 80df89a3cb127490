package controllers

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

func (b *builderRun) ephemeral(config string, nodes int32) *builderRun {
	b.run.Spec.Target.Instance = v1alpha1.InstanceSpec{Name: "eph", Mode: v1alpha1.InstanceEphemeral, Config: config, Nodes: ptr.To(nodes)}
	return b
}

func TestLimitsRefuseWhatTheOperatorDoesNotAllow(t *testing.T) {
	limits := Limits{MaxRunners: 4, MaxDuration: time.Hour, MaxProcessingUnits: 3000,
		AllowedInstanceConfigs: []string{"regional-asia-northeast1", "asia1"}, MaxEphemeralDuration: 3 * time.Hour}
	for _, tc := range []struct {
		name string
		run  *v1alpha1.BenchmarkRun
		want string // "" = allowed
	}{
		{"an Existing run within every limit", newBuilderRun("ok").obj(), ""},
		{"too many runners", newBuilderRun("wide").replicas(5).obj(), "--max-runners"},
		{"too many loader pods", func() *v1alpha1.BenchmarkRun {
			r := newBuilderRun("loaders").obj()
			r.Spec.Workload.Dataset.LoaderPods = ptr.To[int32](5)
			return r
		}(), "dataset.loaderPods 5 exceeds the operator's limit of 4 pods (--max-runners)"},
		{"too big an instance", newBuilderRun("big").ephemeral("asia1", 4).obj(), "--max-processing-units"},
		{"an allowed configuration", newBuilderRun("tokyo").ephemeral("regional-asia-northeast1", 3).obj(), ""},
		{"a configuration not allowed", newBuilderRun("nam").ephemeral("nam-eur-asia1", 1).obj(), "--allowed-instance-configs"},
		{"an Existing instance of any configuration", func() *v1alpha1.BenchmarkRun {
			r := newBuilderRun("theirs").obj()
			r.Spec.Target.Instance.Config = "nam-eur-asia1"
			return r
		}(), ""},
		{"an instance that could outlive its cap", func() *v1alpha1.BenchmarkRun {
			r := newBuilderRun("long").ephemeral("asia1", 1).obj()
			r.Spec.Deadlines.Load = &metav1.Duration{Duration: 3 * time.Hour}
			return r
		}(), "--max-ephemeral-duration"},
	} {
		got := limits.check(tc.run)
		switch {
		case tc.want == "" && got != "":
			t.Errorf("%s: refused with %q", tc.name, got)
		case tc.want != "" && !strings.Contains(got, tc.want):
			t.Errorf("%s: check says %q; want a refusal naming %s", tc.name, got, tc.want)
		}
	}
	if got := (Limits{}).check(newBuilderRun("any").replicas(1000).ephemeral("anything", 1000).obj()); got != "" {
		t.Errorf("zero limits refused a run: %q", got)
	}
}

func TestEphemeralLifetimeAddsEveryDeadlineToTheWorkload(t *testing.T) {
	run := newBuilderRun("r").obj() // 10m workload, default deadlines
	want := 10*time.Minute + v1alpha1.DefaultPrepareDeadline + v1alpha1.DefaultLoadDeadline + v1alpha1.DefaultRunnersReadyDeadline +
		v1alpha1.DefaultOverrunDeadline + v1alpha1.DefaultAggregateDeadline
	if got := ephemeralLifetime(run); got != want {
		t.Errorf("ephemeralLifetime = %s, want %s", got, want)
	}
}

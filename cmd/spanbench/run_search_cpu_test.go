package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/cmd/spanbench/manifest"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/spanner/monitoring"
)

// searchSampleWithCPU is the search sample with a cpu condition added.
func searchSampleWithCPU(t *testing.T) *manifest.Run {
	t.Helper()
	run, err := manifest.ReadFile(filepath.Join("..", "..", "config", "samples", "search-ycsb-sql.yaml"))
	if err != nil {
		t.Fatalf("reading the search sample: %v", err)
	}
	run.Workload.Load.Search.SLO = append(run.Workload.Load.Search.SLO, "cpu <= Recommended")
	return run
}

func TestSearchReadsCPUOnlyOnCloudSpannerWithACPUCondition(t *testing.T) {
	run := searchSampleWithCPU(t)
	for _, tc := range []struct {
		name string
		f    runFlags
		t    v1alpha1.TargetSpec
	}{
		{"the emulator", runFlags{}, *run.Target},
		{"an emulator named with --spanner", runFlags{spanner: true}, *run.Target},
	} {
		cpu, closeFn, err := stepCPUReader(context.Background(), &tc.f, tc.t, &run.Workload)
		if err != nil || cpu != nil {
			t.Errorf("%s: reader %v, error %v; want none: the emulator reports no CPU, the condition stays not measured", tc.name, cpu, err)
		}
		if closeFn != nil {
			closeFn()
		}
	}
	noCPU := searchSampleWithCPU(t)
	noCPU.Workload.Load.Search.SLO = noCPU.Workload.Load.Search.SLO[:len(noCPU.Workload.Load.Search.SLO)-1]
	spanner := *run.Target
	spanner.EmulatorHost = ""
	cpu, _, err := stepCPUReader(context.Background(), &runFlags{spanner: true, monitoringEndpoint: monitoring.CloudDefault}, spanner, &noCPU.Workload)
	if err != nil || cpu != nil {
		t.Errorf("Cloud Spanner without a cpu condition: reader %v, error %v; want none", cpu, err)
	}
}

func TestSearchWithCPUCountsEachStepsWaitInItsWorstCase(t *testing.T) {
	run := searchSampleWithCPU(t)
	plan, err := newSearchSteps(engine.Config{}, &run.Workload, nil)
	if err != nil {
		t.Fatalf("planning the sample: %v", err)
	}
	steps := plan.search.MaxSteps()
	// Room for every step, and every step's wait but one second.
	reader := &monitoring.StepCPU{}
	fits := time.Duration(steps) * plan.geo.PerStep
	run.Workload.Duration = &metav1.Duration{Duration: fits + time.Duration(steps)*reader.MaxWait() - time.Second}
	if _, err := newSearchSteps(engine.Config{}, &run.Workload, nil); err != nil {
		t.Fatalf("without reading CPU, %d steps of %s fit in %s: %v", steps, plan.geo.PerStep, run.Workload.Duration.Duration, err)
	}
	_, err = newSearchSteps(engine.Config{}, &run.Workload, reader)
	if err == nil || !strings.Contains(err.Error(), "workload.load.search.stepDuration") || !strings.Contains(err.Error(), "up to 3m0s waiting after it for Cloud Monitoring's CPU minutes") {
		t.Errorf("reading each step's CPU, %d steps of %s and a 3m wait in %s: error %v; want a refusal naming load.search.stepDuration and the wait",
			steps, plan.geo.PerStep, run.Workload.Duration.Duration, err)
	}
	run.Workload.Duration.Duration += time.Second
	if _, err := newSearchSteps(engine.Config{}, &run.Workload, reader); err != nil {
		t.Errorf("with room for every step and its wait: %v", err)
	}
}

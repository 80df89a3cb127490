package controllers

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// Limits are the operator's cost guardrails, set by the manager's flags. A
// run asking for more is refused (Succeeded=False, reason LimitExceeded)
// before anything is created for it, Spanner instance included. The API
// server cannot check them at admission: CEL rules do not know the flags.
type Limits struct {
	// MaxRunners caps spec.runners.replicas, and the loader pods
	// (spec.workload.dataset.loaderPods).
	MaxRunners int32
	// MaxDuration caps the workload's duration.
	MaxDuration time.Duration
	// MaxProcessingUnits caps the instance size a run may name (1 node =
	// 1000).
	MaxProcessingUnits int32
	// AllowedInstanceConfigs are the instance configurations an Ephemeral
	// instance may use, by ID (asia1, regional-asia-northeast1); empty
	// allows any.
	AllowedInstanceConfigs []string
	// MaxEphemeralDuration caps how long an Ephemeral instance can live:
	// the run's worst case, its workload's duration plus every stage
	// deadline (prepare, load, runnersReady, overrun, aggregate), since the
	// instance is deleted at the latest when a deadline fails the run.
	MaxEphemeralDuration time.Duration
}

// check returns why a run exceeds the guardrails, or "".
func (l Limits) check(run *v1alpha1.BenchmarkRun) string {
	in := run.Spec.Target.Instance
	switch {
	case l.MaxRunners > 0 && run.Replicas() > l.MaxRunners:
		return fmt.Sprintf("spec.runners.replicas %d exceeds the operator's limit of %d (--max-runners)", run.Replicas(), l.MaxRunners)
	case l.MaxRunners > 0 && loaderPods(run) > l.MaxRunners:
		return fmt.Sprintf("spec.workload.dataset.loaderPods %d exceeds the operator's limit of %d pods (--max-runners)", loaderPods(run), l.MaxRunners)
	case l.MaxDuration > 0 && run.Spec.Workload.TotalDuration() > l.MaxDuration:
		return fmt.Sprintf("the workload runs %s, more than the operator's limit of %s (--max-duration)", run.Spec.Workload.TotalDuration(), l.MaxDuration)
	case l.MaxProcessingUnits > 0 && in.Capacity() > l.MaxProcessingUnits:
		return fmt.Sprintf("the instance's %d processing units exceed the operator's limit of %d (--max-processing-units)", in.Capacity(), l.MaxProcessingUnits)
	case in.Mode != v1alpha1.InstanceEphemeral:
		return ""
	case len(l.AllowedInstanceConfigs) > 0 && !slices.Contains(l.AllowedInstanceConfigs, configID(in.Config)):
		return fmt.Sprintf("spec.target.instance.config %s is not among the configurations the operator allows for Ephemeral instances: %s (--allowed-instance-configs)",
			in.Config, strings.Join(l.AllowedInstanceConfigs, ", "))
	case l.MaxEphemeralDuration > 0 && ephemeralLifetime(run) > l.MaxEphemeralDuration:
		d := run.Spec.Deadlines.Resolve()
		return fmt.Sprintf("the Ephemeral instance could live %s (workload %s + deadlines prepare %s, load %s, runnersReady %s, overrun %s, aggregate %s), "+
			"more than the operator's limit of %s (--max-ephemeral-duration); shorten spec.deadlines or the workload",
			ephemeralLifetime(run), run.Spec.Workload.TotalDuration(), d.Prepare, d.Load, d.RunnersReady, d.Overrun, d.Aggregate, l.MaxEphemeralDuration)
	}
	return ""
}

// ephemeralLifetime is the longest an Ephemeral instance lives: from the
// run's creation, every stage may take its whole deadline.
func ephemeralLifetime(run *v1alpha1.BenchmarkRun) time.Duration {
	d := run.Spec.Deadlines.Resolve()
	return v1alpha1.SaturatingSum(d.Prepare, d.Load, d.RunnersReady, run.Spec.Workload.TotalDuration(), d.Overrun, d.Aggregate)
}

// configID is an instance configuration's ID, from an ID or a full name
// (projects/P/instanceConfigs/ID).
func configID(config string) string {
	return config[strings.LastIndexByte(config, '/')+1:]
}

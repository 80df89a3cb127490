// Package runtest builds BenchmarkRuns for tests, fluently:
//
//	runtest.Run("r").Rate(800).Ephemeral().Obj()
//
// A test states only what its case is about; everything else is a small,
// valid YCSB run against an emulator. It lives under internal/ so that no
// product package links it.
package runtest

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// Namespace is the namespace of a built run unless InNamespace says
// otherwise.
const Namespace = "bench"

// Builder is a BenchmarkRun under construction; each method changes it and
// returns it, and Obj hands out a copy.
type Builder struct {
	run *v1alpha1.BenchmarkRun
}

// Run starts a run named name: one runner at 100 ops/s for 2 s in 1 s
// intervals, 300 rows, an Existing 1-node instance on the emulator at
// localhost:9010.
func Run(name string) *Builder {
	rows, rate, replicas, nodes := int64(300), int32(100), int32(1), int32(1)
	return &Builder{run: &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, UID: types.UID("uid-" + name), Generation: 1},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{Project: "spanbench-test", Database: "bench", EmulatorHost: "localhost:9010",
				Instance: v1alpha1.InstanceSpec{Name: "bench", Config: "regional-asia-northeast1", Nodes: &nodes}},
			Workload: v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadYCSB, Dataset: v1alpha1.DatasetSpec{Rows: &rows},
				Operations: []v1alpha1.OperationSpec{{Type: v1alpha1.OpRead, Weight: 1}},
				Load:       v1alpha1.LoadSpec{Rate: &rate}, Duration: &metav1.Duration{Duration: 2 * time.Second},
				// 1 s: a run must hold at least one interval (the default is 10 s).
				Interval: &metav1.Duration{Duration: time.Second}},
			Runners: v1alpha1.RunnersSpec{Replicas: &replicas},
		},
	}}
}

// InNamespace sets the run's namespace.
func (b *Builder) InNamespace(ns string) *Builder {
	b.run.Namespace = ns
	return b
}

// Created sets the run's creation time (the start of its prepare deadline).
func (b *Builder) Created(at time.Time) *Builder {
	b.run.CreationTimestamp = metav1.NewTime(at)
	return b
}

// Rate sets the run's total rate in operations per second.
func (b *Builder) Rate(opsPerSecond int32) *Builder {
	b.run.Spec.Workload.Load.Rate = &opsPerSecond
	return b
}

// Replicas sets the number of runner pods.
func (b *Builder) Replicas(n int32) *Builder {
	b.run.Spec.Runners.Replicas = &n
	return b
}

// LoaderPods sets the number of loader pods.
func (b *Builder) LoaderPods(n int32) *Builder {
	b.run.Spec.Workload.Dataset.LoaderPods = &n
	return b
}

// ServiceAccount makes the pods run as the user's service account, which
// spanbench then does not create.
func (b *Builder) ServiceAccount(name string) *Builder {
	b.run.Spec.Runners.ServiceAccountName = name
	return b
}

// CloudSpanner points the run at Cloud Spanner instead of the emulator.
func (b *Builder) CloudSpanner() *Builder {
	b.run.Spec.Target.EmulatorHost = ""
	return b
}

// Ephemeral makes the run create its instance and delete it at its end.
func (b *Builder) Ephemeral() *Builder {
	b.run.Spec.Target.Instance.Mode = v1alpha1.InstanceEphemeral
	return b
}

// Finalizers sets the run's finalizers.
func (b *Builder) Finalizers(f ...string) *Builder {
	b.run.Finalizers = f
	return b
}

// Deleting marks the run as being deleted since at.
func (b *Builder) Deleting(at time.Time) *Builder {
	t := metav1.NewTime(at)
	b.run.DeletionTimestamp = &t
	return b
}

// Condition sets a status condition that changed at at, as the reconciler
// would (the phase follows).
func (b *Builder) Condition(condType string, status metav1.ConditionStatus, reason string, at time.Time) *Builder {
	b.run.SetCondition(condType, status, reason, "set by the test", at)
	return b
}

// TargetReady puts the run past preparation (phase Loading, until the
// dataset is loaded).
func (b *Builder) TargetReady(at time.Time) *Builder {
	return b.Condition(v1alpha1.ConditionTargetReady, metav1.ConditionTrue, v1alpha1.ReasonTargetAvailable, at)
}

// DatasetLoaded puts the run at the start barrier (phase
// WaitingForRunners); it implies TargetReady.
func (b *Builder) DatasetLoaded(at time.Time) *Builder {
	return b.TargetReady(at).Condition(v1alpha1.ConditionDatasetLoaded, metav1.ConditionTrue, v1alpha1.ReasonDatasetReady, at)
}

// Loading puts the run in phase Loading, with status.dataset for rows.
func (b *Builder) Loading(at time.Time) *Builder {
	b.run.Status.Dataset = &v1alpha1.DatasetStatus{Table: "usertable", Rows: *b.run.Spec.Workload.Dataset.Rows, Source: v1alpha1.DatasetLoaded}
	return b.TargetReady(at).Condition(v1alpha1.ConditionDatasetLoaded, metav1.ConditionFalse, v1alpha1.ReasonLoading, at)
}

// RunnersReady puts the run in phase Running, started at at.
func (b *Builder) RunnersReady(at time.Time) *Builder {
	b.run.Status.StartTime = &metav1.Time{Time: at}
	return b.DatasetLoaded(at).Condition(v1alpha1.ConditionRunnersReady, metav1.ConditionTrue, v1alpha1.ReasonAllRunnersReady, at)
}

// Failed ends the run with reason at at.
func (b *Builder) Failed(reason string, at time.Time) *Builder {
	b.run.MarkFailed(reason, "set by the test", at)
	return b
}

// Succeeded ends the run with results at at.
func (b *Builder) Succeeded(at time.Time) *Builder {
	b.run.MarkSucceeded(false, "set by the test", at)
	return b
}

// InstanceCreated records in status.target that spanbench created the
// run's instance.
func (b *Builder) InstanceCreated() *Builder {
	b.run.Status.Target = &v1alpha1.TargetStatus{Instance: b.run.Spec.Target.Instance.Name, Created: true, InstanceState: "READY"}
	return b
}

// Obj returns a copy of the run built so far.
func (b *Builder) Obj() *v1alpha1.BenchmarkRun {
	return b.run.DeepCopy()
}

package runtest

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/customcheck"
)

// BareBuilder is a fluent builder of BenchmarkRuns for the tests of the
// child objects' builders and guardrails: fewer defaults than Builder.
type BareBuilder struct{ run *v1alpha1.BenchmarkRun }

// Bare starts a minimal valid run "name" in namespace bench: a
// ten-minute YCSB read load against an existing instance, every runner
// setting left to its default.
func Bare(name string) *BareBuilder {
	rate := int32(100)
	return &BareBuilder{run: &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "bench", UID: "uid-1"},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{
				Project:  "my-project",
				Instance: v1alpha1.InstanceSpec{Name: "bench-instance"},
				Database: "ycsb",
			},
			Workload: v1alpha1.WorkloadSpec{
				Type:       v1alpha1.WorkloadYCSB,
				Operations: []v1alpha1.OperationSpec{{Type: v1alpha1.OpRead, Weight: 1}},
				Load:       v1alpha1.LoadSpec{Rate: &rate},
				Duration:   &metav1.Duration{Duration: 10 * time.Minute},
			},
		},
	}}
}

// Replicas sets the run's replicas.
func (b *BareBuilder) Replicas(n int32) *BareBuilder {
	b.run.Spec.Runners.Replicas = &n
	return b
}

// Credentials sets the run's credentials.
func (b *BareBuilder) Credentials(secret, key string) *BareBuilder {
	b.run.Spec.Target.Credentials = &v1alpha1.CredentialsSpec{SecretName: secret, Key: key}
	return b
}

// Runners sets the run's runners.
func (b *BareBuilder) Runners(f func(*v1alpha1.RunnersSpec)) *BareBuilder {
	f(&b.run.Spec.Runners)
	return b
}

// Deadlines sets the run's deadlines.
func (b *BareBuilder) Deadlines(runnersReady, load, overrun time.Duration) *BareBuilder {
	b.run.Spec.Deadlines = v1alpha1.DeadlinesSpec{
		RunnersReady: &metav1.Duration{Duration: runnersReady},
		Load:         &metav1.Duration{Duration: load},
		Overrun:      &metav1.Duration{Duration: overrun},
	}
	return b
}

// Obj sets the run's obj.
func (b *BareBuilder) Obj() *v1alpha1.BenchmarkRun {
	if errs := customcheck.Run(b.run); len(errs) > 0 {
		panic("test run is invalid: " + errs.ToAggregate().Error())
	}
	return b.run
}

// Ephemeral sets the run's ephemeral.
func (b *BareBuilder) Ephemeral(config string, nodes int32) *BareBuilder {
	b.run.Spec.Target.Instance = v1alpha1.InstanceSpec{Name: "eph", Mode: v1alpha1.InstanceEphemeral, Config: config, Nodes: ptr.To(nodes)}
	return b
}

package benchmarkrun_test

import (
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/runtest"
)

// TestReconcileRefusesRunsOutsideTheAllowlists: a run beyond the dataset
// caps or outside the project, image, toleration and node-selector
// allowlists fails with LimitExceeded, naming the field and the flag,
// before Spanner is called or any Job exists. The reconciler runs on a
// fake API server (the limits are the manager's, not the schema's).
func TestReconcileRefusesRunsOutsideTheAllowlists(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(*v1alpha1.BenchmarkRun)
	}{
		{"too many rows on an Existing instance", "spec.workload.dataset.rows 2000000 exceeds the operator's limit of 1000000 rows (--max-dataset-rows)",
			func(r *v1alpha1.BenchmarkRun) { r.Spec.Workload.Dataset.Rows = ptr.To[int64](2_000_000) }},
		{"too many bytes", "(--max-dataset-bytes)", func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Workload.Dataset.Rows, r.Spec.Workload.Dataset.FieldBytes = ptr.To[int64](1_000_000), ptr.To[int32](1000)
		}},
		{"an image not on the list", "spec.runners.image evil.example/x:1 is not among the runner images the operator allows: spanbench:test (--allowed-runner-images",
			func(r *v1alpha1.BenchmarkRun) { r.Spec.Runners.Image = "evil.example/x:1" }},
		{"a toleration of every taint", "spec.runners.tolerations[0] has no key", func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Runners.Tolerations = []v1alpha1.Toleration{{Operator: "Exists"}}
		}},
		{"a control-plane toleration", "spec.runners.tolerations[0].key node-role.kubernetes.io/control-plane", func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Runners.Tolerations = []v1alpha1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: "Exists", Effect: "NoSchedule"}}
		}},
		{"a control-plane node selector", "spec.runners.nodeSelector key node-role.kubernetes.io/control-plane", func(r *v1alpha1.BenchmarkRun) {
			r.Spec.Runners.NodeSelector = map[string]v1alpha1.LabelValue{"node-role.kubernetes.io/control-plane": ""}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := runtest.Run("r").Created(t0).Obj()
			tc.edit(run)
			f := newFakeReconcile(t, interceptor.Funcs{}, run)
			if _, err := f.reconcile(run); err != nil {
				t.Fatal(err)
			}
			got := f.run(run)
			wantCondition(t, got, v1alpha1.ConditionSucceeded, "False", v1alpha1.ReasonLimitExceeded)
			if c := condition(got, v1alpha1.ConditionSucceeded); c == nil || !strings.Contains(c.Message, tc.want) {
				t.Errorf("message %+v; want it to say %q", c, tc.want)
			}
			if n := f.spanner.count("Instance") + f.spanner.count("Prepare"); n != 0 {
				t.Errorf("%d Spanner calls for a refused run", n)
			}
			var jobs batchv1.JobList
			if err := f.stored.List(t.Context(), &jobs, client.InNamespace(run.Namespace)); err != nil || len(jobs.Items) != 0 {
				t.Errorf("Jobs of a refused run: %d (%v)", len(jobs.Items), err)
			}
		})
	}

	// The same run within every allowlist proceeds to the target.
	run := runtest.Run("ok").Created(t0).Obj()
	run.Spec.Runners.Image = "spanbench:test"
	run.Spec.Runners.Tolerations = []v1alpha1.Toleration{{Key: "dedicated", Value: "bench"}}
	run.Spec.Runners.NodeSelector = map[string]v1alpha1.LabelValue{"disk": "ssd"}
	f := newFakeReconcile(t, interceptor.Funcs{}, run)
	if _, err := f.reconcile(run); err != nil {
		t.Fatal(err)
	}
	if c := condition(f.run(run), v1alpha1.ConditionSucceeded); c != nil && c.Reason == v1alpha1.ReasonLimitExceeded {
		t.Errorf("a run within the allowlists was refused: %s", c.Message)
	}
	if f.spanner.count("Instance") != 1 {
		t.Errorf("a run within the allowlists did not reach the target (Instance calls %d)", f.spanner.count("Instance"))
	}
}

// TestReconcileCreatesNoJobBeyondTheGuardrails: a run past its prepare
// stage (as when the manager restarts with tighter flags) whose image is
// not on the list fails with LimitExceeded when its loader or runner Job
// would be created, and no Job is.
func TestReconcileCreatesNoJobBeyondTheGuardrails(t *testing.T) {
	for name, run := range map[string]*v1alpha1.BenchmarkRun{
		"loader Job": runtest.Run("load").Created(t0).TargetReady(t0).Loading(t0).Obj(),
		"runner Job": runtest.Run("bench").Created(t0).TargetReady(t0).DatasetLoaded(t0).Obj(),
	} {
		t.Run(name, func(t *testing.T) {
			run.Spec.Runners.Image = "evil.example/x:1"
			f := newFakeReconcile(t, interceptor.Funcs{}, run)
			if _, err := f.reconcile(run); err != nil {
				t.Fatal(err)
			}
			got := f.run(run)
			wantCondition(t, got, v1alpha1.ConditionSucceeded, "False", v1alpha1.ReasonLimitExceeded)
			var jobs batchv1.JobList
			if err := f.stored.List(t.Context(), &jobs, client.InNamespace(run.Namespace)); err != nil || len(jobs.Items) != 0 {
				t.Errorf("%d Jobs created with an image the manager refuses (%v)", len(jobs.Items), err)
			}
		})
	}
}

package children

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/runner/protocol"
)

func TestNewControlConfigMap(t *testing.T) {
	tests := []struct {
		name string
		run  *v1alpha1.BenchmarkRun
	}{
		{name: "a minimal run", run: runtest.Bare("nightly").Obj()},
		{name: "a run with credentials, three runners and a region", run: runtest.Bare("nightly").Replicas(3).Credentials("spanner-key", "sa.json").
			Runners(func(r *v1alpha1.RunnersSpec) { r.Region = "asia-northeast1" }).Obj()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := tc.run
			w := run.Spec.Workload
			w = w.Resolved()
			c := protocol.Control{
				Run: run.Name, Namespace: run.Namespace, Shards: int(run.Replicas()),
				Target: run.Spec.Target, Workload: w, Region: RunnerRegion(run),
			}
			callerCredentials := c.Target.Credentials

			got, err := NewControlConfigMap(run, c)
			if err != nil {
				t.Fatalf("NewControlConfigMap: %v", err)
			}

			want := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
				Name: "nightly-control", Namespace: "bench", Labels: builderRunLabels("nightly"),
			}}
			if diff := cmp.Diff(want.ObjectMeta, got.ObjectMeta); diff != "" {
				t.Errorf("control ConfigMap metadata (-want +got):\n%s", diff)
			}
			if len(got.Data) != 1 || got.BinaryData != nil || got.Immutable != nil {
				t.Errorf("control ConfigMap holds %d data keys, binaryData %v, immutable %v; want only %s, mutable (the start time comes later)",
					len(got.Data), got.BinaryData, got.Immutable, protocol.KeyControl)
			}

			var decoded protocol.Control
			if err := json.Unmarshal([]byte(got.Data[protocol.KeyControl]), &decoded); err != nil {
				t.Fatalf("data[%s] is not a control document: %v", protocol.KeyControl, err)
			}
			wantControl := c
			wantControl.Target.Credentials = nil
			wantControl.Version = protocol.Version
			if diff := cmp.Diff(wantControl, decoded); diff != "" {
				t.Errorf("data[%s] decoded (-want +got):\n%s", protocol.KeyControl, diff)
			}
			if c.Target.Credentials != callerCredentials {
				t.Errorf("NewControlConfigMap changed the caller's Control.Target.Credentials")
			}
		})
	}
}

// The Control document names the target; a reference to the credentials
// Secret has no business in a ConfigMap every runner (and anyone who can
// read ConfigMaps in the namespace) can read.
func TestNewControlConfigMapDropsTheCredentialsReference(t *testing.T) {
	run := runtest.Bare("r").Credentials("very-secret-name", "very-secret-key.json").Obj()
	cm, err := NewControlConfigMap(run, protocol.Control{Run: run.Name, Namespace: run.Namespace, Shards: 1, Target: run.Spec.Target})
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"very-secret-name", "very-secret-key.json", "credentials"} {
		if strings.Contains(cm.Data[protocol.KeyControl], leak) {
			t.Errorf("data[%s] mentions %q: %s", protocol.KeyControl, leak, cm.Data[protocol.KeyControl])
		}
	}
}

func TestNewShardConfigMap(t *testing.T) {
	run := runtest.Bare("nightly").Replicas(3).Obj()
	for i, wantName := range []string{"nightly-shard-0", "nightly-shard-1", "nightly-shard-2"} {
		labels := builderRunLabels("nightly")
		labels["bench.spanbench.io/shard"] = []string{"0", "1", "2"}[i]
		want := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: wantName, Namespace: "bench", Labels: labels}}
		if diff := cmp.Diff(want, NewShardConfigMap(run, i)); diff != "" {
			t.Errorf("NewShardConfigMap(run, %d) (-want +got):\n%s", i, diff)
		}
	}
}

// The shard label is added to a fresh map each time: adding it must not
// leak into the run's labels of other children.
func TestNewShardConfigMapDoesNotShareLabels(t *testing.T) {
	run := runtest.Bare("r").Replicas(2).Obj()
	a, b := NewShardConfigMap(run, 0), NewShardConfigMap(run, 1)
	if a.Labels[protocol.LabelShard] != "0" || b.Labels[protocol.LabelShard] != "1" {
		t.Errorf("shard labels: %q and %q, want 0 and 1", a.Labels[protocol.LabelShard], b.Labels[protocol.LabelShard])
	}
	if _, ok := v1alpha1.RunLabels(run)[protocol.LabelShard]; ok {
		t.Errorf("v1alpha1.RunLabels gained the shard label")
	}
}

func TestNewLoaderConfigMap(t *testing.T) {
	run := runtest.Bare("nightly").Obj()
	got := NewLoaderConfigMap(run, 4)
	want := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "nightly-load-4", Namespace: "bench", Labels: builderRunLabels("nightly")}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NewLoaderConfigMap (-want +got):\n%s", diff)
	}
}

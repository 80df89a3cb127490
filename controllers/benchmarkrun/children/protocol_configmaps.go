package children

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/runner/protocol"
)

// The ConfigMaps the controller shares with the run's pods (package
// protocol has their content): it creates them all, so that the pods'
// Role can name every object they may touch.

// NewControlConfigMap builds the run's control ConfigMap, the one channel
// through which the controller tells every loader and runner what to do.
// It carries the resolved Control (protocol.EncodeControl, which leaves
// the credentials out); the start time is added later, once all shards
// are ready, so the map is not immutable.
func NewControlConfigMap(run *v1alpha1.BenchmarkRun, c protocol.Control) (*corev1.ConfigMap, error) {
	doc, err := protocol.EncodeControl(c)
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      protocol.ControlConfigMapName(run.Name),
			Namespace: run.Namespace,
			Labels:    v1alpha1.RunLabels(run),
		},
		Data: map[string]string{protocol.KeyControl: doc},
	}, nil
}

// NewShardConfigMap builds runner i's shard ConfigMap, empty. The controller
// creates it, rather than the runner, so that the runners' Role can name
// every object they may write (resourceNames) and needs no create verb; the
// shard label lets the controller list a run's shards in index order.
func NewShardConfigMap(run *v1alpha1.BenchmarkRun, i int) *corev1.ConfigMap {
	labels := v1alpha1.RunLabels(run)
	labels[protocol.LabelShard] = protocol.ShardLabelValue(i)
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      protocol.ShardConfigMapName(run.Name, i),
			Namespace: run.Namespace,
			Labels:    labels,
		},
	}
}

// NewLoaderConfigMap builds loader i's ConfigMap, empty, for the same
// reasons as NewShardConfigMap.
func NewLoaderConfigMap(run *v1alpha1.BenchmarkRun, i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      protocol.LoaderConfigMapName(run.Name, i),
			Namespace: run.Namespace,
			Labels:    v1alpha1.RunLabels(run),
		},
	}
}

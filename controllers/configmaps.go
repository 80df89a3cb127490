package controllers

import (
	"encoding/json"
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/pod"
)

// newControlConfigMap builds the run's control ConfigMap, the one channel
// through which the controller tells every runner what to do (see package
// shard for the protocol). It carries the resolved Control as JSON under
// pod.KeyControl; the start time is added later, once all shards are
// ready, so the map is not immutable.
//
// Control.Target is written without its credentials reference even when the
// caller left one in: runners get the key file only through the Secret
// volume of their pod, and a ConfigMap is readable far more widely than a
// Secret.
func newControlConfigMap(run *v1alpha1.BenchmarkRun, c pod.Control) (*corev1.ConfigMap, error) {
	c.Target.Credentials = nil // c is a copy; the caller's value is untouched
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encoding the control document of run %s: %w", run.Name, err)
	}
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      pod.ControlConfigMapName(run.Name),
			Namespace: run.Namespace,
			Labels:    v1alpha1.RunLabels(run),
		},
		Data: map[string]string{pod.KeyControl: string(b)},
	}, nil
}

// newShardConfigMap builds runner i's shard ConfigMap, empty. The controller
// creates it, rather than the runner, so that the runners' Role can name
// every object they may write (resourceNames) and needs no create verb; the
// shard label lets the controller list a run's shards in index order.
func newShardConfigMap(run *v1alpha1.BenchmarkRun, i int) *corev1.ConfigMap {
	labels := v1alpha1.RunLabels(run)
	labels[pod.LabelShard] = strconv.Itoa(i)
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      pod.ShardConfigMapName(run.Name, i),
			Namespace: run.Namespace,
			Labels:    labels,
		},
	}
}

// newLoaderConfigMap builds loader i's ConfigMap, empty, for the same
// reasons as newShardConfigMap.
func newLoaderConfigMap(run *v1alpha1.BenchmarkRun, i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:      pod.LoaderConfigMapName(run.Name, i),
			Namespace: run.Namespace,
			Labels:    v1alpha1.RunLabels(run),
		},
	}
}

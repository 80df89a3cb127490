package children

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/runner/protocol"
)

// RunnerServiceAccountName is the service account the run's runner pods use:
// spec.runners.serviceAccountName when the user brings one (bound to a
// Google service account with Workload Identity), else the one spanbench
// creates for the run (v1alpha1.RunnerServiceAccountName).
func RunnerServiceAccountName(run *v1alpha1.BenchmarkRun) string {
	if sa := run.Spec.Runners.ServiceAccountName; sa != "" {
		return sa
	}
	return v1alpha1.RunnerServiceAccountName(run)
}

// runnerRoleName names the run's runner Role and RoleBinding. It matches the
// default service account's name: one name per run for the runners' identity
// and what it may do.
func runnerRoleName(run *v1alpha1.BenchmarkRun) string {
	return v1alpha1.RunnerServiceAccountName(run)
}

// NewRunnerServiceAccount builds the service account spanbench creates for a
// run whose spec.runners.serviceAccountName is empty. Its token is mounted:
// the runner reads its control ConfigMap and writes its shard ConfigMap
// through the API server. Its power is only the run's runner Role.
func NewRunnerServiceAccount(run *v1alpha1.BenchmarkRun) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		ObjectMeta: metav1.ObjectMeta{
			Name:      v1alpha1.RunnerServiceAccountName(run),
			Namespace: run.Namespace,
			Labels:    v1alpha1.RunLabels(run),
		},
		AutomountServiceAccountToken: ptr.To(true),
	}
}

// NewRunnerRole builds the least-privilege Role of a run's runners and
// loaders: get on the run's control ConfigMap; get/update/patch on each of
// its shard and loader ConfigMaps; and create/patch on the names a shard's
// result chunks may take (protocol.ShardChunkNames, chunks.MaxShardChunks per
// shard), all by name. A runner stores a chunk by server-side apply, which
// the API server authorizes as create of that very name; a plain create,
// which has no name to check, stays forbidden. Nothing else: no Secrets
// (credentials reach the pod as a volume, by the kubelet), no list or
// watch (a runner polls its own maps by name), no get of a chunk (only the
// controller reads them), and nothing of any other run.
//
// A runner could in principle write another shard of the same run; RBAC
// cannot tell pods of one service account apart, and the controller treats
// shard data as untrusted input anyway (package protocol's decoders, and
// each chunk's sha256 in its shard's head).
func NewRunnerRole(run *v1alpha1.BenchmarkRun) *rbacv1.Role {
	var own, chunks []string
	for i := range int(run.Replicas()) {
		own = append(own, protocol.ShardConfigMapName(run.Name, i))
		chunks = append(chunks, protocol.ShardChunkNames(run.Name, i)...)
	}
	for i := range int(run.LoaderPods()) {
		own = append(own, protocol.LoaderConfigMapName(run.Name, i))
	}
	return &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{
			Name:      runnerRoleName(run),
			Namespace: run.Namespace,
			Labels:    v1alpha1.RunLabels(run),
		},
		Rules: []rbacv1.PolicyRule{
			{
				APIGroups:     []string{""},
				Resources:     []string{"configmaps"},
				Verbs:         []string{"get"},
				ResourceNames: []string{protocol.ControlConfigMapName(run.Name)},
			},
			{
				APIGroups:     []string{""},
				Resources:     []string{"configmaps"},
				Verbs:         []string{"get", "update", "patch"},
				ResourceNames: own,
			},
			{
				APIGroups:     []string{""},
				Resources:     []string{"configmaps"},
				Verbs:         []string{"create", "patch"},
				ResourceNames: chunks,
			},
		},
	}
}

// NewRunnerRoleBinding grants the run's runner Role to serviceAccountName
// (RunnerServiceAccountName: the user's or spanbench's) in the run's
// namespace. A user's own service account is granted the Role too: without
// it, its runners could not read their control ConfigMap.
func NewRunnerRoleBinding(run *v1alpha1.BenchmarkRun, serviceAccountName string) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{
			Name:      runnerRoleName(run),
			Namespace: run.Namespace,
			Labels:    v1alpha1.RunLabels(run),
		},
		Subjects: []rbacv1.Subject{{
			Kind:      rbacv1.ServiceAccountKind,
			Name:      serviceAccountName,
			Namespace: run.Namespace,
		}},
		RoleRef: rbacv1.RoleRef{
			APIGroup: rbacv1.GroupName,
			Kind:     "Role",
			Name:     runnerRoleName(run),
		},
	}
}

package children

import (
	"slices"
	"testing"

	"github.com/spanbench/spanbench/internal/runtest"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// TestRunnerJobNamesTheResultsBucket: with a results bucket the runners
// get its URL and the run's UID, and of a file:// bucket's volume only
// their run's directory, mounted where it is in the bucket's; without one, neither flag nor volume (the ConfigMap
// store, as before).
func TestRunnerJobNamesTheResultsBucket(t *testing.T) {
	run := runtest.Bare("r").Obj()
	hostPath := &corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/spanbench-results"}}
	for name, c := range map[string]struct {
		store     ResultsStore
		wantArgs  []string
		wantMount *corev1.VolumeMount
	}{
		"none": {},
		"gs":   {store: ResultsStore{URL: "gs://results"}, wantArgs: []string{"--results-bucket", "gs://results", "--run-uid", "uid-1"}},
		"file": {store: ResultsStore{URL: "file:///results", Volume: hostPath, MountPath: "/results"},
			wantArgs: []string{"--results-bucket", "file:///results", "--run-uid", "uid-1"},
			// Only the run's own directory, at its place under the bucket's.
			wantMount: &corev1.VolumeMount{Name: resultsVolume, MountPath: "/results/" + run.Namespace + "/r/uid-1", SubPath: run.Namespace + "/r/uid-1"}},
	} {
		job := NewRunnerJob(run, RunnerConfig{Image: "img", Results: c.store})
		pod := job.Spec.Template.Spec
		args := pod.Containers[0].Args
		i := slices.Index(args, "--results-bucket")
		var got []string
		if i >= 0 {
			got = args[i:]
		}
		if diff := cmp.Diff(c.wantArgs, got); diff != "" {
			t.Errorf("%s: the runner's results flags (-want +got):\n%s", name, diff)
		}
		var mount *corev1.VolumeMount
		for _, m := range pod.Containers[0].VolumeMounts {
			if m.Name == resultsVolume {
				mount = &m
			}
		}
		if diff := cmp.Diff(c.wantMount, mount); diff != "" {
			t.Errorf("%s: the results volume's mount (-want +got):\n%s", name, diff)
		}
		hasVolume := slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool { return v.Name == resultsVolume && v.HostPath != nil })
		if hasVolume != (c.wantMount != nil) {
			t.Errorf("%s: the pod has the results volume: %v; want %v", name, hasVolume, c.wantMount != nil)
		}
	}
}

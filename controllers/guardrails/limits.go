package guardrails

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/workload"
)

// Limits are the operator's cost and placement guardrails, set by the
// manager's flags. A run asking for more is refused (Succeeded=False,
// reason LimitExceeded) before anything is created for it, Spanner
// instance and Jobs included. The API server cannot check them at
// admission: CEL rules do not know the flags. The zero value of a field
// applies no limit; the manager's flags set restrictive defaults.
type Limits struct {
	// MaxRunners caps spec.runners.replicas, and the loader pods
	// (spec.workload.dataset.loaderPods).
	MaxRunners int32
	// MaxDuration caps the workload's duration.
	MaxDuration time.Duration
	// MaxProcessingUnits caps the instance size a run may name (1 node =
	// 1000).
	MaxProcessingUnits int32
	// MaxDatasetRows caps the rows a run preloads
	// (spec.workload.dataset.rows, resolved), whatever its instance: an
	// Existing instance counts as 0 processing units, so only this and
	// MaxDatasetBytes bound what it is asked to store.
	MaxDatasetRows int64
	// MaxDatasetBytes caps the dataset's estimated size
	// (workload.DatasetBytes: rows × the workload's row size).
	MaxDatasetBytes int64
	// AllowedProjects are the Google Cloud projects a run on Cloud Spanner
	// may name (spec.target.project), compared exactly; empty allows any.
	// Runs on an emulator are not checked: their project is a name inside
	// the emulator, which the emulator allowlist already guards.
	AllowedProjects []string
	// RunnerImages are the images a run may name (spec.runners.image); nil
	// allows any. The manager puts its own --runner-image on the list.
	RunnerImages ImageAllowlist
	// TolerationKeys are the taint keys runs may tolerate
	// (spec.runners.tolerations[].key); nil allows any toleration.
	TolerationKeys KeyAllowlist
	// AllowEveryTaint admits a toleration without a key (operator Exists:
	// every taint, the control plane's included) when TolerationKeys is
	// set.
	AllowEveryTaint bool
	// NodeSelectorKeys are the label keys runs may select nodes by
	// (spec.runners.nodeSelector); nil allows any. spec.runners.region and
	// zone (the topology labels) are not checked.
	NodeSelectorKeys KeyAllowlist
	// AllowedInstanceConfigs are the instance configurations an Ephemeral
	// instance may use, by ID (asia1, regional-asia-northeast1), compared
	// exactly; empty allows any.
	AllowedInstanceConfigs []string
	// MaxEphemeralDuration caps how long an Ephemeral instance can live:
	// the run's worst case, its workload's duration plus every stage
	// deadline (prepare, load, runnersReady, overrun, aggregate), since the
	// instance is deleted at the latest when a deadline fails the run.
	MaxEphemeralDuration time.Duration
}

// Check returns why a run exceeds the guardrails, or "". Each message
// names the field and the flag.
func (l Limits) Check(run *v1alpha1.BenchmarkRun) string {
	for _, c := range []func(*v1alpha1.BenchmarkRun) string{l.checkSize, l.checkDataset, l.checkPlacement, l.checkTarget, l.checkEphemeral} {
		if msg := c(run); msg != "" {
			return msg
		}
	}
	return ""
}

// checkSize holds the run to the pod, duration and instance-size caps.
func (l Limits) checkSize(run *v1alpha1.BenchmarkRun) string {
	in := run.Spec.Target.Instance
	switch {
	case l.MaxRunners > 0 && run.Replicas() > l.MaxRunners:
		return fmt.Sprintf("spec.runners.replicas %d exceeds the operator's limit of %d (--max-runners)", run.Replicas(), l.MaxRunners)
	case l.MaxRunners > 0 && run.LoaderPods() > l.MaxRunners:
		return fmt.Sprintf("spec.workload.dataset.loaderPods %d exceeds the operator's limit of %d pods (--max-runners)", run.LoaderPods(), l.MaxRunners)
	case l.MaxDuration > 0 && run.Spec.Workload.TotalDuration() > l.MaxDuration:
		return fmt.Sprintf("the workload runs %s, more than the operator's limit of %s (--max-duration)", run.Spec.Workload.TotalDuration(), l.MaxDuration)
	case l.MaxProcessingUnits > 0 && in.Capacity() > l.MaxProcessingUnits:
		return fmt.Sprintf("the instance's %d processing units exceed the operator's limit of %d (--max-processing-units)", in.Capacity(), l.MaxProcessingUnits)
	}
	return ""
}

// checkDataset caps the dataset's rows and estimated bytes.
func (l Limits) checkDataset(run *v1alpha1.BenchmarkRun) string {
	if l.MaxDatasetRows <= 0 && l.MaxDatasetBytes <= 0 {
		return ""
	}
	w := run.Spec.Workload.Resolved()
	rows, fieldBytes := *w.Dataset.Rows, *w.Dataset.FieldBytes
	if l.MaxDatasetRows > 0 && rows > l.MaxDatasetRows {
		return fmt.Sprintf("spec.workload.dataset.rows %d exceeds the operator's limit of %d rows (--max-dataset-rows)", rows, l.MaxDatasetRows)
	}
	if l.MaxDatasetBytes <= 0 {
		return ""
	}
	size, err := workload.DatasetBytes(&w, run.Spec.Target.Dialect)
	if err != nil {
		return fmt.Sprintf("spec.workload: %v; the dataset's size cannot be held to the operator's limit (--max-dataset-bytes)", err)
	}
	if size > l.MaxDatasetBytes {
		return fmt.Sprintf("the dataset's estimated size, %d bytes (spec.workload.dataset.rows %d of a %s row with fieldBytes %d), exceeds the operator's limit of %d bytes (--max-dataset-bytes); "+
			"lower spec.workload.dataset.rows or fieldBytes", size, rows, w.Type, fieldBytes, l.MaxDatasetBytes)
	}
	return ""
}

// checkPlacement holds the runner pods' image, tolerations and node
// selector to the allowlists.
func (l Limits) checkPlacement(run *v1alpha1.BenchmarkRun) string {
	rs := &run.Spec.Runners
	if rs.Image != "" && l.RunnerImages != nil && !l.RunnerImages.Allows(rs.Image) {
		return fmt.Sprintf("spec.runners.image %s is not among the runner images the operator allows: %s (--allowed-runner-images; an entry ending in '/', ':' or '@' is a prefix)",
			rs.Image, l.RunnerImages)
	}
	for i, t := range rs.Tolerations {
		switch {
		case l.TolerationKeys == nil:
		case t.Key == "" && !l.AllowEveryTaint:
			return fmt.Sprintf("spec.runners.tolerations[%d] has no key: it tolerates every taint, the control plane's included, which the operator does not allow (--allow-every-taint)", i)
		case t.Key != "" && !l.TolerationKeys.Allows(t.Key):
			return fmt.Sprintf("spec.runners.tolerations[%d].key %s is not among the taint keys the operator allows runs to tolerate: %s (--allowed-toleration-keys; control-plane keys only by exact entry)",
				i, t.Key, l.TolerationKeys)
		}
	}
	if l.NodeSelectorKeys != nil {
		keys := make([]string, 0, len(rs.NodeSelector))
		for k := range rs.NodeSelector {
			keys = append(keys, k)
		}
		slices.Sort(keys) // the same message every time
		for _, k := range keys {
			if !l.NodeSelectorKeys.Allows(k) {
				return fmt.Sprintf("spec.runners.nodeSelector key %s is not among the node labels the operator allows runs to select: %s (--allowed-node-selector-keys; control-plane keys only by exact entry)",
					k, l.NodeSelectorKeys)
			}
		}
	}
	return ""
}

// checkTarget holds a Cloud Spanner run's project to the allowlist.
func (l Limits) checkTarget(run *v1alpha1.BenchmarkRun) string {
	t := &run.Spec.Target
	if t.EmulatorHost == "" && len(l.AllowedProjects) > 0 && !slices.Contains(l.AllowedProjects, t.Project) {
		return fmt.Sprintf("spec.target.project %s is not among the projects the operator allows: %s (--allowed-projects)", t.Project, strings.Join(l.AllowedProjects, ", "))
	}
	return ""
}

// checkEphemeral holds an Ephemeral instance to the configuration
// allowlist and the lifetime cap.
func (l Limits) checkEphemeral(run *v1alpha1.BenchmarkRun) string {
	in := run.Spec.Target.Instance
	switch {
	case in.Mode != v1alpha1.InstanceEphemeral:
		return ""
	case len(l.AllowedInstanceConfigs) > 0 && !slices.Contains(l.AllowedInstanceConfigs, in.Config):
		return fmt.Sprintf("spec.target.instance.config %s is not among the configurations the operator allows for Ephemeral instances: %s (--allowed-instance-configs, compared exactly)",
			in.Config, strings.Join(l.AllowedInstanceConfigs, ", "))
	case l.MaxEphemeralDuration > 0 && EphemeralLifetime(run) > l.MaxEphemeralDuration:
		d := run.Spec.Deadlines.Resolve()
		return fmt.Sprintf("the Ephemeral instance could live %s (workload %s + deadlines prepare %s, load %s, runnersReady %s, overrun %s, aggregate %s), "+
			"more than the operator's limit of %s (--max-ephemeral-duration); shorten spec.deadlines or the workload",
			EphemeralLifetime(run), run.Spec.Workload.TotalDuration(), d.Prepare, d.Load, d.RunnersReady, d.Overrun, d.Aggregate, l.MaxEphemeralDuration)
	}
	return ""
}

// EphemeralLifetime is the longest an Ephemeral instance lives: from the
// run's creation, every stage may take its whole deadline.
func EphemeralLifetime(run *v1alpha1.BenchmarkRun) time.Duration {
	d := run.Spec.Deadlines.Resolve()
	return v1alpha1.SaturatingSum(d.Prepare, d.Load, d.RunnersReady, run.Spec.Workload.TotalDuration(), d.Overrun, d.Aggregate)
}

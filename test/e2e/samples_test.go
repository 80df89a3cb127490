//go:build e2e

package e2e

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// samplesDir holds the manifests the README tells a newcomer to apply.
const samplesDir = "config/samples"

// TestEverySampleRunSucceeds applies each BenchmarkRun of config/samples as
// the README does (`kubectl apply -f`), the file itself, into a namespace of
// its own, and requires it to succeed with every runner's result and
// without reads that found nothing. The only change is the emulator
// address, when the suite's differs from the one the samples name (as
// hack/demo.sh does for demo.yaml). The samples are already scaled for the
// emulator (20-60 s of load); they run in sampleLanes lanes, each taking
// the next sample, longest first, from one queue (so that the lanes end
// together), so that a dozen runs do not share two cores at once.
func TestEverySampleRunSucceeds(t *testing.T) {
	kustomizePassOnly(t)
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(suite.root, samplesDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in %s (%v)", samplesDir, err)
	}
	queue := sampleQueue(t, files)
	for lane := range sampleLanes {
		t.Run(fmt.Sprintf("lane%d", lane), func(t *testing.T) {
			t.Parallel()
			for file := range queue {
				t.Run(filepath.Base(file), func(t *testing.T) { runSample(t, file) })
			}
		})
	}
}

// sampleLanes is how many samples run at once: the 2 cores' emulator
// serves three short runs of the samples' modest rates.
const sampleLanes = 3

// sampleQueue holds the BenchmarkRun samples among files (campaigns have
// their own tests), longest load first.
func sampleQueue(t *testing.T, files []string) <-chan string {
	t.Helper()
	type sample struct {
		file string
		load time.Duration
	}
	var runs []sample
	for _, file := range files {
		if kind, load := sampleHead(t, file); kind == "BenchmarkRun" {
			runs = append(runs, sample{file, load})
		}
	}
	slices.SortStableFunc(runs, func(a, b sample) int { return cmp.Compare(b.load, a.load) })
	queue := make(chan string, len(runs))
	for _, r := range runs {
		queue <- r.file
	}
	close(queue)
	return queue
}

// sampleHead is the kind of a manifest file and, for a BenchmarkRun, its
// workload's duration (0 if it names none).
func sampleHead(t *testing.T, file string) (kind string, load time.Duration) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		Kind string `json:"kind"`
		Spec struct {
			Workload struct {
				Duration string `json:"duration"`
			} `json:"workload"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &head); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if d := head.Spec.Workload.Duration; d != "" {
		if load, err = time.ParseDuration(d); err != nil {
			t.Fatalf("%s: workload.duration %q: %v", file, d, err)
		}
	}
	return head.Kind, load
}

// runSample applies one BenchmarkRun sample and checks its outcome (see
// TestEverySampleRunSucceeds).
func runSample(t *testing.T, file string) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Target struct {
				EmulatorHost string `json:"emulatorHost"`
			} `json:"target"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &head); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if head.Spec.Target.EmulatorHost == "" {
		t.Fatalf("%s names no emulatorHost: on the demo cluster it would go to Cloud Spanner", file)
	}
	manifest := bytes.ReplaceAll(raw, []byte("emulatorHost: "+head.Spec.Target.EmulatorHost), []byte("emulatorHost: "+suite.emulatorHost))
	ns := newNamespace(t, "e2e-sample")
	applyManifest(t, ns, manifest)
	run := waitFinished(t, ns, head.Metadata.Name, runTimeout)
	requireSucceeded(t, run, v1alpha1.ReasonCompleted)
	if o := run.Status.Overall; o == nil || o.Count == 0 {
		t.Fatalf("%s succeeded without a successful operation: %+v", file, o)
	}
	if c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionReadsFoundNothing); c != nil {
		t.Errorf("%s: %s=%s: %s", file, c.Type, c.Status, c.Message)
	}
	t.Logf("%s: %d operations, %d not found, %d errors, %s/s", file, run.Status.Overall.Count, run.Status.Overall.NotFound,
		run.Status.Overall.Errors, run.Status.Overall.Throughput)
}

// TestEveryCampaignSampleIsAdmitted sends each BenchmarkCampaign of
// config/samples to the installed spanbench as `kubectl apply
// --dry-run=server`: the CRD's schema and CEL rules and any admission
// webhook of the install judge it, and nothing runs. Running every
// campaign sample here would cost 2-10 minutes each; one real campaign
// runs in TestCampaignOnRealPods, and test/apivalidation plans every
// sample's cells.
func TestEveryCampaignSampleIsAdmitted(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(suite.root, samplesDir, "campaign-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no campaign samples in %s (%v)", samplesDir, err)
	}
	ns := newNamespace(t, "e2e-csamples")
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		out, err := kubectlStdin(t, raw, "apply", "--dry-run=server", "-n", ns, "-f", "-")
		if err != nil {
			t.Errorf("%s: kubectl apply --dry-run=server: %v\n%s", filepath.Base(file), err, out)
			continue
		}
		if !strings.Contains(out, "benchmarkcampaign.bench.spanbench.io/") {
			t.Errorf("%s: kubectl apply --dry-run=server admitted no BenchmarkCampaign:\n%s", filepath.Base(file), out)
		}
	}
}

// applyManifest is `kubectl apply -n ns -f -` of manifest.
func applyManifest(t *testing.T, ns string, manifest []byte) {
	t.Helper()
	if out, err := kubectlStdin(t, manifest, "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
}

// kubectlStdin runs kubectl with stdin as its input, within a minute.
func kubectlStdin(t *testing.T, stdin []byte, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, suite.kubectl, append([]string{"--kubeconfig", suite.kubeconfig}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
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
// emulator (20-30 s of load); they run one after the other, so that six
// runs do not share two cores at once.
func TestEverySampleRunSucceeds(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(suite.root, samplesDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in %s (%v)", samplesDir, err)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var head struct {
			Kind     string `json:"kind"`
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
		if head.Kind != "BenchmarkRun" {
			continue // campaigns have their own tests
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
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
		})
	}
}

// applyManifest is `kubectl apply -n ns -f -` of manifest.
func applyManifest(t *testing.T, ns string, manifest []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, suite.kubectl, "--kubeconfig", suite.kubeconfig, "apply", "-n", ns, "-f", "-")
	cmd.Stdin = bytes.NewReader(manifest)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, strings.TrimSpace(string(out)))
	}
}

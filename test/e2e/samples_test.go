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
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/plan"
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
//
// The lanes are goroutines of this test, not parallel subtests: a parallel
// subtest waits for a -parallel slot behind every top-level test already
// waiting for one, and the lanes, the suite's longest work (3-5 minutes),
// then began 50-120 s into the parallel part and ended it. They start
// with this test, and hold its one slot among them (hack/e2e.sh counts
// them in its -parallel).
func TestEverySampleRunSucceeds(t *testing.T) {
	kustomizePassOnly(t)
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(suite.root, samplesDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in %s (%v)", samplesDir, err)
	}
	queue := sampleQueue(t, files)
	var lanes sync.WaitGroup
	for lane := range sampleLanes {
		lanes.Go(func() {
			t.Run(fmt.Sprintf("lane%d", lane), func(t *testing.T) {
				for file := range queue {
					t.Run(filepath.Base(file), func(t *testing.T) { runSample(t, file) })
				}
			})
		})
	}
	lanes.Wait()
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
		if searchSample(file) {
			continue
		}
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

// TestEveryCampaignSampleRuns applies each BenchmarkCampaign of
// config/samples as the README does (`kubectl apply -f`), each into a
// namespace of its own, and requires each to start as written on the demo
// cluster: an unscheduled one creates its first BenchmarkRun (so its
// template, make demo's emulator included, passed admission twice), a
// scheduled one states its next schedule time (its timeZone loaded), and
// none is Stalled. Each is deleted as soon as it has started, except the
// one with the least load (runs × duration) among those that are not
// capacity searches, whose iteration must succeed
// with a comparison and a verdict. Two changes to the file: the emulator
// address, when the suite's differs from the samples' (as for the run
// samples), and the database, one per namespace, so that a campaign's
// runs never load a database a run sample of TestEverySampleRunSucceeds
// is loading at the same time (campaign-read-vs-sql.yaml and
// ycsb-read-vs-sql.yaml both name ycsb). The quickest sample is
// campaign-write-throughput.yaml, 2 runs of 15 s.
func TestEveryCampaignSampleRuns(t *testing.T) {
	kustomizePassOnly(t)
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(suite.root, samplesDir, "campaign-*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no campaign samples in %s (%v)", samplesDir, err)
	}
	samples := make([]campaignSample, 0, len(files))
	for _, file := range files {
		samples = append(samples, readCampaignSample(t, file))
	}
	// A capacity search campaign starts and is deleted like the others,
	// but is never the one waited for (searchCampaignSample).
	waitable := slices.DeleteFunc(slices.Clone(samples), func(s campaignSample) bool { return searchCampaignSample(s.file) })
	quickest := slices.MinFunc(waitable, func(a, b campaignSample) int { return cmp.Compare(a.load, b.load) })
	applied := make([]appliedCampaign, 0, len(samples))
	for _, s := range samples {
		applied = append(applied, applyCampaignSample(t, s))
	}
	var verdict appliedCampaign
	for _, a := range applied {
		requireCampaignStarted(t, a)
		if a.file == quickest.file {
			verdict = a
			continue
		}
		deleteCampaign(t, a)
	}
	from := time.Now()
	done := waitCampaign(t, verdict.ns, verdict.name)
	t.Logf("%s: verdict %s %s after its first run started (%d runs, %s of load)", verdict.file, done.Status.Verdict,
		time.Since(from).Round(time.Second), quickest.runs, quickest.load)
	campaignRuns(t, done) // every run succeeded
}

// campaignSample is a campaign sample as TestEveryCampaignSampleRuns
// reads it.
type campaignSample struct {
	file string
	raw  []byte
	c    v1alpha1.BenchmarkCampaign
	// runs is how many runs an iteration makes; load is their summed
	// load (the workloads' total durations).
	runs int
	load time.Duration
}

func readCampaignSample(t *testing.T, file string) campaignSample {
	t.Helper()
	s := campaignSample{file: filepath.Base(file)}
	var err error
	if s.raw, err = os.ReadFile(file); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(s.raw, &s.c); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	cells, err := plan.Cells(&s.c.Spec)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	reps := s.c.Spec.RepetitionCount()
	s.runs = len(cells) * reps
	for i := range cells {
		w := cells[i].Spec.Workload.Resolved()
		s.load += time.Duration(reps) * w.TotalDuration()
	}
	return s
}

// appliedCampaign is a campaign sample applied by TestEveryCampaignSampleRuns.
type appliedCampaign struct {
	file, ns, name string
	scheduled      bool
}

// applyCampaignSample applies one campaign sample into a namespace of its
// own, pointed at the suite's emulator and at a database of the
// namespace's (see TestEveryCampaignSampleRuns).
func applyCampaignSample(t *testing.T, s campaignSample) appliedCampaign {
	t.Helper()
	tgt := s.c.Spec.Template.Spec.Target
	if tgt.EmulatorHost == "" {
		t.Fatalf("%s names no emulatorHost: on the demo cluster it would go to Cloud Spanner", s.file)
	}
	a := appliedCampaign{file: s.file, ns: newNamespace(t, "e2e-csample"), name: s.c.Name, scheduled: s.c.Spec.Schedule != ""}
	manifest := bytes.ReplaceAll(s.raw, []byte("emulatorHost: "+tgt.EmulatorHost), []byte("emulatorHost: "+suite.emulatorHost))
	database := regexp.MustCompile(`(?m)^(\s+database:) ` + regexp.QuoteMeta(tgt.Database) + `\b`)
	if !database.Match(manifest) {
		t.Fatalf("%s: no line `database: %s`", s.file, tgt.Database)
	}
	manifest = database.ReplaceAll(manifest, []byte("${1} "+strings.ReplaceAll(a.ns, "-", "_")))
	applyManifest(t, a.ns, manifest)
	return a
}

// requireCampaignStarted waits until an unscheduled campaign has created
// its first run, or a scheduled one states its next schedule time.
func requireCampaignStarted(t *testing.T, a appliedCampaign) {
	t.Helper()
	what := a.file + " to create its first run"
	if a.scheduled {
		what = a.file + " to state its next schedule time"
	}
	eventually(t, 2*time.Minute, what, func(ctx context.Context) (bool, string) {
		c := &v1alpha1.BenchmarkCampaign{}
		if err := suite.c.Get(ctx, client.ObjectKey{Namespace: a.ns, Name: a.name}, c); err != nil {
			return false, err.Error()
		}
		if stalled := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.CampaignStalled); stalled != nil && stalled.Status == metav1.ConditionTrue {
			t.Fatalf("%s is Stalled: %s: %s", a.file, stalled.Reason, stalled.Message)
		}
		if a.scheduled {
			return c.Status.NextScheduleTime != nil, describeCampaign(c)
		}
		runs := &v1alpha1.BenchmarkRunList{}
		if err := suite.c.List(ctx, runs, client.InNamespace(a.ns), client.MatchingLabels{v1alpha1.LabelCampaign: a.name}); err != nil {
			return false, err.Error()
		}
		return len(runs.Items) > 0, describeCampaign(c)
	})
}

// deleteCampaign deletes an applied campaign sample; its runs go with it.
func deleteCampaign(t *testing.T, a appliedCampaign) {
	t.Helper()
	c := &v1alpha1.BenchmarkCampaign{ObjectMeta: metav1.ObjectMeta{Namespace: a.ns, Name: a.name}}
	if err := suite.c.Delete(t.Context(), c, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil {
		t.Errorf("deleting campaign %s/%s: %v", a.ns, a.name, err)
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

// searchCampaignSample says a sample is a capacity search campaign's
// (campaign-search-*): searches of minutes each, longer than the campaign
// lane waits, so TestEveryCampaignSampleRuns requires it to start and
// deletes it, never waits for its verdict. The campaign controller's
// comparison of the capacities its runs found is tested against a fake
// API server (controllers/benchmarkcampaign/search_fake_test.go).
func searchCampaignSample(file string) bool {
	return strings.HasPrefix(filepath.Base(file), "campaign-search-")
}

// searchSample says a sample is a capacity search run's (search-*):
// TestSearchRunFindsItsCapacity runs it, scaled short; as written it
// searches for minutes, longer than the sample lanes wait.
func searchSample(file string) bool {
	return strings.HasPrefix(filepath.Base(file), "search-")
}

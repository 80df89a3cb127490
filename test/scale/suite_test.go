package scale_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/children"
	"github.com/spanbench/spanbench/controllers/guardrails"
	"github.com/spanbench/spanbench/internal/testenv"
	"github.com/spanbench/spanbench/runner/pod"
)

var (
	restConfig *rest.Config
	scheme     = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	if spec := os.Getenv(farmEnv); spec != "" {
		// Re-executed as the pod farm of a benchmark: no envtest of its own.
		os.Exit(farmMain(spec))
	}
	flag.Parse()
	if flag.Lookup("test.bench").Value.String() == "" {
		// The package holds benchmarks only: `go test ./...` (make
		// test-unit) need not start a control plane for nothing.
		os.Exit(m.Run())
	}
	crds := []string{filepath.Join("..", "..", "config", "crd", "bases")}
	os.Exit(testenv.Run(m, "scale", crds, testenv.ForManagers(&restConfig)))
}

// adminClient is an uncached client with the control plane's admin rights.
func adminClient(tb testing.TB) client.Client {
	tb.Helper()
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// newNamespace creates a namespace for one benchmark.
func newNamespace(tb testing.TB, c client.Client, prefix string) string {
	tb.Helper()
	ns := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1_000_000_000)
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		tb.Fatal(err)
	}
	return ns
}

// scaleLimits are the guardrails of the benchmarks' manager: wide enough
// for 100 runners.
func scaleLimits() guardrails.Limits {
	return guardrails.Limits{MaxRunners: 100, MaxDuration: time.Hour, MaxProcessingUnits: 5000,
		AllowedInstanceConfigs: []string{"regional-asia-northeast1"}, MaxEphemeralDuration: 3 * time.Hour,
		MaxDatasetRows: 1_000_000, MaxDatasetBytes: 1 << 30, RunnerImages: guardrails.ImageAllowlist{"spanbench:test"},
		TolerationKeys: guardrails.KeyAllowlist{"*"}, NodeSelectorKeys: guardrails.KeyAllowlist{"*"}}
}

// ownedByRuns is cmd/spanbench's cache selection (package main cannot be
// imported): pods, Jobs and ConfigMaps carrying the run label only.
func ownedByRuns() map[client.Object]cache.ByObject {
	req, err := labels.NewRequirement(v1alpha1.LabelRun, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	sel := labels.NewSelector().Add(*req)
	return map[client.Object]cache.ByObject{
		&corev1.Pod{}: {Label: sel}, &corev1.ConfigMap{}: {Label: sel}, &batchv1.Job{}: {Label: sel},
	}
}

// benchCache is cmd/spanbench's cache selection, in namespace ns only.
func benchCache(ns string) cache.Options {
	return cache.Options{ByObject: ownedByRuns(), DefaultNamespaces: map[string]cache.Config{ns: {}}}
}

// newManager builds a manager wired as cmd/spanbench wires the
// BenchmarkRun reconciler (real cache, real preparer, production start
// grace), without webhooks, campaigns or leader election. Its cache holds
// namespace ns only: the other benchmarks' runs and children stay in the
// API server (envtest deletes no namespace), and a manager that saw them
// would measure them too.
func newManager(tb testing.TB, ns string) ctrl.Manager {
	tb.Helper()
	mgr, _ := newTimedManager(tb, ns)
	return mgr
}

// newTimedManager is newManager whose reconciler's API calls (through
// its client and its API reader) are timed.
func newTimedManager(tb testing.TB, ns string) (ctrl.Manager, *apiCalls) {
	tb.Helper()
	calls := newAPICalls()
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0", Logger: logr.Discard(), Cache: benchCache(ns),
		// Each benchmark starts its own manager in this process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		tb.Fatal(err)
	}
	r := &benchmarkrun.BenchmarkRunReconciler{Client: timedClient{mgr.GetClient(), calls}, APIReader: timedReader{mgr.GetAPIReader(), calls, "apireader "}, Scheme: scheme, Recorder: mgr.GetEventRecorderFor("spanbench"),
		Clock: clock.RealClock{}, Preparer: benchmarkrun.SpannerPreparer{}, Runner: children.RunnerConfig{Image: "spanbench:test"},
		Limits: scaleLimits(), ClusterID: "envtest", Arrivals: pod.RunArrivals, ClaimNamespace: ns}
	if err := r.SetupWithManager(mgr); err != nil {
		tb.Fatal(err)
	}
	return mgr, calls
}

// start runs mgr until the benchmark ends.
func start(tb testing.TB, mgr ctrl.Manager) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			tb.Errorf("manager: %v", err)
		}
	}()
	tb.Cleanup(func() { cancel(); <-done })
}

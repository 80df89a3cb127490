package benchmarkrun_test

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/children"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/serverfigures"
	"github.com/spanbench/spanbench/controllers/guardrails"
	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/internal/emulatortest"
	"github.com/spanbench/spanbench/internal/testenv"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/spanner/emulator"
	"github.com/spanbench/spanbench/spanner/target"
)

var (
	restConfig *rest.Config
	scheme     = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	crds := []string{filepath.Join("..", "..", "config", "crd", "bases")}
	os.Exit(testenv.Run(m, "benchmarkrun", crds, testenv.ForManagers(&restConfig)))
}

// harness is one scenario: its own namespace, emulator and manager.
type harness struct {
	t      *testing.T
	c      client.Client
	ns     string
	emu    *emulator.Emulator
	cancel context.CancelFunc
	done   chan struct{}
	// instanceAdmin reads the emulator's instances (see admin).
	instanceAdmin target.InstanceAdmin
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	c, err := client.New(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, c: c, ns: fmt.Sprintf("t-%d", time.Now().UnixNano()%1_000_000_000), emu: emulatortest.Start(t)}
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: h.ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.releaseRuns) // after the manager stopped, before the emulator stops
	t.Cleanup(h.stopManager)
	return h
}

// releaseRuns strips the finalizers of the scenario's runs once its manager
// has stopped: the API server outlives the scenario, and the next
// scenario's manager must not spend its time on runs whose emulator is
// gone.
func (h *harness) releaseRuns() {
	runs := &v1alpha1.BenchmarkRunList{}
	if err := h.c.List(context.Background(), runs, client.InNamespace(h.ns)); err != nil {
		return
	}
	for i := range runs.Items {
		run := &runs.Items[i]
		if len(run.Finalizers) > 0 {
			_ = h.c.Patch(context.Background(), run, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))
		}
		_ = h.c.Delete(context.Background(), run)
	}
}

// harnessClusterID is the cluster label of the instances the scenarios'
// managers create.
const harnessClusterID = "envtest"

// defaultLimits are the guardrails of a scenario's manager.
func defaultLimits() guardrails.Limits {
	return guardrails.Limits{MaxRunners: 10, MaxDuration: time.Hour, MaxProcessingUnits: 5000,
		AllowedInstanceConfigs: []string{"regional-asia-northeast1", "asia1"}, MaxEphemeralDuration: 3 * time.Hour,
		MaxDatasetRows: 1_000_000, MaxDatasetBytes: 1 << 30, RunnerImages: guardrails.ImageAllowlist{"spanbench:test"},
		TolerationKeys: guardrails.KeyAllowlist{"*"}, NodeSelectorKeys: guardrails.KeyAllowlist{"*"}}
}

// managerOptions vary a scenario's manager.
type managerOptions struct {
	preparer benchmarkrun.TargetPreparer
	// limits replaces defaultLimits when set.
	limits *guardrails.Limits
	// sweep, when set, runs beside the reconciler; the harness fills in
	// its clients, recorder and cluster.
	sweep *benchmarkrun.InstanceSweeper
	// serverStats is the reconciler's server-statistics collection.
	serverStats serverfigures.ServerStatsConfig
	// costLimits and prices are the guardrails in money and the price
	// source; the harness gives prices the manager's API reader.
	costLimits guardrails.CostLimits
	prices     guardrails.PriceSource
	// claimNamespace holds the database claims; "" is the scenario's
	// namespace.
	claimNamespace string
}

// startManager runs a fresh manager with the real reconciler (a restart is
// stopManager then startManager).
func (h *harness) startManager(preparer benchmarkrun.TargetPreparer) {
	h.t.Helper()
	h.startManagerWith(managerOptions{preparer: preparer})
}

// startManagerWith runs a fresh manager as opts say.
func (h *harness) startManagerWith(opts managerOptions) {
	h.t.Helper()
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0", Logger: logr.Discard(),
		// Each scenario (and each restart) starts a new manager in this
		// process; controller names only need to be unique per manager.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		h.t.Fatal(err)
	}
	limits := defaultLimits()
	if opts.limits != nil {
		limits = *opts.limits
	}
	r := &benchmarkrun.BenchmarkRunReconciler{Client: mgr.GetClient(), Scheme: scheme, Recorder: mgr.GetEventRecorderFor("spanbench"),
		Clock: clock.RealClock{}, Preparer: opts.preparer, Runner: children.RunnerConfig{Image: "spanbench:test", StartupGrace: time.Second},
		Limits: limits, ClusterID: harnessClusterID, ServerStats: opts.serverStats, Arrivals: pod.RunArrivals,
		CostLimits: opts.costLimits, Prices: opts.prices, ClaimNamespace: cmp.Or(opts.claimNamespace, h.ns)}
	r.Prices.Reader = mgr.GetAPIReader()
	if err := r.SetupWithManager(mgr); err != nil {
		h.t.Fatal(err)
	}
	if sw := opts.sweep; sw != nil {
		sw.Client, sw.APIReader, sw.Recorder, sw.Cluster = mgr.GetClient(), mgr.GetAPIReader(), mgr.GetEventRecorderFor("spanbench-sweep"), harnessClusterID
		if err := mgr.Add(sw); err != nil {
			h.t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel, h.done = cancel, make(chan struct{})
	go func() {
		defer close(h.done)
		if err := mgr.Start(ctx); err != nil {
			h.t.Errorf("manager: %v", err)
		}
	}()
}

func (h *harness) stopManager() {
	if h.cancel != nil {
		h.cancel()
		<-h.done
		h.cancel = nil
	}
}

// runSpec is a small two-runner YCSB run against the harness's emulator.
func (h *harness) runSpec(name string, replicas int32) *v1alpha1.BenchmarkRun {
	return runSpecAt(h.ns, h.emu.Host(), name, replicas)
}

// runSpecAt is runSpec's run in namespace ns against the emulator at host.
func runSpecAt(ns, host, name string, replicas int32) *v1alpha1.BenchmarkRun {
	rows, rate, nodes := int64(300), int32(100), int32(1)
	return &v1alpha1.BenchmarkRun{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.BenchmarkRunSpec{
			Target: v1alpha1.TargetSpec{Project: "spanbench-test", Database: "bench", EmulatorHost: host,
				Instance: v1alpha1.InstanceSpec{Name: "bench", Config: "regional-asia-northeast1", Nodes: &nodes}},
			Workload: v1alpha1.WorkloadSpec{Type: v1alpha1.WorkloadYCSB, Dataset: v1alpha1.DatasetSpec{Rows: &rows},
				Operations: []v1alpha1.OperationSpec{
					// 1 s, not the seeds' 15 s: a loaded run's start waits for the
					// staleness bound to pass (stale reads must see the dataset),
					// and every scenario would wait that long.
					{Type: v1alpha1.OpRead, Weight: 3, Staleness: &v1alpha1.StalenessSpec{Exact: &metav1.Duration{Duration: time.Second}}},
					{Type: v1alpha1.OpUpdate, Weight: 1}},
				Load: v1alpha1.LoadSpec{Rate: &rate}, Duration: &metav1.Duration{Duration: 2 * time.Second},
				Interval: &metav1.Duration{Duration: time.Second}},
			Runners: v1alpha1.RunnersSpec{Replicas: &replicas},
			Deadlines: v1alpha1.DeadlinesSpec{RunnersReady: &metav1.Duration{Duration: 20 * time.Second},
				Overrun: &metav1.Duration{Duration: 20 * time.Second}},
		},
	}
}

// provisionWithin bounds the wait for a new run's first Job: the
// manager creates its instance and its database with the workload's
// schema first. A PostgreSQL schema is the slow one on the emulator: 4.6 s
// idle, and 72 s with the test's processes held to 7 % of a core (the
// GoogleSQL one: 0.2 s and 2.8 s), where the 20 s these waits had failed
// TestPostgreSQLCustomRunLoadsEveryTableAndRuns.
const provisionWithin = 3 * time.Minute

// kubelet stands in for the kubelet and the Job controller, which envtest
// does not run. When the run loads its dataset, it runs the real loader
// code for every index of the loader Job to its end; then, once the runner
// Job exists, the real runner code for the given indexes. Every pod acts as
// the runner service account, so the pods' RBAC is what the controller
// granted.
func (h *harness) kubelet(run *v1alpha1.BenchmarkRun, indexes ...int) *sync.WaitGroup {
	h.t.Helper()
	h.eventually("the loader or runner Job exists", provisionWithin, func() bool {
		return h.job(v1alpha1.LoaderJobName(run)) != nil || h.job(v1alpha1.RunnerJobName(run)) != nil
	})
	rc := h.podClient(run)
	// A loader Job that is still there is played (again: a finished
	// loader does nothing); one already deleted has done its work.
	if h.job(v1alpha1.RunnerJobName(run)) == nil && h.job(v1alpha1.LoaderJobName(run)) != nil {
		h.mustLoad(run)
	}
	h.eventually("the runner Job exists", 20*time.Second, func() bool { return h.job(v1alpha1.RunnerJobName(run)) != nil })
	var wg sync.WaitGroup
	for _, i := range indexes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute+run.Spec.Workload.TotalDuration())
			defer cancel()
			_ = pod.Run(ctx, rc, pod.Options{Namespace: h.ns, Run: run.Name, Index: i, PollInterval: 50 * time.Millisecond,
				ReadyTimeout: 30 * time.Second, Log: logr.Discard()})
		}()
	}
	return &wg
}

// loadDataset plays the loader Job of a run on a new database: once it
// exists, every loader runs to its end and must succeed.
func (h *harness) loadDataset(run *v1alpha1.BenchmarkRun) {
	h.t.Helper()
	h.eventually("the loader Job exists", provisionWithin, func() bool { return h.job(v1alpha1.LoaderJobName(run)) != nil })
	h.mustLoad(run)
}

// mustLoad runs every loader of the run's loader Job, which must succeed.
func (h *harness) mustLoad(run *v1alpha1.BenchmarkRun) {
	h.t.Helper()
	for i, err := range h.runLoaders(h.podClient(run), run) {
		if err != nil {
			h.t.Fatalf("loader %d of run %s failed: %v", i, run.Name, err)
		}
	}
}

// runLoaders runs every index of the run's loader Job (one per
// dataset.loaderPods) to its end, as rc, and returns their errors by index.
func (h *harness) runLoaders(rc client.Client, run *v1alpha1.BenchmarkRun) []error {
	errs := make([]error, ptr.Deref(run.Spec.Workload.Dataset.LoaderPods, v1alpha1.DefaultLoaderPods))
	var wg sync.WaitGroup
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			errs[i] = pod.Load(ctx, rc, pod.Options{Namespace: h.ns, Run: run.Name, Index: i, Log: logr.Discard()})
		}()
	}
	wg.Wait()
	return errs
}

// podClient is a client acting as the run's runner service account.
func (h *harness) podClient(run *v1alpha1.BenchmarkRun) client.Client {
	h.t.Helper()
	cfg := rest.CopyConfig(restConfig)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + h.ns + ":" + v1alpha1.RunnerServiceAccountName(run)}
	rc, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		h.t.Fatal(err)
	}
	return rc
}

// job is the Job name of the scenario's namespace, or nil.
func (h *harness) job(name string) *batchv1.Job {
	job := &batchv1.Job{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, job); err != nil {
		return nil
	}
	return job
}

// eventually waits until cond holds, looking every 100 ms, for at most
// timeout.
func (h *harness) eventually(what string, timeout time.Duration, cond func() bool) {
	h.t.Helper()
	await.Eventually(h.t, await.Poll{Within: timeout, Every: 100 * time.Millisecond}, what, await.Cond(cond))
}

// consistently checks that cond holds at every look (every 100 ms) for
// the whole window: the bounded form of "this did not happen".
func (h *harness) consistently(what string, window time.Duration, cond await.Condition) {
	h.t.Helper()
	await.Consistently(h.t, await.Poll{Within: window, Every: 100 * time.Millisecond}, what, cond)
}

// finished waits for the run to end and returns it.
func (h *harness) finished(run *v1alpha1.BenchmarkRun, timeout time.Duration) *v1alpha1.BenchmarkRun {
	h.t.Helper()
	got := &v1alpha1.BenchmarkRun{}
	h.eventually("run "+run.Name+" ends", timeout, func() bool {
		err := h.c.Get(context.Background(), client.ObjectKeyFromObject(run), got)
		return err == nil && got.IsFinished()
	})
	return got
}

func (h *harness) condition(run *v1alpha1.BenchmarkRun, t string) *metav1.Condition {
	return meta.FindStatusCondition(run.Status.Conditions, t)
}

func (h *harness) configMap(name string) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{}
	if err := h.c.Get(context.Background(), client.ObjectKey{Namespace: h.ns, Name: name}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		h.t.Fatal(err)
	}
	return cm
}

//go:build !runner

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkcampaign"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/children"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/serverfigures"
	"github.com/spanbench/spanbench/controllers/collectors"
	"github.com/spanbench/spanbench/controllers/guardrails"
	admission "github.com/spanbench/spanbench/controllers/webhook"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/monitoring"
	"github.com/spanbench/spanbench/spanner/pricing"
	"github.com/spanbench/spanbench/spanner/serverstats"
	"github.com/spanbench/spanbench/spanner/target"
)

// managerFlags are `spanbench manager`'s flags.
type managerFlags struct {
	metricsAddr, probeAddr string
	secureMetrics          bool
	leaderElect            bool
	runnerImage            string
	pullPolicy             string
	startupGrace           time.Duration
	runnerTTL              int
	keepRunners            bool
	serverStatsSettle      time.Duration
	limits                 guardrails.Limits
	costLimits             guardrails.CostLimits
	priceOverride          types.NamespacedName
	maxPU                  int
	clusterID              string
	claimsNamespace        string
	sweepProjects          []string
	sweepInterval          time.Duration
	spannerEndpoint        string
	emulators              endpoint.EmulatorAllowlist
	webhook                webhookFlags
	serverMetrics          serverMetricsFlags
	preflight              managerPreflightFlags
	results                resultsFlags
	resultsStore           children.ResultsStore
}

// Defaults of the dataset caps: far above the samples' real scales
// (10 M rows, a few GiB; 700 M Tweet rows, ~150 GB), far below what the
// API admits (10^10 rows of 10 MiB).
const (
	defaultMaxDatasetRows  = 1_000_000_000
	defaultMaxDatasetBytes = 1 << 40 // 1Ti
)

// instanceConfigID is an instance configuration's ID, as runs name it
// (spec.target.instance.config).
var instanceConfigID = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// byteQuantity parses a flag's size, a Kubernetes quantity (500Gi, 1T,
// 1000000), as whole bytes.
func byteQuantity(v string) (int64, error) {
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return 0, err
	}
	n, ok := q.AsInt64()
	if !ok || n < 0 {
		return 0, fmt.Errorf("%q: want a whole, non-negative number of bytes below 8Ei", v)
	}
	return n, nil
}

// defaultEmulatorHosts are the emulator addresses the manager may dial
// unless told otherwise: an emulator beside it on loopback, at the
// emulator's default port. The installs name their own (config/manager,
// the chart's emulatorHosts).
const defaultEmulatorHosts = "localhost:9010,127.0.0.1:9010"

func parseManagerFlags(args []string, stderr io.Writer) (*managerFlags, error) {
	f := &managerFlags{}
	fs := flag.NewFlagSet("manager", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", ":8443", "address of the metrics endpoint (controller and run results); \"0\" disables it")
	fs.BoolVar(&f.secureMetrics, "metrics-secure", true, "serve metrics over HTTPS, authenticated and authorized through the API server")
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "address of the health and readiness probes")
	fs.BoolVar(&f.leaderElect, "leader-elect", false, "elect a leader, so that only one manager replica reconciles")
	fs.StringVar(&f.runnerImage, "runner-image", "", "image of the runner pods (the manager's own image); required")
	fs.StringVar(&f.pullPolicy, "runner-image-pull-policy", "IfNotPresent", "pull policy of the runner image")
	fs.DurationVar(&f.startupGrace, "startup-grace", benchmarkrun.DefaultStartupGrace, "how far ahead the common start time is published once every runner is ready")
	fs.IntVar(&f.runnerTTL, "runner-ttl-seconds", -1, "keep finished runner Jobs this long (-1: until deleted with the run)")
	fs.BoolVar(&f.keepRunners, "keep-runners", false, "keep runner Jobs and pods after a run ends, for debugging")
	fs.DurationVar(&f.serverStatsSettle, "server-stats-settle", serverstats.DefaultSettle,
		"how long after a run's last statistics minute closes Spanner's SPANNER_SYS statistics of the run are read (docs/server-stats.md)")
	var maxRunners int
	fs.IntVar(&maxRunners, "max-runners", 100, "refuse runs with more runner pods, or more loader pods (0: no limit)")
	fs.DurationVar(&f.limits.MaxDuration, "max-duration", 24*time.Hour, "refuse runs whose load lasts longer (0: no limit)")
	fs.IntVar(&f.maxPU, "max-processing-units", 10000, "refuse runs whose instance has more processing units, 1 node = 1000 (0: no limit)")
	fs.Func("allowed-instance-configs", "comma-separated instance configurations Ephemeral instances may use, such as regional-asia-northeast1,asia1 (default: any)", func(v string) error {
		f.limits.AllowedInstanceConfigs = splitList(v)
		for _, c := range f.limits.AllowedInstanceConfigs {
			if !instanceConfigID.MatchString(c) {
				return fmt.Errorf("%q is not an instance configuration ID (asia1, not projects/P/instanceConfigs/asia1): runs name IDs, compared exactly", c)
			}
		}
		return nil
	})
	fs.DurationVar(&f.limits.MaxEphemeralDuration, "max-ephemeral-duration", 8*time.Hour,
		"refuse Ephemeral runs whose instance could live longer: the workload's duration plus every stage deadline (0: no limit)")
	fs.Int64Var(&f.limits.MaxDatasetRows, "max-dataset-rows", defaultMaxDatasetRows, "refuse runs whose dataset has more rows, on any instance (0: no limit)")
	f.limits.MaxDatasetBytes = defaultMaxDatasetBytes
	fs.Func("max-dataset-bytes", "refuse runs whose dataset's estimated size (rows x the workload's row size) is larger, a quantity such as 500Gi (0: no limit; default 1Ti)",
		func(v string) (err error) {
			f.limits.MaxDatasetBytes, err = byteQuantity(v)
			return err
		})
	fs.Func("max-run-cost", "refuse runs whose estimated cost, from the price catalog, is above this amount, such as 25 or \"USD 25\" "+
		"(in the catalog's currency unless one is given); a run whose cost cannot be estimated is refused too (default: no cap)", costLimit(&f.costLimits.MaxRunCost))
	fs.Func("max-iteration-cost", "refuse a campaign iteration whose estimated cost, every run it starts, is above this amount, as --max-run-cost (default: no cap)",
		costLimit(&f.costLimits.MaxIterationCost))
	fs.Func("max-monthly-cost", "refuse at admission a campaign whose projected cost for 30 days at its schedule is above this amount, as --max-run-cost (default: no cap)",
		costLimit(&f.costLimits.MaxMonthlyCost))
	fs.Func("price-catalog-configmap", "NAMESPACE/NAME of a ConfigMap whose key "+guardrails.PriceOverrideKey+" overrides the embedded price catalog (docs/cost.md); "+
		"read for each run: a missing or invalid override fails the run before anything is created (default: the embedded catalog)", namespacedName(&f.priceOverride))
	fs.Func("allowed-projects", "comma-separated Google Cloud projects runs on Cloud Spanner may name, compared exactly (default: any)", func(v string) error {
		f.limits.AllowedProjects = splitList(v)
		return nil
	})
	var runnerImages []string
	fs.Func("allowed-runner-images", "comma-separated images runs may name in spec.runners.image besides --runner-image: exact, or a prefix ending in '/', ':' or '@' (default: none)", func(v string) error {
		runnerImages = splitList(v)
		return nil
	})
	tolerationKeys, nodeSelectorKeys := "*", "*"
	fs.StringVar(&tolerationKeys, "allowed-toleration-keys", tolerationKeys, "comma-separated taint keys runs may tolerate: exact, a prefix ending in '/', or * for any; "+
		"the control plane's keys only by exact entry (empty: none)")
	fs.BoolVar(&f.limits.AllowEveryTaint, "allow-every-taint", false, "admit tolerations without a key, which tolerate every taint, the control plane's included")
	fs.StringVar(&nodeSelectorKeys, "allowed-node-selector-keys", nodeSelectorKeys, "comma-separated node label keys runs may select: exact, a prefix ending in '/', or * for any; "+
		"the control plane's keys only by exact entry (empty: none)")
	fs.StringVar(&f.clusterID, "cluster-id", "", "this cluster's name in the labels of the instances it creates, so that the orphan sweeps of several clusters sharing a project never delete each other's (default: the kube-system namespace's UID)")
	fs.StringVar(&f.claimsNamespace, "database-claims-namespace", "spanbench-system", "the namespace of the Leases by which runs claim their databases, "+
		"one run per database cluster-wide: the manager's own (docs/benchmarkrun.md)")
	fs.Func("sweep-projects", "comma-separated Google Cloud projects whose orphaned spanbench instances are deleted even when no run names them", func(v string) error {
		f.sweepProjects = splitList(v)
		return nil
	})
	fs.DurationVar(&f.sweepInterval, "sweep-interval", benchmarkrun.DefaultSweepInterval, "how often to look for instances whose run is gone (0: never)")
	fs.StringVar(&f.spannerEndpoint, "spanner-endpoint", "", "host:port of the Cloud Spanner API the manager calls for runs that name no emulator, such as a regional endpoint "+
		"or a Private Service Connect address (default: "+endpoint.CloudDefault+")")
	emulatorHosts := fs.String("allowed-emulator-hosts", defaultEmulatorHosts, "comma-separated host:port addresses of the Cloud Spanner emulators "+
		"the manager may dial for runs that name one (spec.target.emulatorHost), compared exactly; a run naming another fails with reason "+
		v1alpha1.ReasonEndpointNotAllowed+", undialed (empty: none)")
	f.webhook.Secret = types.NamespacedName{Namespace: "spanbench-system", Name: "spanbench-webhook-cert"}
	f.webhook.Service = types.NamespacedName{Namespace: "spanbench-system", Name: "spanbench-webhook"}
	fs.BoolVar(&f.webhook.enabled, "webhook", true, "serve the BenchmarkCampaign admission webhook (false: no webhook server; remove the install's ValidatingWebhookConfiguration too)")
	fs.IntVar(&f.webhook.Port, "webhook-port", 9443, "port of the webhook server")
	fs.StringVar(&f.webhook.CertDir, "webhook-cert-dir", "", "serve the webhook with tls.crt and tls.key from this directory, kept by something else such as cert-manager "+
		"(default: a self-signed CA and certificate the manager keeps in --webhook-secret)")
	fs.Func("webhook-secret", "NAMESPACE/NAME of the Secret holding the webhook's CA and certificate (default spanbench-system/spanbench-webhook-cert)", namespacedName(&f.webhook.Secret))
	fs.Func("webhook-service", "NAMESPACE/NAME of the webhook's Service, which the serving certificate names (default spanbench-system/spanbench-webhook)", namespacedName(&f.webhook.Service))
	fs.StringVar(&f.webhook.Configuration, "webhook-configuration", "spanbench-validating-webhook", "the ValidatingWebhookConfiguration whose webhooks get the CA as caBundle")
	fs.StringVar(&f.webhook.MutatingConfiguration, "webhook-mutating-configuration", "spanbench-mutating-webhook", "the MutatingWebhookConfiguration (the campaign writer's stamp) whose webhooks get the CA as caBundle")
	fs.BoolVar(&f.serverMetrics.enabled, "server-metrics", true, "read Cloud Monitoring's CPU, latency and request figures of each Cloud Spanner run into "+
		"status.serverMetrics (needs roles/monitoring.viewer; never for emulator runs)")
	fs.StringVar(&f.serverMetrics.endpoint, "monitoring-endpoint", monitoring.CloudDefault, "host:port of the Cloud Monitoring API the manager reads")
	f.preflight.define(fs)
	fs.StringVar(&f.results.url, "results-bucket", "", "store shard results and reports as objects of this bucket: gs://BUCKET[/PREFIX] (credentials from Workload Identity) "+
		"or file:///DIR (a volume mounted at DIR in the manager and the runner pods; see --results-host-path, --results-volume-claim) (default: in ConfigMaps)")
	fs.StringVar(&f.results.hostPath, "results-host-path", "", "with a file:// bucket: the node directory the runner pods mount at its DIR, as the manager does (local clusters only)")
	fs.StringVar(&f.results.claim, "results-volume-claim", "", "with a file:// bucket: the ReadWriteMany PersistentVolumeClaim, in each run's namespace, the runner pods mount at its DIR")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := f.preflight.validate(); err != nil {
		return nil, err
	}
	var err error
	if f.resultsStore, err = f.results.store(); err != nil {
		return nil, err
	}
	if f.emulators, err = endpoint.AllowEmulators(splitList(*emulatorHosts)...); err != nil {
		return nil, fmt.Errorf("--allowed-emulator-hosts: %w", err)
	}
	if f.runnerImage == "" {
		return nil, fmt.Errorf("--runner-image is required")
	}
	if errs := validation.IsDNS1123Label(f.claimsNamespace); len(errs) > 0 {
		return nil, fmt.Errorf("--database-claims-namespace %q: must be a namespace name: %s", f.claimsNamespace, strings.Join(errs, "; "))
	}
	if f.clusterID != "" && !target.ValidLabelValue(f.clusterID) {
		return nil, fmt.Errorf("--cluster-id %q: must be at most 63 lower-case letters, digits, '_' and '-' (a Spanner label value)", f.clusterID)
	}
	f.limits.MaxRunners, f.limits.MaxProcessingUnits = int32(maxRunners), int32(f.maxPU)
	// Non-nil even when empty: an empty list allows nothing.
	f.limits.RunnerImages = append(guardrails.ImageAllowlist{f.runnerImage}, runnerImages...)
	f.limits.TolerationKeys = append(guardrails.KeyAllowlist{}, splitList(tolerationKeys)...)
	f.limits.NodeSelectorKeys = append(guardrails.KeyAllowlist{}, splitList(nodeSelectorKeys)...)
	return f, nil
}

func managerCommand(ctx context.Context, args []string, _, stderr io.Writer) error {
	// The manager serves emulator and Cloud Spanner runs side by side;
	// under this variable the Spanner client would strip the credentials
	// of every Cloud Spanner call.
	if err := endpoint.RefuseInherited(os.Getenv); err != nil {
		return fmt.Errorf("the manager refuses to start: %w", err)
	}
	f, err := parseManagerFlags(args, stderr)
	if err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(stderr)))
	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	if err := awaitAPIServer(ctx, cfg, apiServerWait, apiServerPoll, stderr); err != nil {
		return err
	}
	mgr, err := newManager(cfg, f)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// Scheme knows the kinds the manager reads and writes.
func Scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntimeMust(clientgoscheme.AddToScheme(s))
	utilruntimeMust(v1alpha1.AddToScheme(s))
	return s
}

func utilruntimeMust(err error) {
	if err != nil {
		panic(err)
	}
}

func newManager(cfg *rest.Config, f *managerFlags) (ctrl.Manager, error) {
	metricsOpts := metricsserver.Options{BindAddress: f.metricsAddr, SecureServing: f.secureMetrics}
	if f.secureMetrics {
		metricsOpts.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 Scheme(),
		Metrics:                metricsOpts,
		HealthProbeBindAddress: f.probeAddr,
		LeaderElection:         f.leaderElect,
		LeaderElectionID:       "spanbench-manager.bench.spanbench.io",
		// A replaced manager hands over at once instead of after the lease
		// expires (about 15 s): nothing runs after Start returns.
		LeaderElectionReleaseOnCancel: true,
		Cache:                         cache.Options{ByObject: ownedByRuns()},
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	base, err := pricing.Default()
	if err != nil {
		return nil, err
	}
	prices := guardrails.PriceSource{Base: base, Reader: mgr.GetAPIReader(), ConfigMap: f.priceOverride}
	f.webhook.costs = admission.Costs{Limits: f.costLimits, Prices: prices}
	if err := setupWebhook(mgr, &f.webhook); err != nil {
		return nil, err
	}
	cluster, err := clusterID(f.clusterID, mgr.GetAPIReader())
	if err != nil {
		return nil, err
	}
	cloud := endpoint.Cloud(f.spannerEndpoint)
	results, err := openResults(context.Background(), f.resultsStore)
	if err != nil {
		return nil, err
	}
	r := &benchmarkrun.BenchmarkRunReconciler{
		Client: mgr.GetClient(), Scheme: mgr.GetScheme(), Recorder: mgr.GetEventRecorderFor("spanbench"),
		Clock: clock.RealClock{}, Preparer: benchmarkrun.SpannerPreparer{Cloud: cloud, Emulators: f.emulators}, Limits: f.limits, KeepRunners: f.keepRunners, ClusterID: cluster,
		ClaimNamespace: f.claimsNamespace,
		ServerStats:    serverfigures.ServerStatsConfig{Settle: f.serverStatsSettle},
		Runner: children.RunnerConfig{Image: f.runnerImage, ImagePullPolicy: corev1.PullPolicy(f.pullPolicy), StartupGrace: f.startupGrace,
			Results: f.resultsStore},
		ServerMetrics: f.serverMetrics.config(context.Background()),
		Preflight:     f.preflight.config(),
		Results:       results,
		Arrivals:      pod.RunArrivals,
		CostLimits:    f.costLimits,
		Prices:        prices,
	}
	if f.runnerTTL >= 0 {
		ttl := int32(f.runnerTTL)
		r.Runner.TTLAfterFinished = &ttl
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	campaigns := &benchmarkcampaign.BenchmarkCampaignReconciler{Client: mgr.GetClient(), Scheme: mgr.GetScheme(),
		Recorder: mgr.GetEventRecorderFor("spanbench-campaign"), Clock: clock.RealClock{}, APIReader: mgr.GetAPIReader(), Results: results,
		CostLimits: f.costLimits, Prices: prices, Arrivals: pod.RunArrivals}
	if err := campaigns.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	if f.sweepInterval > 0 {
		sweeper := &benchmarkrun.InstanceSweeper{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Cluster: cluster, Cloud: cloud, Emulators: f.emulators,
			Projects: f.sweepProjects, Interval: f.sweepInterval, Recorder: mgr.GetEventRecorderFor("spanbench-sweep")}
		if err := mgr.Add(sweeper); err != nil {
			return nil, err
		}
	}
	metrics.Registry.MustRegister(&collectors.ResultsCollector{Reader: mgr.GetClient()}, &collectors.CampaignCollector{Reader: mgr.GetClient()})
	return mgr, nil
}

// costLimit parses a cost cap flag (pricing.ParseLimit).
func costLimit(dst *pricing.Limit) func(string) error {
	return func(v string) (err error) {
		*dst, err = pricing.ParseLimit(v)
		return err
	}
}

// clusterID is the --cluster-id flag, else the UID of the kube-system
// namespace: stable for the cluster's life and distinct between clusters.
func clusterID(flagValue string, reader client.Reader) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := &corev1.Namespace{}
	if err := reader.Get(ctx, client.ObjectKey{Name: metav1.NamespaceSystem}, ns); err != nil {
		return "", fmt.Errorf("reading namespace kube-system to name this cluster in instance labels (or set --cluster-id): %w", err)
	}
	return string(ns.UID), nil
}

// splitList reads a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// ownedByRuns limits the cache of pods, Jobs and ConfigMaps to those
// carrying the run label, so the manager does not hold every pod and
// ConfigMap of the cluster in memory.
func ownedByRuns() map[client.Object]cache.ByObject {
	req, err := labels.NewRequirement(v1alpha1.LabelRun, selection.Exists, nil)
	utilruntimeMust(err)
	sel := labels.NewSelector().Add(*req)
	return map[client.Object]cache.ByObject{
		&corev1.Pod{}:       {Label: sel},
		&corev1.ConfigMap{}: {Label: sel},
		&batchv1.Job{}:      {Label: sel},
	}
}

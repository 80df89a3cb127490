// Package spanbench_test checks the Helm chart with a real Helm: lint, the
// values schema, what `helm template` renders with the defaults and with
// every toggle on, and that the chart installs the same CRDs, manager
// permissions and manager pod hardening as the kustomize install
// (config/default), which is the source of truth.
//
// The tests need the helm binary, built from the Go module proxy
// (hack/helm.sh, a few minutes the first time) and named by SPANBENCH_HELM,
// which `make test` and `make test-helm` set; without it they fail rather
// than skip. kubectl (for `kubectl kustomize`) must be on PATH.
package spanbench_test

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

const (
	chartDir  = "."
	repoRoot  = "../.."
	release   = "spanbench"
	namespace = "spanbench-system"
	// allOnValues turns on every toggle and sets every optional value.
	allOnValues = "ci/all-on-values.yaml"
)

// helm returns the helm binary. Without one the tests fail, never skip: a
// skipped chart test would pass for coverage it does not give.
func helm(t *testing.T) string {
	t.Helper()
	h := os.Getenv("SPANBENCH_HELM")
	if h == "" {
		t.Fatal("SPANBENCH_HELM is not set: run `make test` or `make test-helm`, which build Helm and set it")
	}
	return h
}

// run runs a command in the chart directory and returns its stdout, or its
// stderr as the error.
func run(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = chartDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// manifest is a set of rendered objects, keyed by "Kind/name".
type manifest map[string]*unstructured.Unstructured

func parse(t *testing.T, source, text string) manifest {
	t.Helper()
	m := manifest{}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: output does not parse as YAML: %v", source, err)
		}
		if obj == nil {
			continue // an empty document
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetKind() == "" || u.GetAPIVersion() == "" || u.GetName() == "" {
			t.Fatalf("%s: an object without apiVersion, kind or name: %v", source, obj)
		}
		key := u.GetKind() + "/" + u.GetName()
		if _, dup := m[key]; dup {
			t.Fatalf("%s: %s appears twice", source, key)
		}
		m[key] = u
	}
	return m
}

func (m manifest) keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// get converts the object key into out, failing the test if it is missing.
func (m manifest) get(t *testing.T, key string, out any) {
	t.Helper()
	u, ok := m[key]
	if !ok {
		t.Fatalf("no %s among %v", key, m.keys())
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		t.Fatalf("%s does not convert to %T: %v", key, out, err)
	}
}

func template(t *testing.T, args ...string) manifest {
	t.Helper()
	args = append([]string{"template", release, chartDir, "--namespace", namespace, "--include-crds"}, args...)
	out, err := run(helm(t), args...)
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, "helm "+strings.Join(args, " "), out)
}

func kustomize(t *testing.T) manifest {
	t.Helper()
	return kustomizeDir(t, "config/default")
}

// kustomizeDir renders a kustomization of the repository, e.g.
// config/prometheus.
func kustomizeDir(t *testing.T, dir string) manifest {
	t.Helper()
	out, err := run("kubectl", "kustomize", repoRoot+"/"+dir)
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, "kubectl kustomize "+dir, out)
}

func TestLint(t *testing.T) {
	h := helm(t)
	for name, args := range map[string][]string{
		"defaults": nil,
		"all on":   {"--values", allOnValues},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"lint", "--strict", chartDir}, args...)
			if out, err := run(h, args...); err != nil {
				t.Errorf("helm lint fails:\n%v\n%s", err, out)
			}
		})
	}
}

// The kinds each values file must render, and no more.
func TestTemplateRendersTheExpectedObjects(t *testing.T) {
	base := []string{
		"ClusterRole/spanbench-manager",
		"ClusterRole/spanbench-metrics-reader",
		"ClusterRoleBinding/spanbench-manager",
		"CustomResourceDefinition/benchmarkcampaigns.bench.spanbench.io",
		"CustomResourceDefinition/benchmarkruns.bench.spanbench.io",
		"Deployment/spanbench-manager",
		"Service/spanbench-manager-metrics",
		"ServiceAccount/spanbench-manager",
		"ValidatingAdmissionPolicy/spanbench-tenancy",
		"ValidatingAdmissionPolicyBinding/spanbench-tenancy",
	}
	base = append(base, webhookObjects...)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{name: "defaults", want: base},
		{name: "all on", args: []string{"--values", allOnValues}, want: append(slices.Clone(base),
			"ClusterRoleBinding/spanbench-metrics-reader",
			"ClusterRoleBinding/spanbench-metrics-scraper",
			"ConfigMap/spanbench-dashboard-campaign-comparison",
			"ConfigMap/spanbench-dashboard-live-run",
			"ConfigMap/spanbench-dashboard-nightly-trend",
			"ConfigMap/spanbench-dashboard-results",
			"NetworkPolicy/spanbench-manager",
			"PodMonitor/spanbench-runners",
			"PrometheusRule/spanbench",
			"Secret/spanbench-metrics-scraper-token",
			"ServiceAccount/spanbench-metrics-scraper",
			"ServiceMonitor/spanbench-manager",
		)},
		{name: "existing service account", args: []string{"--set", "serviceAccount.create=false", "--set", "serviceAccount.name=mine"},
			want: slices.DeleteFunc(slices.Clone(base), func(k string) bool { return k == "ServiceAccount/spanbench-manager" })},
		{name: "webhook off", args: []string{"--set", "webhook.enabled=false"},
			want: slices.DeleteFunc(slices.Clone(base), func(k string) bool { return slices.Contains(webhookObjects, k) })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := template(t, tc.args...).keys()
			want := slices.Clone(tc.want)
			sort.Strings(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rendered objects (-want +got):\n%s", diff)
			}
		})
	}
}

// webhookObjects are what webhook.enabled adds.
var webhookObjects = []string{
	"ClusterRole/spanbench-validating-webhook",
	"ClusterRoleBinding/spanbench-validating-webhook",
	"Role/spanbench-webhook-cert",
	"RoleBinding/spanbench-webhook-cert",
	"Secret/spanbench-webhook-cert",
	"Service/spanbench-webhook",
	"ValidatingWebhookConfiguration/spanbench-validating-webhook",
	"MutatingWebhookConfiguration/spanbench-mutating-webhook",
}

// Every object but the cluster-scoped ones lands in the release namespace.
func TestTemplateNamespacesObjects(t *testing.T) {
	t.Parallel()
	clusterScoped := map[string]bool{"ClusterRole": true, "ClusterRoleBinding": true, "CustomResourceDefinition": true,
		"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true, "ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true}
	for key, u := range template(t, "--values", allOnValues) {
		if ns := u.GetNamespace(); clusterScoped[u.GetKind()] != (ns == "") || (ns != "" && ns != namespace) {
			t.Errorf("%s: namespace %q, want %q for namespaced kinds and none for cluster-scoped ones", key, ns, namespace)
		}
	}
}

// The manager's arguments carry the values, and the default values give the
// kustomize install's arguments (the manager's own defaults are not relied on).
func TestTemplateManagerArgs(t *testing.T) {
	t.Parallel()
	var dep appsv1.Deployment
	template(t).get(t, "Deployment/spanbench-manager", &dep)
	args := dep.Spec.Template.Spec.Containers[0].Args
	for _, want := range []string{
		"manager", "--leader-elect=true", "--runner-image=localhost/spanbench/spanbench:dev",
		"--runner-image-pull-policy=IfNotPresent", "--metrics-bind-address=:8443", "--metrics-secure=true",
		"--health-probe-bind-address=:8081", "--max-runners=100", "--max-duration=24h",
		"--max-processing-units=10000", "--max-ephemeral-duration=8h", "--keep-runners=false", "--runner-ttl-seconds=-1",
		"--server-metrics=true", "--preflight=true", "--preflight-node-quota=0",
		"--allowed-emulator-hosts=10.245.255.1:9010",
		"--max-dataset-rows=1000000000", "--max-dataset-bytes=1Ti", "--allowed-toleration-keys=*", "--allow-every-taint=false",
		"--allowed-node-selector-keys=*",
		"--webhook=true", "--webhook-port=9443", "--webhook-secret=spanbench-system/spanbench-webhook-cert",
		"--webhook-service=spanbench-system/spanbench-webhook", "--webhook-configuration=spanbench-validating-webhook",
		"--webhook-mutating-configuration=spanbench-mutating-webhook", "--database-claims-namespace=spanbench-system",
	} {
		if !slices.Contains(args, want) {
			t.Errorf("default args %q lack %q", args, want)
		}
	}

	var kdep appsv1.Deployment
	kustomize(t).get(t, "Deployment/spanbench-manager", &kdep)
	for _, a := range kdep.Spec.Template.Spec.Containers[0].Args {
		name, _, _ := strings.Cut(a, "=")
		if !slices.ContainsFunc(args, func(b string) bool { return b == name || strings.HasPrefix(b, name+"=") }) {
			t.Errorf("the kustomize install passes %s, the chart does not (chart args %q)", a, args)
		}
	}

	// A flag the manager does not define makes it exit at start.
	defined := managerFlagNames(t)
	var on appsv1.Deployment
	template(t, "--values", allOnValues).get(t, "Deployment/spanbench-manager", &on)
	c := on.Spec.Template.Spec.Containers[0]
	for _, want := range []string{
		"--runner-image=us-docker.pkg.dev/my-project/spanbench/spanbench:v0.1.0-runner",
		"--max-runners=20", "--max-duration=2h30m", "--max-processing-units=1000000",
		"--keep-runners=true", "--runner-ttl-seconds=3600", "--startup-grace=15s", "--server-stats-settle=3m",
		"--allowed-instance-configs=regional-asia-northeast1,asia1", "--max-ephemeral-duration=4h",
		"--cluster-id=gke-perf-tokyo", "--sweep-projects=my-project,my-other-project", "--sweep-interval=5m",
		"--spanner-endpoint=asia-northeast1-spanner.googleapis.com:443",
		"--server-metrics=true", "--monitoring-endpoint=monitoring.googleapis.com:443",
		"--results-bucket=gs://my-project-spanbench-results/nightly",
		"--allowed-emulator-hosts=emulator.perf.svc:9010,localhost:9010",
		"--max-dataset-rows=50000000", "--max-dataset-bytes=200Gi", "--allowed-projects=my-project",
		"--allowed-runner-images=us-docker.pkg.dev/my-project/bench/,ghcr.io/spanbench/spanbench:v0.1.0",
		"--allowed-toleration-keys=dedicated,cloud.google.com/", "--allow-every-taint=true",
		"--allowed-node-selector-keys=*,node-role.kubernetes.io/control-plane",
		"--max-run-cost=25", "--max-iteration-cost=USD 200", "--max-monthly-cost=5000.50",
		"--price-catalog-configmap=spanbench-system/spanbench-prices",
		"--preflight=true", "--preflight-node-quota=40",
	} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("all-on args %q lack %q", c.Args, want)
		}
	}
	for _, a := range c.Args[1:] {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !defined[name] {
			t.Errorf("the chart passes %s, which `spanbench manager` does not define (cmd/spanbench/manager.go)", a)
		}
	}
	if want := "us-docker.pkg.dev/my-project/spanbench/spanbench:v0.1.0"; c.Image != want {
		t.Errorf("manager image %q, want %q", c.Image, want)
	}
	if got := *on.Spec.Replicas; got != 2 {
		t.Errorf("replicas %d, want 2", got)
	}
}

func TestTemplateToggles(t *testing.T) {
	t.Parallel()
	m := template(t, "--values", allOnValues)

	var sa corev1.ServiceAccount
	m.get(t, "ServiceAccount/spanbench-manager", &sa)
	if got := sa.Annotations["iam.gke.io/gcp-service-account"]; got != "spanbench-manager@my-project.iam.gserviceaccount.com" {
		t.Errorf("Workload Identity annotation %q is not carried to the service account", got)
	}

	pm := m["PodMonitor/spanbench-runners"]
	if pm == nil {
		t.Fatal("no PodMonitor")
	}
	sel, _, _ := unstructured.NestedStringMap(pm.Object, "spec", "selector", "matchLabels")
	if want := map[string]string{"app.kubernetes.io/name": "spanbench", "app.kubernetes.io/component": "runner"}; !cmp.Equal(sel, want) {
		t.Errorf("PodMonitor selects %v, want the runner pods' labels %v", sel, want)
	}
	eps, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	if len(eps) != 1 || eps[0].(map[string]any)["port"] != "metrics" {
		t.Errorf("PodMonitor endpoints %v, want port metrics", eps)
	}

	sm := m["ServiceMonitor/spanbench-manager"]
	if sm == nil {
		t.Fatal("no ServiceMonitor")
	}
	smEps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(smEps) != 1 || smEps[0].(map[string]any)["port"] != "metrics" || smEps[0].(map[string]any)["scheme"] != "https" {
		t.Errorf("ServiceMonitor endpoints %v, want port metrics over https", smEps)
	}
	var svc corev1.Service
	m.get(t, "Service/spanbench-manager-metrics", &svc)
	smSel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	for k, v := range smSel {
		if svc.Labels[k] != v {
			t.Errorf("ServiceMonitor selects %s=%s, the metrics Service has %v", k, v, svc.Labels)
		}
	}

	var np networkingv1.NetworkPolicy
	m.get(t, "NetworkPolicy/spanbench-manager", &np)
	var dep appsv1.Deployment
	m.get(t, "Deployment/spanbench-manager", &dep)
	for k, v := range np.Spec.PodSelector.MatchLabels {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("NetworkPolicy selects %s=%s, the manager pod has %v", k, v, dep.Spec.Template.Labels)
		}
	}
	if len(np.Spec.Ingress) != 2 || len(np.Spec.Ingress[0].Ports) != 1 || np.Spec.Ingress[0].Ports[0].Port.String() != "metrics" ||
		len(np.Spec.Ingress[1].Ports) != 1 || np.Spec.Ingress[1].Ports[0].Port.String() != "webhook" || len(np.Spec.Ingress[1].From) != 0 {
		t.Errorf("NetworkPolicy ingress %+v, want a rule for the metrics port and one for the webhook port from anywhere", np.Spec.Ingress)
	}

	var rb rbacv1.ClusterRoleBinding
	m.get(t, "ClusterRoleBinding/spanbench-metrics-reader", &rb)
	if want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus-k8s", Namespace: "monitoring"}}; !cmp.Equal(rb.Subjects, want) {
		t.Errorf("metrics-reader subjects %v, want %v", rb.Subjects, want)
	}
}

// Wrong values are refused with a message that names the field.
func TestValuesAreValidated(t *testing.T) {
	h := helm(t)
	for name, tc := range map[string]struct {
		set, want string
	}{
		"unknown top-level key":       {"replica=2", "additional properties 'replica' not allowed"},
		"unknown nested key":          {"image.tagg=v1", "at '/image': additional properties 'tagg' not allowed"},
		"unknown guardrail":           {"guardrails.maxNodes=3", "at '/guardrails': additional properties 'maxNodes' not allowed"},
		"duration that Go rejects":    {"guardrails.maxDuration=1d", "/guardrails/maxDuration"},
		"negative guardrail":          {"guardrails.maxRunners=-1", "/guardrails/maxRunners"},
		"pull policy":                 {"image.pullPolicy=Sometimes", "/image/pullPolicy"},
		"toggle that is not a bool":   {"serviceMonitor.enabled=yes", "/serviceMonitor/enabled"},
		"port out of range":           {"metrics.port=70000", "/metrics/port"},
		"replicas without election":   {"replicas=2,leaderElection.enabled=false", "replicas > 1 needs leaderElection.enabled"},
		"one port for two endpoints":  {"metrics.port=8081", "metrics.port and healthProbePort must differ"},
		"no service account name":     {"serviceAccount.create=false", "serviceAccount.name is required"},
		"cluster id Spanner refuses":  {"clusterID=Perf.Tokyo", "/clusterID"},
		"dashboards toggle":           {"grafanaDashboards.enabled=yes", "/grafanaDashboards/enabled"},
		"dashboards namespace":        {"grafanaDashboards.namespace=Monitoring", "/grafanaDashboards/namespace"},
		"alerts toggle":               {"prometheusRule.enabled=1", "/prometheusRule/enabled"},
		"unknown token secret key":    {"serviceMonitor.tokenSecret.nam=x", "additional properties 'nam' not allowed"},
		"opt-in without namespace":    {"admissionPolicy.serviceAccounts={runner}", "/admissionPolicy/serviceAccounts/0"},
		"emulator host without port":  {"emulatorHosts={emulator.perf.svc}", "/emulatorHosts/0"},
		"image prefix breaking CEL":   {`admissionPolicy.runnerImagePrefixes={reg'x/}`, "/admissionPolicy/runnerImagePrefixes/0"},
		"policy toggle":               {"admissionPolicy.enabled=on", "/admissionPolicy/enabled"},
		"webhook on the metrics port": {"webhook.port=8443", "webhook.port must differ"},
		"webhook failure policy":      {"webhook.failurePolicy=Retry", "/webhook/failurePolicy"},
		"webhook timeout too long":    {"webhook.timeoutSeconds=31", "/webhook/timeoutSeconds"},
		"full instance config name":   {"guardrails.allowedInstanceConfigs={projects/p/instanceConfigs/asia1}", "/guardrails/allowedInstanceConfigs/0"},
		"dataset bytes not a size":    {"guardrails.maxDatasetBytes=lots", "/guardrails/maxDatasetBytes"},
		"negative dataset rows":       {"guardrails.maxDatasetRows=-1", "/guardrails/maxDatasetRows"},
		"run cost not an amount":      {"guardrails.maxRunCost=25$", "/guardrails/maxRunCost"},
		"price ConfigMap not a name":  {"priceCatalogConfigMap=ns/prices", "/priceCatalogConfigMap"},
		"preflight toggle":            {"preflight.enabled=yes", "/preflight/enabled"},
		"negative node quota":         {"preflight.nodeQuota=-1", "/preflight/nodeQuota"},
		"project Google refuses":      {"guardrails.allowedProjects={My_Project}", "/guardrails/allowedProjects/0"},
		"two images in one entry":     {"guardrails.allowedRunnerImages={a:1 b:2}", "/guardrails/allowedRunnerImages/0"},
		"toleration key no label key": {"guardrails.allowedTolerationKeys={bad key}", "/guardrails/allowedTolerationKeys/0"},
		"every-taint toggle":          {"guardrails.allowEveryTaint=yes", "/guardrails/allowEveryTaint"},
		"node selector key wildcard":  {"guardrails.allowedNodeSelectorKeys={cloud.*}", "/guardrails/allowedNodeSelectorKeys/0"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := run(h, "template", release, chartDir, "--set", tc.set)
			if err == nil {
				t.Fatalf("--set %s renders; want it refused", tc.set)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("--set %s: error does not say %q:\n%v", tc.set, tc.want, err)
			}
		})
	}
}

// The chart and the kustomize install agree on what must not drift: the CRDs,
// the manager's and the metrics reader's permissions, and how the manager
// pod is hardened and probed.
func TestChartMatchesKustomize(t *testing.T) {
	t.Parallel()
	chart, kust := template(t), kustomize(t)

	var crds []string
	for _, key := range kust.keys() {
		if kust[key].GetKind() == "CustomResourceDefinition" {
			crds = append(crds, key)
		}
	}
	if len(crds) == 0 {
		t.Fatal("kubectl kustomize config/default renders no CRD")
	}
	for _, key := range crds {
		c, ok := chart[key]
		if !ok {
			t.Errorf("the chart lacks %s; run `make manifests`", key)
			continue
		}
		if diff := cmp.Diff(kust[key].Object, c.Object); diff != "" {
			t.Errorf("%s differs between kustomize and the chart (-kustomize +chart); run `make manifests`:\n%s", key, diff)
		}
	}
	for key, c := range chart {
		if c.GetKind() == "CustomResourceDefinition" && !slices.Contains(crds, key) {
			t.Errorf("the chart installs %s, the kustomize install does not; run `make manifests`", key)
		}
	}

	for _, key := range []string{"ClusterRole/spanbench-manager", "ClusterRole/spanbench-metrics-reader"} {
		var k, c rbacv1.ClusterRole
		kust.get(t, key, &k)
		chart.get(t, key, &c)
		if diff := cmp.Diff(k.Rules, c.Rules); diff != "" {
			t.Errorf("%s rules differ (-kustomize +chart); run `make manifests`:\n%s", key, diff)
		}
	}

	var kd, cd appsv1.Deployment
	kust.get(t, "Deployment/spanbench-manager", &kd)
	chart.get(t, "Deployment/spanbench-manager", &cd)
	kp, cp := kd.Spec.Template.Spec, cd.Spec.Template.Spec
	kc, cc := kp.Containers[0], cp.Containers[0]
	for _, f := range []struct {
		what string
		k, c any
	}{
		{"pod securityContext", kp.SecurityContext, cp.SecurityContext},
		{"container securityContext", kc.SecurityContext, cc.SecurityContext},
		{"container ports", kc.Ports, cc.Ports},
		{"liveness probe", kc.LivenessProbe, cc.LivenessProbe},
		{"readiness probe", kc.ReadinessProbe, cc.ReadinessProbe},
		{"resources", kc.Resources, cc.Resources},
		{"volumes", kp.Volumes, cp.Volumes},
		{"volume mounts", kc.VolumeMounts, cc.VolumeMounts},
		{"container name", kc.Name, cc.Name},
		{"default image", kc.Image, cc.Image},
	} {
		// Protocol TCP is the default the chart spells out.
		if diff := cmp.Diff(f.k, f.c, cmp.Transformer("defaultProtocol", func(p corev1.ContainerPort) corev1.ContainerPort {
			if p.Protocol == "" {
				p.Protocol = corev1.ProtocolTCP
			}
			return p
		})); diff != "" {
			t.Errorf("manager %s differs (-kustomize +chart):\n%s", f.what, diff)
		}
	}
}

// managerFlagNames reads the names of `spanbench manager`'s flags from the
// source of parseManagerFlags and of the flag groups it calls (the
// preflight's define): the string literal each fs.<Kind>(Var)/Func call
// defines. Reading the source keeps the test fast; a flag set up some
// other way fails the test loudly rather than passing by accident.
func managerFlagNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for file, fn := range map[string]string{"manager.go": "parseManagerFlags", "manager_preflight.go": "define"} {
		flagLiterals(t, repoRoot+"/cmd/spanbench/"+file, fn, names)
	}
	if !names["runner-image"] || !names["metrics-bind-address"] || !names["preflight"] {
		t.Fatalf("found no manager flags in cmd/spanbench (parseManagerFlags, define: fs.<Kind>Var calls): %v", names)
	}
	return names
}

// flagLiterals adds to names the flag names function fn of file defines.
func flagLiterals(t *testing.T, file, fnName string, names map[string]bool) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatalf("parsing %s: %v", file, err)
	}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != fnName {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "fs" {
				return true
			}
			for _, arg := range call.Args {
				if lit, ok := arg.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if name, err := strconv.Unquote(lit.Value); err == nil {
						names[name] = true
					}
					break // the first string literal is the flag's name
				}
			}
			return true
		})
	}
}

// The dashboards toggle renders config/grafana's ConfigMaps: the same names
// and JSON, the Grafana sidecar's label and the folder annotation from the
// values.
func TestTemplateGrafanaDashboards(t *testing.T) {
	t.Parallel()
	chart, kust := template(t, "--values", allOnValues), kustomizeDir(t, "config/grafana")
	n := 0
	for _, key := range kust.keys() {
		if kust[key].GetKind() != "ConfigMap" {
			continue
		}
		n++
		var k, c corev1.ConfigMap
		kust.get(t, key, &k)
		chart.get(t, key, &c)
		if diff := cmp.Diff(k.Data, c.Data); diff != "" {
			t.Errorf("%s data differs (-kustomize +chart); run `make manifests`:\n%s", key, diff)
		}
		for _, l := range []map[string]string{k.Labels, c.Labels} {
			if l["grafana_dashboard"] != "1" {
				t.Errorf("%s: labels %v lack the Grafana sidecar's grafana_dashboard: \"1\"", key, l)
			}
		}
		if k.Annotations["grafana_folder"] != "spanbench" || c.Annotations["grafana_folder"] != "Benchmarks" {
			t.Errorf("%s: folder annotations %v (kustomize) and %v (chart), want spanbench and the values' Benchmarks", key, k.Annotations, c.Annotations)
		}
	}
	if n == 0 {
		t.Fatal("kubectl kustomize config/grafana renders no ConfigMap")
	}
	for key, c := range chart {
		if c.GetKind() == "ConfigMap" && c.GetLabels()["grafana_dashboard"] == "1" && kust[key] == nil {
			t.Errorf("the chart renders %s, config/grafana does not: list its JSON in config/grafana/kustomization.yaml", key)
		}
	}

	other := template(t, "--set", "grafanaDashboards.enabled=true", "--set", "grafanaDashboards.namespace=monitoring")
	for _, key := range kust.keys() {
		if ns := other[key].GetNamespace(); ns != "monitoring" {
			t.Errorf("%s in namespace %q, want grafanaDashboards.namespace monitoring", key, ns)
		}
	}
}

// The alerts toggle renders config/prometheus/rules.yaml's rules verbatim,
// with the labels kube-prometheus-stack selects rules by.
func TestTemplatePrometheusRule(t *testing.T) {
	t.Parallel()
	chart, kust := template(t, "--values", allOnValues), kustomizeDir(t, "config/prometheus")
	const key = "PrometheusRule/spanbench"
	c, k := chart[key], kust[key]
	if c == nil || k == nil {
		t.Fatalf("%s: rendered by the chart %v, by config/prometheus %v", key, c != nil, k != nil)
	}
	if diff := cmp.Diff(k.Object["spec"], c.Object["spec"]); diff != "" {
		t.Errorf("%s spec differs (-kustomize +chart); run `make manifests`:\n%s", key, diff)
	}
	if got := c.GetLabels()["release"]; got != "kube-prometheus-stack" {
		t.Errorf("%s: label release %q, want prometheusRule.labels' kube-prometheus-stack", key, got)
	}
}

// The ServiceMonitors scrape with authorization.credentials, not the
// deprecated bearerTokenFile, from a Secret the install provides (or the
// user names).
func TestServiceMonitorAuthorization(t *testing.T) {
	t.Parallel()
	check := func(source string, m manifest, wantSecret string, wantScraper bool) {
		t.Helper()
		eps, _, _ := unstructured.NestedSlice(m["ServiceMonitor/spanbench-manager"].Object, "spec", "endpoints")
		if len(eps) != 1 {
			t.Fatalf("%s: ServiceMonitor endpoints %v, want one", source, eps)
		}
		ep := eps[0].(map[string]any)
		if _, ok := ep["bearerTokenFile"]; ok {
			t.Errorf("%s: the ServiceMonitor still uses the deprecated bearerTokenFile", source)
		}
		typ, _, _ := unstructured.NestedString(ep, "authorization", "type")
		name, _, _ := unstructured.NestedString(ep, "authorization", "credentials", "name")
		key, _, _ := unstructured.NestedString(ep, "authorization", "credentials", "key")
		if typ != "Bearer" || name != wantSecret || key != "token" {
			t.Errorf("%s: authorization %v, want Bearer credentials from %s/token", source, ep["authorization"], wantSecret)
		}
		_, secret := m["Secret/"+wantSecret]
		if secret != wantScraper {
			t.Errorf("%s: renders Secret/%s: %v, want %v", source, wantSecret, secret, wantScraper)
		}
		if !wantScraper {
			if m["ServiceAccount/spanbench-metrics-scraper"] != nil {
				t.Errorf("%s: renders the metrics-scraper service account although tokenSecret names a Secret", source)
			}
			return
		}
		var rb rbacv1.ClusterRoleBinding
		m.get(t, "ClusterRoleBinding/spanbench-metrics-scraper", &rb)
		if rb.RoleRef.Name != "spanbench-metrics-reader" || len(rb.Subjects) != 1 || rb.Subjects[0].Name != "spanbench-metrics-scraper" {
			t.Errorf("%s: metrics-scraper binding %+v, want spanbench-metrics-scraper bound to spanbench-metrics-reader", source, rb)
		}
		var s corev1.Secret
		m.get(t, "Secret/"+wantSecret, &s)
		if s.Type != corev1.SecretTypeServiceAccountToken || s.Annotations[corev1.ServiceAccountNameKey] != "spanbench-metrics-scraper" {
			t.Errorf("%s: Secret %s is not spanbench-metrics-scraper's token: type %s, annotations %v", source, wantSecret, s.Type, s.Annotations)
		}
	}
	check("kubectl kustomize config/prometheus", kustomizeDir(t, "config/prometheus"), "spanbench-metrics-scraper-token", true)
	check("helm template (all on)", template(t, "--values", allOnValues), "spanbench-metrics-scraper-token", true)
	check("helm template (own Secret)", template(t, "--set", "serviceMonitor.enabled=true", "--set", "serviceMonitor.tokenSecret.name=prometheus-token"), "prometheus-token", false)
}

// The webhook is installed alike by the chart and config/webhook: the
// configuration, its Service, the empty Secret and the RBAC naming them;
// the manager's flags name the same objects; and webhook.enabled=false
// turns the manager's webhook server off with them.
func TestWebhookMatchesKustomize(t *testing.T) {
	t.Parallel()
	chart, kust := template(t), kustomize(t)
	for _, key := range webhookObjects {
		k, c := kust[key], chart[key]
		if k == nil || c == nil {
			t.Errorf("%s: in kustomize %t, in the chart %t; want both", key, k != nil, c != nil)
			continue
		}
		for _, f := range [][]string{{"webhooks"}, {"spec", "ports"}, {"rules"}, {"roleRef"}, {"subjects"}, {"type"}, {"data"}} {
			kv, _, _ := unstructured.NestedFieldNoCopy(k.Object, f...)
			cv, _, _ := unstructured.NestedFieldNoCopy(c.Object, f...)
			if diff := cmp.Diff(kv, cv, cmp.FilterPath(func(p cmp.Path) bool {
				// The chart spells out the Service port's default protocol.
				return strings.HasSuffix(p.GoString(), `["protocol"]`)
			}, cmp.Ignore())); diff != "" {
				t.Errorf("%s .%s differs (-kustomize +chart):\n%s", key, strings.Join(f, "."), diff)
			}
		}
	}

	// The chart's selectors add the release; the Service must still find
	// the manager pods.
	var svc corev1.Service
	var dep appsv1.Deployment
	chart.get(t, "Service/spanbench-webhook", &svc)
	chart.get(t, "Deployment/spanbench-manager", &dep)
	for k, v := range svc.Spec.Selector {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("the webhook Service selects %s=%s, the manager pod has %v", k, v, dep.Spec.Template.Labels)
		}
	}

	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	chart.get(t, "ValidatingWebhookConfiguration/spanbench-validating-webhook", &vwc)
	w := vwc.Webhooks[0]
	if *w.FailurePolicy != admissionregistrationv1.Fail || *w.TimeoutSeconds != 15 || *w.SideEffects != admissionregistrationv1.SideEffectClassNone {
		t.Errorf("webhook failurePolicy %s, timeoutSeconds %d, sideEffects %s; want Fail, 15, None", *w.FailurePolicy, *w.TimeoutSeconds, *w.SideEffects)
	}
	var ignore admissionregistrationv1.ValidatingWebhookConfiguration
	template(t, "--set", "webhook.failurePolicy=Ignore", "--set", "webhook.timeoutSeconds=7").
		get(t, "ValidatingWebhookConfiguration/spanbench-validating-webhook", &ignore)
	if w := ignore.Webhooks[0]; *w.FailurePolicy != admissionregistrationv1.Ignore || *w.TimeoutSeconds != 7 {
		t.Errorf("webhook.failurePolicy=Ignore, timeoutSeconds=7 render %s, %d", *w.FailurePolicy, *w.TimeoutSeconds)
	}

	var off appsv1.Deployment
	template(t, "--set", "webhook.enabled=false").get(t, "Deployment/spanbench-manager", &off)
	c := off.Spec.Template.Spec.Containers[0]
	if !slices.Contains(c.Args, "--webhook=false") {
		t.Errorf("webhook.enabled=false: manager args %q lack --webhook=false", c.Args)
	}
	for _, p := range c.Ports {
		if p.Name == "webhook" {
			t.Errorf("webhook.enabled=false still opens the webhook port")
		}
	}
}

// TestManagerKnowsItsMemoryLimit: both installs give the manager
// GOMEMLIMIT from its container's memory limit, so the Go runtime collects
// harder before the limit instead of being OOM-killed mid-aggregation.
func TestManagerKnowsItsMemoryLimit(t *testing.T) {
	for name, m := range map[string]manifest{"chart": template(t), "kustomize": kustomize(t)} {
		var dep appsv1.Deployment
		m.get(t, "Deployment/spanbench-manager", &dep)
		found := false
		for _, e := range dep.Spec.Template.Spec.Containers[0].Env {
			if e.Name == "GOMEMLIMIT" {
				found = e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil && e.ValueFrom.ResourceFieldRef.Resource == "limits.memory"
			}
		}
		if !found {
			t.Errorf("the %s install's manager has no GOMEMLIMIT from limits.memory: %+v", name, dep.Spec.Template.Spec.Containers[0].Env)
		}
	}
}

// TestTemplateResultsBucketOnADirectory: a file:// results bucket mounts
// the same directory into the manager at the URL's path, from the node
// (hostPath) or a claim, and passes the flags that make the runners mount
// it too; a file:// bucket without a volume is refused at render time.
func TestTemplateResultsBucketOnADirectory(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		set      string
		wantArg  string
		wantFrom func(corev1.Volume) bool
	}{
		"hostPath": {"resultsBucket.hostPath=/srv/results", "--results-host-path=/srv/results",
			func(v corev1.Volume) bool { return v.HostPath != nil && v.HostPath.Path == "/srv/results" }},
		"claim": {"resultsBucket.volumeClaim=results", "--results-volume-claim=results",
			func(v corev1.Volume) bool {
				return v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "results"
			}},
	} {
		var dep appsv1.Deployment
		template(t, "--set", "resultsBucket.url=file:///var/spanbench/results", "--set", c.set).get(t, "Deployment/spanbench-manager", &dep)
		p := dep.Spec.Template.Spec
		for _, want := range []string{"--results-bucket=file:///var/spanbench/results", c.wantArg} {
			if !slices.Contains(p.Containers[0].Args, want) {
				t.Errorf("%s: args %q lack %q", name, p.Containers[0].Args, want)
			}
		}
		if !slices.Contains(p.Containers[0].VolumeMounts, corev1.VolumeMount{Name: "results", MountPath: "/var/spanbench/results"}) {
			t.Errorf("%s: mounts %+v lack the results directory at /var/spanbench/results", name, p.Containers[0].VolumeMounts)
		}
		if !slices.ContainsFunc(p.Volumes, func(v corev1.Volume) bool { return v.Name == "results" && c.wantFrom(v) }) {
			t.Errorf("%s: volumes %+v lack the results volume", name, p.Volumes)
		}
	}
	args := []string{"template", release, chartDir, "--set", "resultsBucket.url=file:///var/spanbench/results"}
	if out, err := run(helm(t), args...); err == nil || !strings.Contains(err.Error()+out, "hostPath or resultsBucket.volumeClaim") {
		t.Errorf("a file:// bucket without a volume rendered (%v); want a refusal naming hostPath and volumeClaim", err)
	}
}

// costFlags are the manager's caps in money and the price override they
// need (docs/cost.md).
var costFlags = []string{"--max-run-cost", "--max-iteration-cost", "--max-monthly-cost", "--price-catalog-configmap"}

// costArgs are the args of dep's manager that set a costFlags flag.
func costArgs(dep appsv1.Deployment) []string {
	var out []string
	for _, a := range dep.Spec.Template.Spec.Containers[0].Args {
		if name, _, _ := strings.Cut(a, "="); slices.Contains(costFlags, name) {
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}

// The caps in money are off in both installs by default (the demo and the
// samples run uncapped), and on with the component config/cost-guardrails
// or the chart's values: the same flags, each one the manager defines.
func TestCostGuardrailsAreOffByDefaultAndOnAlike(t *testing.T) {
	t.Parallel()
	var kd, cd appsv1.Deployment
	kustomize(t).get(t, "Deployment/spanbench-manager", &kd)
	template(t).get(t, "Deployment/spanbench-manager", &cd)
	if got := append(costArgs(kd), costArgs(cd)...); len(got) != 0 {
		t.Errorf("the default installs cap costs: %q; want the caps off", got)
	}

	// An overlay of config/default with the component, as its header says.
	dir := t.TempDir()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, root) // kustomize refuses absolute bases
	if err != nil {
		t.Fatal(err)
	}
	overlay := fmt.Sprintf("resources: [%s/config/default]\ncomponents: [%s/config/cost-guardrails]\n", rel, rel)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(overlay), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := run("kubectl", "kustomize", dir)
	if err != nil {
		t.Fatal(err)
	}
	var on appsv1.Deployment
	parse(t, "kubectl kustomize config/default + config/cost-guardrails", out).get(t, "Deployment/spanbench-manager", &on)
	kArgs := costArgs(on)
	if len(kArgs) != len(costFlags) {
		t.Fatalf("the component sets %q; want each of %q", kArgs, costFlags)
	}
	defined := managerFlagNames(t)
	for _, a := range kArgs {
		if name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "="); !defined[name] {
			t.Errorf("the component passes %s, which `spanbench manager` does not define", a)
		}
	}

	var helmOn appsv1.Deployment
	template(t, "--set-string", "guardrails.maxRunCost=USD 25", "--set-string", "guardrails.maxIterationCost=USD 200",
		"--set-string", "guardrails.maxMonthlyCost=USD 5000", "--set", "priceCatalogConfigMap=spanbench-prices").
		get(t, "Deployment/spanbench-manager", &helmOn)
	if diff := cmp.Diff(kArgs, costArgs(helmOn)); diff != "" {
		t.Errorf("the chart's cost values and the component differ (-component +chart):\n%s", diff)
	}
}

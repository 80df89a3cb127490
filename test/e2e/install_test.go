//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/internal/await"
)

// How the suite installs spanbench: $SPANBENCH_E2E_INSTALL, kustomize (the
// default) or helm. hack/e2e.sh runs the suite once with each.
const (
	installEnv       = "SPANBENCH_E2E_INSTALL"
	installKustomize = "kustomize"
	installHelm      = "helm"

	// installDir is the kustomize install: config/default plus
	// --keep-runners.
	installDir = "test/e2e/testdata/install"
	// The Helm install: the chart, as release spanbench in the manager
	// namespace, with the values that match installDir.
	chartDir    = "charts/spanbench"
	helmValues  = "test/e2e/testdata/helm-values.yaml"
	releaseName = "spanbench"

	crdName = "benchmarkruns.bench.spanbench.io"
	// campaignCRDName is the second CRD both installs carry.
	campaignCRDName = "benchmarkcampaigns.bench.spanbench.io"
	// The objects the tests rely on have the same names in both installs:
	// the chart derives them from the release name, and a release named
	// spanbench gets the kustomize install's names.
	managerClusterRole = "spanbench-manager"
	metricsReaderRole  = "spanbench-metrics-reader"
	metricsService     = "spanbench-manager-metrics"
)

// managerLabels select the manager pods and its metrics Service, in both
// installs: the selector of config/prometheus/scrape-config.yaml and of the
// ServiceMonitors (config/prometheus/monitor.yaml, the chart's).
var managerLabels = map[string]string{"app.kubernetes.io/name": "spanbench", "app.kubernetes.io/component": "manager"}

// managerSelector is managerLabels for kubectl -l.
const managerSelector = "app.kubernetes.io/name=spanbench,app.kubernetes.io/component=manager"

// installMethod reads $SPANBENCH_E2E_INSTALL.
func installMethod() (string, error) {
	switch m := envOr(installEnv, installKustomize); m {
	case installKustomize, installHelm:
		return m, nil
	default:
		return "", fmt.Errorf("%s=%q: want %s or %s", installEnv, m, installKustomize, installHelm)
	}
}

// install installs spanbench the suite's way on a cluster cleared of any
// earlier install, waits for the manager and checks what the tests rely
// on. The suite always starts from scratch: an install left by an earlier
// run (E2E_KEEP=1, `make demo`, the other install method) is removed first,
// so that neither method's objects leak into the other's run and every run
// installs the current CRD (Helm never upgrades one) and image (the tag dev
// is reused across builds).
func install(ctx context.Context) error {
	if err := removeAnyInstall(ctx); err != nil {
		return fmt.Errorf("removing the install left on the cluster: %w", err)
	}
	if err := requireUninstalled(ctx); err != nil {
		return fmt.Errorf("the cluster still has spanbench objects after removing the earlier install: %w", err)
	}
	suite.installed = true
	switch suite.install {
	case installKustomize:
		if out, err := kubectlCtx(ctx, time.Minute, "apply", "-k", filepath.Join(suite.root, installDir)); err != nil {
			return fmt.Errorf("kubectl apply -k %s: %w: %s", installDir, err, out)
		}
	case installHelm:
		// The namespace enforces the restricted Pod Security Standard, as
		// config/manager's does: the chart's manager pod must pass it too.
		// (helm --create-namespace would make a namespace without it.)
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: managerNamespace, Labels: map[string]string{
			"pod-security.kubernetes.io/enforce": "restricted",
		}}}
		if err := suite.c.Create(ctx, ns); err != nil {
			return fmt.Errorf("creating namespace %s: %w", managerNamespace, err)
		}
		if out, err := helm(ctx, 2*time.Minute, "upgrade", "--install", releaseName, filepath.Join(suite.root, chartDir),
			"--namespace", managerNamespace, "--values", filepath.Join(suite.root, helmValues)); err != nil {
			return fmt.Errorf("helm upgrade --install %s %s: %w: %s", releaseName, chartDir, err, out)
		}
	}
	if out, err := kubectlCtx(ctx, 40*time.Second, "wait", "--for=condition=Established", "crd/"+crdName, "--timeout=30s"); err != nil {
		return fmt.Errorf("the BenchmarkRun CRD is not established: %w: %s", err, out)
	}
	if out, err := kubectlCtx(ctx, 130*time.Second, "-n", managerNamespace, "rollout", "status", "deployment/"+managerDeployment, "--timeout=120s"); err != nil {
		pods, _ := kubectlCtx(ctx, 10*time.Second, "-n", managerNamespace, "get", "pods", "-o", "wide")
		logs, _ := kubectlCtx(ctx, 10*time.Second, "-n", managerNamespace, "logs", "-l", managerSelector, "--tail=30")
		return fmt.Errorf("the manager did not become ready: %w: %s\n%s\n%s", err, out, pods, logs)
	}
	if err := awaitAdmission(ctx); err != nil {
		return err
	}
	return checkInstall(ctx)
}

// awaitAdmission waits until a run is admitted (a server-side dry run of
// the demo sample and of a Custom one: nothing is stored). Right after an
// install both may be refused for a few seconds: the API server reads the
// tenancy policy's params ConfigMap through an informer, and refuses
// every run with "no params found" until that informer has it; and it
// reaches the manager's webhook, which only Custom runs call, through the
// new Service, which answers "connection refused" until kube-proxy routes
// it, after the manager is already ready. The tests start only once both
// are admitted.
func awaitAdmission(ctx context.Context) error {
	start := time.Now()
	for _, sample := range []string{demoSample, customSample} {
		ok, last := await.Until(ctx, await.Poll{Within: 90 * time.Second, Every: time.Second}, func() (bool, string) {
			out, err := kubectlCtx(ctx, 20*time.Second, "-n", "default", "create", "--dry-run=server", "-f", filepath.Join(suite.root, sample))
			return err == nil, out
		})
		if !ok {
			return fmt.Errorf("%s is still refused 90 s after the install: %s", sample, last)
		}
	}
	fmt.Printf("e2e: runs (and the webhook, for Custom runs) are admitted %s after the manager became ready\n", time.Since(start).Round(time.Second))
	return nil
}

// checkInstall checks, for either install, what the tests take for
// granted: the manager runs the image the suite loaded, with
// --keep-runners, in a namespace that enforces the restricted standard;
// its metrics Service and the metrics-reader ClusterRole exist under the
// names the Prometheus test and config/prometheus use.
func checkInstall(ctx context.Context) error {
	var errs []error
	dep := &appsv1.Deployment{}
	if err := suite.c.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: managerDeployment}, dep); err != nil {
		return err
	}
	podLabels := dep.Spec.Template.Labels
	for k, v := range managerLabels {
		if podLabels[k] != v {
			errs = append(errs, fmt.Errorf("the manager pods lack the label %s=%s (labels %v)", k, v, podLabels))
		}
	}
	var mgr *corev1.Container
	for i := range dep.Spec.Template.Spec.Containers {
		if c := &dep.Spec.Template.Spec.Containers[i]; c.Name == "manager" {
			mgr = c
		}
	}
	switch {
	case mgr == nil:
		errs = append(errs, errors.New("the manager Deployment has no container named manager"))
	case mgr.Image != image:
		errs = append(errs, fmt.Errorf("the manager runs image %s, want %s (the image the suite loaded)", mgr.Image, image))
	case !slices.Contains(mgr.Args, "--keep-runners") && !slices.Contains(mgr.Args, "--keep-runners=true"):
		errs = append(errs, fmt.Errorf("the manager runs without --keep-runners (args %q)", mgr.Args))
	}
	ns := &corev1.Namespace{}
	if err := suite.c.Get(ctx, client.ObjectKey{Name: managerNamespace}, ns); err != nil {
		errs = append(errs, err)
	} else if ns.Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		errs = append(errs, fmt.Errorf("namespace %s does not enforce the restricted Pod Security Standard (labels %v)", managerNamespace, ns.Labels))
	}

	svc := &corev1.Service{}
	if err := suite.c.Get(ctx, client.ObjectKey{Namespace: managerNamespace, Name: metricsService}, svc); err != nil {
		errs = append(errs, fmt.Errorf("the manager's metrics Service: %w", err))
	} else {
		for k, v := range managerLabels {
			if svc.Labels[k] != v {
				errs = append(errs, fmt.Errorf("Service %s lacks the label %s=%s that ServiceMonitors select (labels %v)", svc.Name, k, v, svc.Labels))
			}
		}
		for k, v := range svc.Spec.Selector {
			if podLabels[k] != v {
				errs = append(errs, fmt.Errorf("Service %s selects %s=%s, the manager pods have %q", svc.Name, k, v, podLabels[k]))
			}
		}
		if len(svc.Spec.Selector) == 0 {
			errs = append(errs, fmt.Errorf("Service %s has no selector", svc.Name))
		}
		i := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == "metrics" })
		if i < 0 || svc.Spec.Ports[i].TargetPort != intstr.FromString("metrics") {
			errs = append(errs, fmt.Errorf("Service %s: want a port named metrics targeting the pods' port metrics, got %+v", svc.Name, svc.Spec.Ports))
		}
	}

	role := &rbacv1.ClusterRole{}
	if err := suite.c.Get(ctx, client.ObjectKey{Name: metricsReaderRole}, role); err != nil {
		errs = append(errs, fmt.Errorf("the metrics-reader ClusterRole: %w", err))
	} else if !slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
		return slices.Contains(r.NonResourceURLs, "/metrics") && slices.Contains(r.Verbs, "get")
	}) {
		errs = append(errs, fmt.Errorf("ClusterRole %s does not grant get /metrics: %+v", role.Name, role.Rules))
	}
	return errors.Join(errs...)
}

// uninstall takes the suite's install back out the way a user would, waits
// for the manager namespace to go, and checks that nothing of spanbench is
// left on the cluster. The tests' namespaces go first, while the manager
// still runs (a run's finalizer needs it).
func uninstall(ctx context.Context) error {
	if err := waitTestNamespacesGone(ctx, 2*time.Minute); err != nil {
		return err
	}
	switch suite.install {
	case installKustomize:
		if out, err := kubectlCtx(ctx, 2*time.Minute, "delete", "-k", filepath.Join(suite.root, installDir), "--ignore-not-found", "--wait", "--timeout=100s"); err != nil {
			return fmt.Errorf("kubectl delete -k %s: %w: %s", installDir, err, out)
		}
	case installHelm:
		if err := helmUninstall(ctx); err != nil {
			return err
		}
	}
	return requireUninstalled(ctx)
}

// helmUninstall uninstalls the release, then deletes what Helm leaves by
// design: the CRD (crds/ is installed, never upgraded or deleted) and the
// namespace the suite created.
func helmUninstall(ctx context.Context) error {
	if out, err := helm(ctx, 2*time.Minute, "uninstall", releaseName, "--namespace", managerNamespace, "--wait", "--timeout=100s"); err != nil {
		return fmt.Errorf("helm uninstall %s: %w: %s", releaseName, err, out)
	}
	if out, err := kubectlCtx(ctx, 100*time.Second, "delete", "crd/"+crdName, "crd/"+campaignCRDName, "namespace/"+managerNamespace, "--ignore-not-found", "--wait", "--timeout=90s"); err != nil {
		return fmt.Errorf("deleting the CRD and namespace Helm leaves: %w: %s", err, out)
	}
	return nil
}

// removeAnyInstall removes whatever spanbench install is on the cluster, of
// either method: a Helm release (found by its release Secrets, without
// needing helm when there is none), then the kustomize install's objects,
// which also covers the CRD and namespace a Helm uninstall leaves.
func removeAnyInstall(ctx context.Context) error {
	secrets := &corev1.SecretList{}
	if err := suite.c.List(ctx, secrets, client.InNamespace(managerNamespace), client.MatchingLabels{"owner": "helm", "name": releaseName}); err != nil {
		return err
	}
	if len(secrets.Items) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: removing the Helm release %s left on the cluster\n", releaseName)
		if out, err := helm(ctx, 2*time.Minute, "uninstall", releaseName, "--namespace", managerNamespace, "--wait", "--timeout=100s"); err != nil {
			return fmt.Errorf("helm uninstall %s: %w: %s", releaseName, err, out)
		}
	}
	if requireUninstalled(ctx) == nil {
		return nil
	}
	fmt.Fprintf(os.Stderr, "e2e: removing the spanbench install left on the cluster\n")
	if err := waitTestNamespacesGone(ctx, 2*time.Minute); err != nil {
		return err
	}
	if out, err := kubectlCtx(ctx, 2*time.Minute, "delete", "-k", filepath.Join(suite.root, installDir), "--ignore-not-found", "--wait", "--timeout=100s"); err != nil {
		return fmt.Errorf("kubectl delete -k %s: %w: %s", installDir, err, out)
	}
	return nil
}

// requireUninstalled fails if anything of a spanbench install is on the
// cluster: the CRD, the manager namespace, or cluster-scoped RBAC named or
// labelled spanbench.
func requireUninstalled(ctx context.Context) error {
	var left []string
	// The CRD by its metadata only: the apiextensions types are not among
	// the project's direct dependencies.
	crd := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: crdName}}
	crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	campaignCRD := crd.DeepCopy()
	campaignCRD.Name = campaignCRDName
	for _, o := range []struct {
		kind string
		obj  client.Object
	}{
		{"CustomResourceDefinition", crd},
		{"CustomResourceDefinition", campaignCRD},
		{"Namespace", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: managerNamespace}}},
	} {
		switch err := suite.c.Get(ctx, client.ObjectKeyFromObject(o.obj), o.obj); {
		case apierrors.IsNotFound(err):
		case err != nil:
			return err
		default:
			left = append(left, o.kind+" "+o.obj.GetName())
		}
	}
	ours := func(o metav1.Object) bool {
		return strings.HasPrefix(o.GetName(), "spanbench-") || o.GetLabels()["app.kubernetes.io/name"] == "spanbench"
	}
	roles := &rbacv1.ClusterRoleList{}
	if err := suite.c.List(ctx, roles); err != nil {
		return err
	}
	for i := range roles.Items {
		if ours(&roles.Items[i]) {
			left = append(left, "ClusterRole "+roles.Items[i].Name)
		}
	}
	bindings := &rbacv1.ClusterRoleBindingList{}
	if err := suite.c.List(ctx, bindings); err != nil {
		return err
	}
	for i := range bindings.Items {
		if ours(&bindings.Items[i]) {
			left = append(left, "ClusterRoleBinding "+bindings.Items[i].Name)
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("left on the cluster: %s", strings.Join(left, ", "))
	}
	return nil
}

// waitTestNamespacesGone waits until the tests' namespaces (label
// spanbench.io/e2e) have been deleted, bounded by timeout.
func waitTestNamespacesGone(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		list := &corev1.NamespaceList{}
		if err := suite.c.List(ctx, list, client.HasLabels{"spanbench.io/e2e"}); err != nil {
			return err
		}
		if len(list.Items) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			names := []string{}
			for _, ns := range list.Items {
				names = append(names, ns.Name+"="+string(ns.Status.Phase))
			}
			return fmt.Errorf("the tests' namespaces are not gone within %s: %s", timeout, strings.Join(names, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// helm runs the Helm CLI against the local cluster, bounded by timeout.
// Its cache, config and data go to a directory of the suite's own, removed
// at the end, never the user's home.
func helm(ctx context.Context, timeout time.Duration, args ...string) (string, error) {
	if err := findHelm(ctx); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, suite.helm, append([]string{"--kubeconfig", suite.kubeconfig}, args...)...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(suite.helmHome, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(suite.helmHome, "config"),
		"HELM_DATA_HOME="+filepath.Join(suite.helmHome, "data"),
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

// findHelm sets suite.helm: $SPANBENCH_E2E_HELM (hack/e2e.sh sets it), else
// what hack/helm.sh prints (it builds Helm when it is not cached: minutes).
func findHelm(ctx context.Context) error {
	if suite.helm != "" {
		return nil
	}
	path := os.Getenv("SPANBENCH_E2E_HELM")
	if path == "" {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(suite.root, "hack", "helm.sh"))
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("hack/helm.sh (finds or builds the Helm CLI): %w", err)
		}
		path = strings.TrimSpace(string(out))
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("the Helm CLI: %w (hack/helm.sh builds it)", err)
	}
	home, err := os.MkdirTemp("", "spanbench-e2e-helm-")
	if err != nil {
		return err
	}
	suite.helm, suite.helmHome = path, home
	return nil
}

// TestHelmUpgrade upgrades the suite's release in place, as a user
// changing a value would (a pod annotation: a new manager pod): the
// upgrade must apply (no immutable field changed, no object adopted
// twice), roll the manager out to one ready pod under the new revision,
// and leave the admission policy admitting runs. Helm pass only; not
// parallel: it replaces the manager every other test needs.
func TestHelmUpgrade(t *testing.T) {
	if suite.install != installHelm {
		t.Skipf("runs in the %s pass only", installHelm)
	}
	before := managerPod(t)
	out, err := helm(t.Context(), 2*time.Minute, "upgrade", releaseName, filepath.Join(suite.root, chartDir),
		"--namespace", managerNamespace, "--values", filepath.Join(suite.root, helmValues),
		"--set-string", "podAnnotations.spanbench\\.io/e2e-upgrade=1", "--wait", "--timeout=100s")
	if err != nil {
		t.Fatalf("helm upgrade %s: %v\n%s", releaseName, err, out)
	}
	if out, err := kubectlCtx(t.Context(), 130*time.Second, "-n", managerNamespace, "rollout", "status", "deployment/"+managerDeployment, "--timeout=120s"); err != nil {
		t.Fatalf("the upgraded manager did not roll out: %v: %s", err, out)
	}
	after := managerPod(t)
	if after.Name == before.Name || after.Annotations["spanbench.io/e2e-upgrade"] != "1" {
		t.Errorf("the upgrade did not replace the manager pod with the new template: %s (annotations %v), before %s", after.Name, after.Annotations, before.Name)
	}
	history, err := helm(t.Context(), 30*time.Second, "history", releaseName, "--namespace", managerNamespace, "-o", "json")
	if err != nil || !strings.Contains(history, `"revision":2`) || !strings.Contains(history, `"status":"deployed"`) {
		t.Errorf("helm history after the upgrade: %v\n%s", err, history)
	}
	if err := awaitAdmission(t.Context()); err != nil {
		t.Error(err)
	}
	if err := checkInstall(t.Context()); err != nil {
		t.Errorf("after the upgrade: %v", err)
	}
}

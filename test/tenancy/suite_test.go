// Package tenancy checks the tenancy policy (config/admission-policy,
// docs/security.md) on a real kube-apiserver with RBAC on (envtest) and
// real users authenticated by client certificates: a user who may only
// create BenchmarkRuns and BenchmarkCampaigns cannot make the manager run
// pods as an account, with an image, or with a Secret they could not use
// themselves, and can still run a normal benchmark.
//
// Run with: KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh) go test ./test/tenancy/
package tenancy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/tenancy"
	admission "github.com/spanbench/spanbench/controllers/webhook"
	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/internal/runtest"
	"github.com/spanbench/spanbench/internal/testenv"
)

const (
	// teamNS is where the tenants create their runs.
	teamNS = "team"
	// systemNS is the manager's namespace, as config/default installs it.
	systemNS = "spanbench-system"
	// managerUser is the manager's service account, as a user name.
	managerUser = "system:serviceaccount:spanbench-system:spanbench-manager"
)

// The users of the suite. Every one may create BenchmarkRuns and
// BenchmarkCampaigns in teamNS and systemNS; some may do more.
const (
	// tenant may do nothing else: no pods, no Secrets.
	tenant = "tenant"
	// podMaker may also create pods in teamNS.
	podMaker = "pod-maker"
	// secretReader may also get the Secret spanner-key in teamNS.
	secretReader = "secret-reader"
	// impersonator may also impersonate the service account wi-runner.
	impersonator = "impersonator"
)

var (
	scheme = runtime.NewScheme()
	admin  client.Client
	// clients are the users' clients, by user name (managerUser too).
	clients = map[string]client.Client{}
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "tenancy: KUBEBUILDER_ASSETS is not set: run `make test`, or export KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh)")
		return 1
	}
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme} {
		if err := add(scheme); err != nil {
			fmt.Fprintf(os.Stderr, "tenancy: registering types: %v\n", err)
			return 1
		}
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:        []string{filepath.Join("..", "..", "config", "crd", "bases")},
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
		// The campaign webhooks as config/webhook installs them, served
		// in-process (serveWebhook): what a matrix's patches change only
		// the webhook can see.
		WebhookInstallOptions: envtest.WebhookInstallOptions{Paths: []string{
			filepath.Join("..", "..", "config", "webhook", "validating_webhook.yaml"),
			filepath.Join("..", "..", "config", "webhook", "mutating_webhook.yaml"),
		}},
	}
	// envtest's default, stated: the policy's authorizer checks ask RBAC.
	env.ControlPlane.GetAPIServer().Configure().Set("authorization-mode", "RBAC")
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "tenancy: starting kube-apiserver and etcd: %v\n", err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "tenancy: stopping envtest: %v\n", err)
		}
	}()
	cfg.Timeout = testenv.RequestTimeout
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := setup(env, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "tenancy: %v\n", err)
		return 1
	}
	if err := serveWebhook(ctx, &env.WebhookInstallOptions); err != nil {
		fmt.Fprintf(os.Stderr, "tenancy: %v\n", err)
		return 1
	}
	return m.Run()
}

// setup installs the policy as config/admission-policy ships it, makes the
// users and their permissions, and waits until the policy is in force.
func setup(env *envtest.Environment, cfg *rest.Config) error {
	var err error
	if admin, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: teamNS}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: systemNS}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "wi-runner", Namespace: teamNS}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "opted-runner", Namespace: teamNS}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "spanner-key", Namespace: teamNS}, StringData: map[string]string{"key.json": "{}"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "shared-key", Namespace: teamNS}, StringData: map[string]string{"key.json": "{}"}},
	}
	policy, err := policyObjects()
	if err != nil {
		return err
	}
	objs = append(objs, policy...)
	objs = append(objs, permissions()...)
	for _, o := range objs {
		if err := admin.Create(ctx, o); err != nil {
			return fmt.Errorf("creating %T %s: %w", o, o.GetName(), err)
		}
	}
	for _, name := range []string{tenant, podMaker, secretReader, impersonator, managerUser} {
		u, err := env.AddUser(envtest.User{Name: name}, cfg)
		if err != nil {
			return fmt.Errorf("adding user %s: %w", name, err)
		}
		if clients[name], err = client.New(u.Config(), client.Options{Scheme: scheme}); err != nil {
			return err
		}
	}
	// The policy and its binding reach the API server's admission through
	// informers: wait until a run it refuses is refused.
	ok, last := await.Until(ctx, await.Poll{Within: time.Minute, Every: 200 * time.Millisecond}, func() (bool, string) {
		err := clients[tenant].Create(ctx, runtest.Run("probe").InNamespace(teamNS).ServiceAccount("default").Obj(), client.DryRunAll)
		return err != nil && strings.Contains(err.Error(), `"default" is refused`), fmt.Sprint(err)
	})
	if !ok {
		return fmt.Errorf("the tenancy policy did not come into force within a minute; last answer: %s", last)
	}
	return nil
}

// serveWebhook serves the manager's campaign webhooks where envtest
// pointed the installed configurations, reviewing permissions with the
// admin's client (the manager's may create SubjectAccessReviews too), and
// returns once a campaign is admitted through them.
func serveWebhook(ctx context.Context, wh *envtest.WebhookInstallOptions) error {
	if err := testenv.ServeWebhook(ctx, wh, func(srv webhook.Server) { admission.Register(srv, scheme, admin, admission.Costs{}) }); err != nil {
		return err
	}
	// The configurations reach the API server's admission through
	// informers: wait until a campaign is admitted and stamped.
	ok, last := await.Until(ctx, await.Poll{Within: time.Minute, Every: 100 * time.Millisecond}, func() (bool, string) {
		c := &v1alpha1.BenchmarkCampaign{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: teamNS},
			Spec: v1alpha1.BenchmarkCampaignSpec{Template: v1alpha1.BenchmarkRunTemplate{Spec: runtest.Run("probe").Obj().Spec}}}
		err := clients[tenant].Create(ctx, c, client.DryRunAll)
		return err == nil && c.Annotations[tenancy.WriterAnnotation] != "", fmt.Sprint(err)
	})
	if !ok {
		return fmt.Errorf("the campaign webhooks did not admit and stamp a campaign within a minute; last answer: %s", last)
	}
	return nil
}

// policyObjects are the objects of config/admission-policy, as shipped.
func policyObjects() ([]client.Object, error) {
	dir := filepath.Join("..", "..", "config", "admission-policy")
	var out []client.Object
	for _, f := range []string{"policy.yaml", "binding.yaml"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(string(b)), 4096).Decode(&u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, u)
	}
	return out, nil
}

// permissions are the users' Roles and RoleBindings.
func permissions() []client.Object {
	authoring := rbacv1.PolicyRule{APIGroups: []string{v1alpha1.GroupVersion.Group},
		Resources: []string{"benchmarkruns", "benchmarkcampaigns"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}}
	roles := map[string][]rbacv1.PolicyRule{
		"author":        {authoring},
		"pod-maker":     {{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create"}}},
		"secret-reader": {{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}, ResourceNames: []string{"spanner-key"}}},
		"impersonator":  {{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate"}, ResourceNames: []string{"wi-runner"}}},
	}
	var out []client.Object
	bind := func(ns, role string, users ...string) {
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role, Namespace: ns},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role}}
		for _, u := range users {
			rb.Subjects = append(rb.Subjects, rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: u})
		}
		out = append(out, rb)
	}
	for _, ns := range []string{teamNS, systemNS} {
		for name, rules := range roles {
			out = append(out, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Rules: rules})
		}
		bind(ns, "author", tenant, podMaker, secretReader, impersonator, managerUser)
	}
	bind(teamNS, "pod-maker", podMaker)
	bind(teamNS, "secret-reader", secretReader)
	bind(teamNS, "impersonator", impersonator)
	return out
}

// bounded is a context for one API call.
func bounded(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testenv.RequestTimeout)
	t.Cleanup(cancel)
	return ctx
}

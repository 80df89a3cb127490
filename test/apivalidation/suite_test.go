// Package apivalidation checks the BenchmarkRun and BenchmarkCampaign CRDs
// on a real kube-apiserver (envtest), with the manager's campaign admission
// webhook served in-process: manifests that are wrong are refused at
// admission with a message that names the field, good ones are stored as
// sent, and the Go validation the CLI uses (customcheck.Run and .Campaign,
// and plan.Admit) agrees with the server on
// every case.
//
// Run with: KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh) go test ./test/apivalidation/
package apivalidation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/spanbench/spanbench/api/v1alpha1"
	admission "github.com/spanbench/spanbench/controllers/webhook"
	"github.com/spanbench/spanbench/internal/testenv"
)

// requestTimeout bounds every call to the API server.
const requestTimeout = testenv.RequestTimeout

var (
	cfg       *rest.Config
	k8sClient client.Client
	scheme    = runtime.NewScheme()
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fmt.Fprintf(os.Stderr, "apivalidation: registering client-go types: %v\n", err)
		return 1
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		fmt.Fprintf(os.Stderr, "apivalidation: registering v1alpha1: %v\n", err)
		return 1
	}
	crds := []string{filepath.Join("..", "..", "config", "crd", "bases")}
	webhooks := []string{filepath.Join("..", "..", "config", "webhook", "validating_webhook.yaml")}
	return testenv.RunWithWebhooks(m, "apivalidation", crds, webhooks, func(ctx context.Context, c *rest.Config, wh *envtest.WebhookInstallOptions) (err error) {
		cfg = c
		k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			return err
		}
		return serveWebhook(ctx, wh)
	})
}

// serveWebhook serves the manager's campaign admission webhook where
// envtest pointed the installed configuration, with the certificate envtest
// issued, and returns once it accepts TLS connections.
func serveWebhook(ctx context.Context, wh *envtest.WebhookInstallOptions) error {
	return testenv.ServeWebhook(ctx, wh, func(srv webhook.Server) { admission.Register(srv, scheme, k8sClient, admission.Costs{}) })
}

// bounded is a context for one API call.
func bounded(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	t.Cleanup(cancel)
	return ctx
}

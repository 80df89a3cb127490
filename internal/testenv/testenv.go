// Package testenv runs a test package against envtest's real kube-apiserver
// and etcd (built by hack/envtest-assets.sh), the same way for every suite:
// a clear failure, never a skip, when the binaries are missing, bounded
// start and stop, and the CRDs of config/crd/bases when asked for.
package testenv

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/spanbench/spanbench/internal/await"
)

// RequestTimeout bounds every call a suite makes to the API server.
const RequestTimeout = 30 * time.Second

// Run starts the control plane (installing the CRDs found in crdDirs),
// hands its config to setup, runs the package's tests and stops the
// control plane. It returns the exit code for os.Exit. name prefixes its
// messages.
func Run(m *testing.M, name string, crdDirs []string, setup func(*rest.Config) error) int {
	return RunWithWebhooks(m, name, crdDirs, nil, func(_ context.Context, c *rest.Config, _ *envtest.WebhookInstallOptions) error {
		return setup(c)
	})
}

// RunWithWebhooks is Run that also installs the webhook configurations of
// webhookPaths (files or directories; other kinds in them are ignored),
// rewritten by envtest to call a server on loopback at
// wh.LocalServingHost:wh.LocalServingPort with the certificate it wrote to
// wh.LocalServingCertDir. setup starts that server; ctx ends after the
// tests, before the control plane stops.
func RunWithWebhooks(m *testing.M, name string, crdDirs, webhookPaths []string,
	setup func(ctx context.Context, c *rest.Config, wh *envtest.WebhookInstallOptions) error) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintf(os.Stderr, "%s: KUBEBUILDER_ASSETS is not set: run `make test`, or export KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh)\n", name)
		return 1
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:        crdDirs,
		ErrorIfCRDPathMissing:    len(crdDirs) > 0,
		ControlPlaneStartTimeout: 2 * time.Minute,
		ControlPlaneStopTimeout:  time.Minute,
		WebhookInstallOptions:    envtest.WebhookInstallOptions{Paths: webhookPaths},
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: starting kube-apiserver and etcd (CRDs from %v): %v\n", name, crdDirs, err)
		// Start leaves the control plane running when installing the CRDs
		// or webhooks fails (a CRD the API server refuses).
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: stopping envtest: %v\n", name, err)
		}
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: stopping envtest: %v\n", name, err)
		}
	}()
	cfg.Timeout = RequestTimeout
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := setup(ctx, cfg, &env.WebhookInstallOptions); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	return m.Run()
}

// ForManagers is the setup of a suite that runs controller managers: it
// stores in *dst a copy of the control plane's config without the
// per-request timeout, which would cut the managers' long-lived watches.
func ForManagers(dst **rest.Config) func(*rest.Config) error {
	return func(c *rest.Config) error {
		*dst = rest.CopyConfig(c)
		(*dst).Timeout = 0
		return nil
	}
}

// ServeWebhook serves the handlers register adds where envtest pointed the
// installed webhook configurations (wh), with the certificate envtest
// issued, until ctx ends, and returns once the server accepts TLS
// connections.
func ServeWebhook(ctx context.Context, wh *envtest.WebhookInstallOptions, register func(webhook.Server)) error {
	srv := webhook.NewServer(webhook.Options{Host: wh.LocalServingHost, Port: wh.LocalServingPort, CertDir: wh.LocalServingCertDir})
	register(srv)
	go func() {
		if err := srv.Start(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "the webhook server stopped: %v\n", err)
		}
	}()
	started := srv.StartedChecker()
	ok, state := await.Until(ctx, await.Poll{Within: RequestTimeout, Every: 50 * time.Millisecond}, func() (bool, string) {
		err := started(nil)
		return err == nil, fmt.Sprint(err)
	})
	if !ok {
		return fmt.Errorf("the webhook server did not start within %s: %s", RequestTimeout, state)
	}
	return nil
}

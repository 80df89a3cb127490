// Package apivalidation checks the BenchmarkRun CRD on a real kube-apiserver
// (envtest): manifests that are wrong are refused at admission with a message
// that names the field, good ones are stored as sent, and the Go validation
// the CLI uses (BenchmarkRun.Validate) agrees with the server on every case.
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

	"github.com/spanbench/spanbench/internal/testenv"

	"github.com/spanbench/spanbench/api/v1alpha1"
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
	return testenv.Run(m, "apivalidation", crds, func(c *rest.Config) (err error) {
		cfg = c
		k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
		return err
	})
}

// bounded is a context for one API call.
func bounded(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	t.Cleanup(cancel)
	return ctx
}

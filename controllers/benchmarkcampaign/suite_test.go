package benchmarkcampaign_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/testenv"
)

var (
	restConfig *rest.Config
	scheme     = runtime.NewScheme()
)

// TestMain starts a real API server for the campaign scenarios; the fake
// client's tests use only the scheme.
func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	crds := []string{filepath.Join("..", "..", "config", "crd", "bases")}
	os.Exit(testenv.Run(m, "benchmarkcampaign", crds, testenv.ForManagers(&restConfig)))
}

// t0 is the fake clock's time when a test starts; campaigns and runs are
// created then.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// Where the suite finds the cluster; every path can be overridden from the
// environment, the defaults are what hack/cluster-up.sh writes.
const (
	defaultKubeVersion    = "v1.33.4"
	defaultContainerdSock = "/run/spanbench-cluster/containerd.sock"
	managerNamespace      = "spanbench-system"
	managerDeployment     = "spanbench-manager"
	managerSelector       = "app.kubernetes.io/component=manager"
	image                 = "localhost/spanbench/spanbench:dev"
	demoSample            = "config/samples/demo.yaml"
	installDir            = "test/e2e/testdata/install"
)

// suite is what every test uses, set up once by TestMain.
var suite struct {
	root, kubectl, kubeconfig, containerdSock string
	// emulatorHost is spec.target.emulatorHost of every run: the sample's
	// (the node address), or $SPANBENCH_E2E_EMULATOR_HOST.
	emulatorHost string
	c            client.Client
}

func TestMain(m *testing.M) {
	if err := setup(); err != nil {
		fmt.Fprintf(os.Stderr, "\ne2e: %v\n\n", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// setup finds the cluster, the emulator and the image, and installs
// spanbench. Anything missing is an error that says how to provide it:
// the suite fails, it never skips.
func setup() error {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return err
	}
	suite.root = root
	suite.kubeconfig = envOr("SPANBENCH_E2E_KUBECONFIG", filepath.Join(root, "bin", "cluster", "kubeconfig"))
	suite.containerdSock = envOr("SPANBENCH_E2E_CONTAINERD", defaultContainerdSock)
	suite.kubectl = filepath.Join(root, "bin", "k8s", defaultKubeVersion, "kubectl")
	if _, err := os.Stat(suite.kubectl); err != nil {
		if suite.kubectl, err = exec.LookPath("kubectl"); err != nil {
			return errors.New("no kubectl: build it with hack/kube-binaries.sh kubectl")
		}
	}
	notUp := "the local cluster is not up: run `make test-e2e` (it brings the cluster up, runs the suite and tears it down) or `hack/demo.sh up` first"
	if _, err := os.Stat(suite.kubeconfig); err != nil {
		return fmt.Errorf("no kubeconfig at %s: %s", suite.kubeconfig, notUp)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", suite.kubeconfig)
	if err != nil {
		return fmt.Errorf("reading %s: %w", suite.kubeconfig, err)
	}
	// The node address exists only while the cluster runs; without it a
	// connection would follow the default route off this machine. Nothing
	// is dialled unless it is local.
	u, err := url.Parse(cfg.Host)
	if err != nil {
		return fmt.Errorf("%s: server %q: %w", suite.kubeconfig, cfg.Host, err)
	}
	if err := requireLocal(u.Hostname()); err != nil {
		return fmt.Errorf("API server %s: %v: %s", cfg.Host, err, notUp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if out, err := kubectlCtx(ctx, 10*time.Second, "get", "--raw", "/readyz"); err != nil {
		return fmt.Errorf("the API server does not answer (%v: %s): %s", err, out, notUp)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	if suite.c, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		return err
	}

	sample, err := readSample()
	if err != nil {
		return err
	}
	suite.emulatorHost = envOr("SPANBENCH_E2E_EMULATOR_HOST", sample.Spec.Target.EmulatorHost)
	host, _, err := net.SplitHostPort(suite.emulatorHost)
	if err != nil {
		return fmt.Errorf("emulator host %q: %w", suite.emulatorHost, err)
	}
	if err := requireLocal(host); err != nil {
		return fmt.Errorf("emulator %s: %v: `hack/demo.sh up` starts the cluster and an emulator on its node address", suite.emulatorHost, err)
	}
	conn, err := net.DialTimeout("tcp", suite.emulatorHost, 3*time.Second)
	if err != nil {
		return fmt.Errorf("no Cloud Spanner emulator at %s (%v): `hack/demo.sh up` starts one on the node address, where pods reach it", suite.emulatorHost, err)
	}
	_ = conn.Close()

	out, err := ctr(ctx, "images", "ls", "-q", "name=="+image)
	if err != nil || !strings.Contains(out, image) {
		return fmt.Errorf("image %s is not in the cluster's containerd (%v): build and load it with `hack/build-images.sh --tag dev --import`", image, err)
	}
	return install(ctx)
}

// install applies the e2e kustomization (config/default with
// --keep-runners) and waits for the manager. A manager that already ran is
// restarted: the image tag is reused across builds.
func install(ctx context.Context) error {
	_, getErr := kubectlCtx(ctx, 20*time.Second, "-n", managerNamespace, "get", "deployment", managerDeployment)
	existed := getErr == nil
	if out, err := kubectlCtx(ctx, time.Minute, "apply", "-k", filepath.Join(suite.root, installDir)); err != nil {
		return fmt.Errorf("kubectl apply -k %s: %v: %s", installDir, err, out)
	}
	if out, err := kubectlCtx(ctx, 40*time.Second, "wait", "--for=condition=Established", "crd/benchmarkruns.bench.spanbench.io", "--timeout=30s"); err != nil {
		return fmt.Errorf("the BenchmarkRun CRD is not established: %v: %s", err, out)
	}
	if existed {
		if out, err := kubectlCtx(ctx, 20*time.Second, "-n", managerNamespace, "rollout", "restart", "deployment/"+managerDeployment); err != nil {
			return fmt.Errorf("restarting the manager: %v: %s", err, out)
		}
	}
	if out, err := kubectlCtx(ctx, 130*time.Second, "-n", managerNamespace, "rollout", "status", "deployment/"+managerDeployment, "--timeout=120s"); err != nil {
		pods, _ := kubectlCtx(ctx, 10*time.Second, "-n", managerNamespace, "get", "pods", "-o", "wide")
		return fmt.Errorf("the manager did not become ready: %v: %s\n%s", err, out, pods)
	}
	return nil
}

// readSample decodes the demo sample, the run every test starts from.
func readSample() (*v1alpha1.BenchmarkRun, error) {
	b, err := os.ReadFile(filepath.Join(suite.root, demoSample))
	if err != nil {
		return nil, err
	}
	run := &v1alpha1.BenchmarkRun{}
	if err := yaml.UnmarshalStrict(b, run); err != nil {
		return nil, fmt.Errorf("%s: %w", demoSample, err)
	}
	return run, nil
}

// requireLocal refuses a host that is not an address of this machine: the
// suite talks to nothing else.
func requireLocal(host string) error {
	ip := net.ParseIP(host)
	if ip == nil {
		return fmt.Errorf("%q is not an IP address; the suite only talks to addresses of this machine", host)
	}
	if ip.IsLoopback() {
		return nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return nil
		}
	}
	return fmt.Errorf("%s is not an address of this machine (the local cluster adds its node address to lo while it runs)", ip)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// kubectlCtx runs kubectl against the local cluster, bounded by timeout.
func kubectlCtx(ctx context.Context, timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, suite.kubectl, append([]string{"--kubeconfig", suite.kubeconfig}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

// ctr runs containerd's CLI against the cluster's containerd, in the
// namespace the CRI plugin uses.
func ctr(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"--address", suite.containerdSock, "-n", "k8s.io"}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

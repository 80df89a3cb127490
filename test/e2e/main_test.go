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
	image                 = "localhost/spanbench/spanbench:dev"
	demoSample            = "config/samples/demo.yaml"
	// customSample is a Custom run: only those call the manager's webhook.
	customSample = "config/samples/custom-single-vs-multi-region.yaml"
)

// suite is what every test uses, set up once by TestMain.
var suite struct {
	root, kubectl, kubeconfig, containerdSock string
	// emulatorHost is spec.target.emulatorHost of every run: the sample's
	// (the node address), or $SPANBENCH_E2E_EMULATOR_HOST.
	emulatorHost string
	// c can also watch (the fault tests react to a phase as it is written).
	c client.WithWatch
	// install is how spanbench is installed: installKustomize or
	// installHelm ($SPANBENCH_E2E_INSTALL); installed once setup began
	// installing it.
	install   string
	installed bool
	// helm and helmHome: the Helm CLI and its cache/config directory, set
	// when Helm is first needed.
	helm, helmHome string
}

// TestMain installs spanbench, runs the tests, and uninstalls it again:
// the suite leaves the cluster without spanbench, so that the next run, of
// either install method, starts from scratch. A failed uninstall (or one
// that leaves an object behind) fails the suite.
// SPANBENCH_E2E_KEEP_INSTALL=1 (or SPANBENCH_E2E_KEEP_NAMESPACES, whose runs
// need the CRD) leaves the install in place for a look afterwards.
func TestMain(m *testing.M) {
	var code int
	start := time.Now()
	if err := setup(); err != nil {
		fmt.Fprintf(os.Stderr, "\ne2e: %v\n\n", err)
		code = 1
	} else {
		fmt.Fprintf(os.Stderr, "e2e: spanbench installed with %s in %s\n", suite.install, time.Since(start).Round(time.Second))
		code = m.Run()
	}
	if err := teardown(); err != nil {
		fmt.Fprintf(os.Stderr, "\ne2e: uninstalling (%s): %v\n\n", suite.install, err)
		code = max(code, 1)
	}
	if suite.helmHome != "" {
		_ = os.RemoveAll(suite.helmHome)
	}
	os.Exit(code)
}

// teardown uninstalls what setup installed (see TestMain).
func teardown() error {
	if !suite.installed {
		return nil
	}
	if os.Getenv("SPANBENCH_E2E_KEEP_INSTALL") != "" || os.Getenv("SPANBENCH_E2E_KEEP_NAMESPACES") != "" {
		fmt.Fprintf(os.Stderr, "e2e: leaving the %s install in place (SPANBENCH_E2E_KEEP_*)\n", suite.install)
		return nil
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := uninstall(ctx); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "e2e: spanbench (%s) uninstalled in %s; nothing of it left on the cluster\n", suite.install, time.Since(start).Round(time.Second))
	return nil
}

// setup finds the cluster, the emulator and the image, and installs
// spanbench ($SPANBENCH_E2E_INSTALL: kustomize or helm). Anything missing is
// an error that says how to provide it: the suite fails, it never skips.
func setup() error {
	var err error
	if suite.install, err = installMethod(); err != nil {
		return err
	}
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
		return fmt.Errorf("API server %s: %w: %s", cfg.Host, err, notUp)
	}
	// Checks, removing an earlier install (2 min at most), installing (3).
	ctx, cancel := context.WithTimeout(context.Background(), 7*time.Minute)
	defer cancel()
	if out, err := kubectlCtx(ctx, 10*time.Second, "get", "--raw", "/readyz"); err != nil {
		return fmt.Errorf("the API server does not answer (%w: %s): %s", err, out, notUp)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		return err
	}
	if suite.c, err = client.NewWithWatch(cfg, client.Options{Scheme: scheme}); err != nil {
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
		return fmt.Errorf("emulator %s: %w: `hack/demo.sh up` starts the cluster and an emulator on its node address", suite.emulatorHost, err)
	}
	conn, err := net.DialTimeout("tcp", suite.emulatorHost, 3*time.Second)
	if err != nil {
		return fmt.Errorf("no Cloud Spanner emulator at %s (%w): `hack/demo.sh up` starts one on the node address, where pods reach it", suite.emulatorHost, err)
	}
	_ = conn.Close()

	out, err := ctr(ctx, "images", "ls", "-q", "name=="+image)
	if err != nil || !strings.Contains(out, image) {
		return fmt.Errorf("image %s is not in the cluster's containerd (%w): build and load it with `hack/build-images.sh --tag dev --import`", image, err)
	}
	return install(ctx)
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

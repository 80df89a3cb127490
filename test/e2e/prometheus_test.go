//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// TestPrometheusScrapesRunnersAndManager runs a real Prometheus (Debian's)
// on this host's loopback, scraping the runner pods and the manager at their
// pod IPs the way config/prometheus/scrape-config.yaml does in a cluster:
// runner pods by their prometheus.io annotations, the manager's metrics port
// over HTTPS with a service account token bound to spanbench-metrics-reader.
// The manager is scraped a second time the way the ServiceMonitors
// (config/prometheus/monitor.yaml, the chart's serviceMonitor) do: the
// endpoints of its metrics Service, selected by label, at the port named
// metrics, with honor_labels. Then the runners' live series and the
// manager's exact result series of the run, through both, are queried over
// Prometheus' HTTP API.
//
// Debian builds Prometheus without kubernetes_sd, so this test discovers the
// pods and endpoints itself (the same selection and relabelling) and hands
// Prometheus the targets through file_sd.
func TestPrometheusScrapesRunnersAndManager(t *testing.T) {
	kustomizePassOnly(t)
	t.Parallel()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatalf("no prometheus binary: install Debian's with `hack/install-deps.sh prometheus`")
	}
	ns := newNamespace(t, "e2e-prom")
	token := metricsReaderToken(t, ns)
	prom := startPrometheus(t, bin, ns, token)

	run := demoRun(t, ns, "scraped", withLoad(16*time.Second, 100))
	create(t, run)
	run = waitFinished(t, ns, run.Name, runTimeout)
	requireSucceeded(t, run, v1alpha1.ReasonCompleted)

	// The runners' live series: both pods scraped while they sent load.
	// The pods have exited, so their series are stale now: look back.
	q := fmt.Sprintf(`count by (pod) (last_over_time(spanbench_operations_total{namespace=%q, run=%q}[5m]))`, ns, run.Name)
	eventually(t, 30*time.Second, "runner series in Prometheus", func(ctx context.Context) (bool, string) {
		res, err := prom.query(ctx, q)
		if err != nil {
			return false, err.Error()
		}
		if len(res) != 2 {
			return false, fmt.Sprintf("%s: series of %d pods, want 2: %v", q, len(res), res)
		}
		return true, ""
	})
	// Counted while the load ran: more than nothing, at most what the
	// status counts over the whole run (warm-up included there is more).
	q = fmt.Sprintf(`sum(last_over_time(spanbench_operations_total{namespace=%q, run=%q, code="OK"}[5m]))`, ns, run.Name)
	res, err := prom.query(t.Context(), q)
	if err != nil || len(res) != 1 || res[0].value <= 0 {
		t.Errorf("%s: %v %v, want successful operations counted", q, res, err)
	}
	t.Logf("%s = %v (status: %d after the warm-up)", q, res, run.Status.Overall.Count)

	// The manager's exact figures of the finished run, as the status has
	// them.
	// One series per manager job: through the pod, and through the
	// Service. honor_labels keeps the run's namespace (not the manager's).
	want := run.Status.Overall.Latency.P99.Seconds()
	q = fmt.Sprintf(`spanbench_run_latency_seconds{namespace=%q, run=%q, operation="overall", quantile="0.99"}`, ns, run.Name)
	eventually(t, 30*time.Second, "the manager's result series in Prometheus", func(ctx context.Context) (bool, string) {
		res, err := prom.query(ctx, q)
		if err != nil {
			return false, err.Error()
		}
		byJob := map[string][]sample{}
		for _, r := range res {
			byJob[r.labels["job"]] = append(byJob[r.labels["job"]], r)
		}
		for _, job := range []string{"spanbench-manager", "spanbench-manager-service"} {
			if len(byJob[job]) != 1 {
				up, _ := prom.query(ctx, `up`)
				return false, fmt.Sprintf("%s: %d series of job %s, want 1 (all: %v; targets up: %v)", q, len(byJob[job]), job, res, up)
			}
			if v := byJob[job][0].value; v != want {
				return false, fmt.Sprintf("%s = %v in job %s, status p99 %v", q, v, job, want)
			}
		}
		return true, ""
	})
}

// metricsReaderToken makes a service account bound to the manager's
// metrics-reader ClusterRole (config/rbac) and returns a token of it: the
// manager serves /metrics only to callers the API server authorizes.
func metricsReaderToken(t *testing.T, ns string) string {
	t.Helper()
	create(t, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "prometheus"}})
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-prometheus"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReaderRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "prometheus"}},
	}
	create(t, crb)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = suite.c.Delete(ctx, crb)
	})
	return kubectl(t, "-n", ns, "create", "token", "prometheus", "--duration=1h")
}

// prometheus is a Prometheus process this test started.
type prometheus struct{ base string }

// startPrometheus starts Prometheus on a free loopback port with its data
// in a temporary directory, keeps its targets file up to date, and stops it
// (by its PID) when the test ends.
func startPrometheus(t *testing.T, bin, ns, token string) *prometheus {
	t.Helper()
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	files := targetFiles{
		runners: filepath.Join(dir, "runners.json"),
		manager: filepath.Join(dir, "manager.json"),
		service: filepath.Join(dir, "manager-service.json"),
	}
	discover(t, ns, files)
	cfg := fmt.Sprintf(scrapeConfig, files.runners, tokenFile, files.manager, tokenFile, files.service)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	logPath := filepath.Join(dir, "prometheus.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr,
		"--storage.tsdb.retention.time=1h")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting prometheus: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited: //nolint:errcheck // the exit status of a Prometheus the test stops says nothing
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited //nolint:errcheck // as above
		}
		_ = logFile.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("prometheus log (tail):\n%s", tail(string(b), 30))
		}
	})
	p := &prometheus{base: "http://" + addr}
	eventually(t, 30*time.Second, "prometheus ready on "+addr, func(ctx context.Context) (bool, string) {
		select {
		case err := <-exited:
			exited <- err
			return false, fmt.Sprintf("prometheus exited: %v", err)
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/-/ready", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err.Error()
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	})
	return p
}

// scrapeConfig is config/prometheus/scrape-config.yaml with file_sd in
// place of kubernetes_sd (see discover), and a job that scrapes the manager
// through its Service's endpoints as a ServiceMonitor does. Arguments: the
// runners' targets file, the token file, the manager's targets file, the
// token file, the manager Service's targets file.
const scrapeConfig = `
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: spanbench-runners
    file_sd_configs: [{files: [%s]}]
  - job_name: spanbench-manager
    honor_labels: true
    scheme: https
    tls_config: {insecure_skip_verify: true}
    authorization: {credentials_file: %s}
    file_sd_configs: [{files: [%s]}]
  - job_name: spanbench-manager-service
    honor_labels: true
    scheme: https
    tls_config: {insecure_skip_verify: true}
    authorization: {credentials_file: %s}
    file_sd_configs: [{files: [%s]}]
`

// targetFiles are Prometheus' file_sd files, one per job.
type targetFiles struct{ runners, manager, service string }

// discover writes Prometheus' targets files now and then every half second
// until the test ends, as kubernetes_sd with the relabelling of
// config/prometheus/scrape-config.yaml would find them: running pods of ns
// annotated prometheus.io/scrape=true, at podIP:prometheus.io/port, and the
// manager pods' port named metrics; and as a ServiceMonitor's would: the
// ready endpoints of the manager's metrics Service (serviceTargets).
func discover(t *testing.T, ns string, files targetFiles) {
	t.Helper()
	write := func(ctx context.Context) error {
		runners, err := targets(ctx, ns, nil, func(p *corev1.Pod) string {
			if p.Annotations["prometheus.io/scrape"] != "true" || p.Annotations["prometheus.io/port"] == "" {
				return ""
			}
			return p.Annotations["prometheus.io/port"]
		})
		if err != nil {
			return err
		}
		manager, err := targets(ctx, managerNamespace, managerLabels, func(p *corev1.Pod) string {
			for _, c := range p.Spec.Containers {
				for _, port := range c.Ports {
					if port.Name == "metrics" {
						return strconv.Itoa(int(port.ContainerPort))
					}
				}
			}
			return ""
		})
		if err != nil {
			return err
		}
		service, err := serviceTargets(ctx)
		if err != nil {
			return err
		}
		if err := writeAtomically(files.runners, runners); err != nil {
			return err
		}
		if err := writeAtomically(files.manager, manager); err != nil {
			return err
		}
		return writeAtomically(files.service, service)
	}
	if err := write(t.Context()); err != nil {
		t.Fatalf("writing Prometheus targets: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var failed int
	var lastErr error
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(500 * time.Millisecond):
				// Each round bounded: one slow List on a busy API server
				// must not leave the targets unwritten for a whole run.
				wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
				if err := write(wctx); err != nil && ctx.Err() == nil {
					failed, lastErr = failed+1, err
				}
				wcancel()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if failed > 0 {
			t.Logf("writing Prometheus targets failed %d times (every 0.5 s); the last: %v", failed, lastErr)
		}
	})
}

// targetGroup is one entry of a file_sd file.
type targetGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

// targets lists the running pods of ns matching labels whose port says
// where to scrape them ("" skips a pod).
func targets(ctx context.Context, ns string, labels map[string]string, port func(*corev1.Pod) string) ([]targetGroup, error) {
	pods := &corev1.PodList{}
	if err := suite.c.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
		return nil, err
	}
	out := []targetGroup{}
	for i := range pods.Items {
		p := &pods.Items[i]
		pt := port(p)
		if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || pt == "" {
			continue
		}
		out = append(out, targetGroup{
			Targets: []string{net.JoinHostPort(p.Status.PodIP, pt)},
			Labels:  map[string]string{"namespace": p.Namespace, "pod": p.Name},
		})
	}
	return out, nil
}

// serviceTargets finds the manager the way a ServiceMonitor selecting
// managerLabels does: the Services of the manager namespace with those
// labels, their EndpointSlices' ready endpoints, at the port named metrics.
func serviceTargets(ctx context.Context) ([]targetGroup, error) {
	svcs := &corev1.ServiceList{}
	if err := suite.c.List(ctx, svcs, client.InNamespace(managerNamespace), client.MatchingLabels(managerLabels)); err != nil {
		return nil, err
	}
	out := []targetGroup{}
	for _, svc := range svcs.Items {
		eps := &discoveryv1.EndpointSliceList{}
		if err := suite.c.List(ctx, eps, client.InNamespace(svc.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: svc.Name}); err != nil {
			return nil, err
		}
		for _, es := range eps.Items {
			var port int32
			for _, p := range es.Ports {
				if p.Name != nil && *p.Name == "metrics" && p.Port != nil {
					port = *p.Port
				}
			}
			if port == 0 {
				continue
			}
			for _, ep := range es.Endpoints {
				// A nil ready condition means ready (EndpointConditions).
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
					continue
				}
				pod := ""
				if ep.TargetRef != nil {
					pod = ep.TargetRef.Name
				}
				for _, a := range ep.Addresses {
					out = append(out, targetGroup{
						Targets: []string{net.JoinHostPort(a, strconv.Itoa(int(port)))},
						Labels:  map[string]string{"namespace": svc.Namespace, "service": svc.Name, "pod": pod},
					})
				}
			}
		}
	}
	return out, nil
}

// writeAtomically replaces a targets file in one rename, so that Prometheus
// never reads half of one.
func writeAtomically(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

type sample struct {
	labels map[string]string
	value  float64
}

func (s sample) String() string { return fmt.Sprintf("%v=%v", s.labels, s.value) }

// query runs an instant PromQL query over the HTTP API.
func (p *prometheus) query(ctx context.Context, q string) ([]sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.base+"/api/v1/query?query="+url.QueryEscape(q), nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("query %s: %s: %w", q, resp.Status, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("query %s: %s", q, body.Error)
	}
	var out []sample
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %v: %w", q, r.Value[1], err)
		}
		out = append(out, sample{labels: r.Metric, value: v})
	}
	return out, nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

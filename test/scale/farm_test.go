package scale_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/procrss"
	"github.com/spanbench/spanbench/runner/pod"
)

// The pod farm stands in for the kubelet and the Job controller, which
// envtest does not run: a subprocess (this test binary, re-executed) that
// watches the namespace's Jobs and, for every index of a loader or runner
// Job, runs the real pod code (pod.Load, pod.Run) in a goroutine with its
// own API client acting as the run's runner service account, as a pod
// would. It runs in its own process so that the benchmark process's CPU
// and memory are the manager's.

// farmEnv carries the farm's spec (JSON) to the re-executed binary.
const farmEnv = "SPANBENCH_SCALE_FARM"

// farmSpec is what the benchmark hands its farm.
type farmSpec struct {
	Host                      string
	CAData, CertData, KeyData []byte
	Namespace                 string
}

// farm is a running pod farm.
type farm struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stderr bytes.Buffer
	// rss samples the farm's own peak RSS: rusage's would be at least this
	// benchmark process's, which started it (procrss).
	rss   *procrss.Watch
	usage *farmUsage // once stopped
}

// startFarm starts a pod farm for namespace ns; it is stopped at the end
// of the benchmark at the latest.
func startFarm(tb testing.TB, ns string) *farm {
	tb.Helper()
	spec, err := json.Marshal(farmSpec{Host: restConfig.Host, CAData: restConfig.CAData, CertData: restConfig.CertData,
		KeyData: restConfig.KeyData, Namespace: ns})
	if err != nil {
		tb.Fatal(err)
	}
	// The Spanner client probes the GCP metadata server once; answer it on
	// loopback instead of leaving the machine.
	meta := httptest.NewServer(http.NotFoundHandler())
	tb.Cleanup(meta.Close)
	ctx, cancel := context.WithCancel(context.Background())
	f := &farm{cancel: cancel}
	// At nice 10: on a cluster the pods run on nodes of their own, not on
	// the control plane's and the manager's cores, which on this host they
	// share; niced, the farm takes what the control plane leaves.
	f.cmd = exec.CommandContext(ctx, "nice", "-n", "10", os.Args[0], "-test.run=^$")
	f.cmd.Env = append(os.Environ(), farmEnv+"="+string(spec), "GCE_METADATA_HOST="+meta.Listener.Addr().String())
	f.cmd.Stderr = &f.stderr
	f.cmd.Cancel = func() error { return f.cmd.Process.Signal(syscall.SIGTERM) }
	f.cmd.WaitDelay = 30 * time.Second
	if err := f.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	f.rss = procrss.Start(f.cmd.Process.Pid, 10*time.Millisecond)
	tb.Cleanup(func() { f.stop() })
	return f
}

// farmUsage is what the farm's process used.
type farmUsage struct {
	cpu    time.Duration
	maxRSS int64 // bytes
}

// stop ends the farm and returns its usage; later calls return the same.
func (f *farm) stop() farmUsage {
	if f.usage != nil {
		return *f.usage
	}
	f.cancel()
	_ = f.cmd.Wait()
	f.usage = &farmUsage{maxRSS: f.rss.Stop().RSS}
	if ru, ok := f.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		f.usage.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return *f.usage
}

// log is what the farm's pods reported as failures.
func (f *farm) log() string { return f.stderr.String() }

// farmMain is the re-executed binary's main: it plays every Job's pods
// until SIGTERM.
func farmMain(raw string) int {
	var spec farmSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintf(os.Stderr, "farm: bad spec: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	cfg := &rest.Config{Host: spec.Host, TLSClientConfig: rest.TLSClientConfig{CAData: spec.CAData, CertData: spec.CertData, KeyData: spec.KeyData},
		QPS: 20, Burst: 30} // controller-runtime's GetConfig defaults, as in a pod
	admin, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintf(os.Stderr, "farm: %v\n", err)
		return 2
	}
	var pods sync.WaitGroup
	defer pods.Wait()
	seen := map[string]bool{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		jobs := &batchv1.JobList{}
		if err := admin.List(ctx, jobs, client.InNamespace(spec.Namespace)); err == nil {
			for i := range jobs.Items {
				if job := &jobs.Items[i]; !seen[job.Name] {
					seen[job.Name] = true
					playJob(ctx, cfg, job, &pods)
				}
			}
		}
		select {
		case <-ctx.Done():
			return 0
		case <-tick.C:
		}
	}
}

// playJob runs every index of a loader or runner Job as a pod.
func playJob(ctx context.Context, cfg *rest.Config, job *batchv1.Job, pods *sync.WaitGroup) {
	run := &v1alpha1.BenchmarkRun{ObjectMeta: metav1.ObjectMeta{Name: job.Labels[v1alpha1.LabelRun], Namespace: job.Namespace}}
	loader := job.Name == v1alpha1.LoaderJobName(run)
	if !loader && job.Name != v1alpha1.RunnerJobName(run) {
		return
	}
	for i := range int(ptr.Deref(job.Spec.Completions, 1)) {
		pods.Add(1)
		go func() {
			defer pods.Done()
			if err := playPod(ctx, cfg, run, i, loader); err != nil {
				fmt.Fprintf(os.Stderr, "farm: %s %d of run %s: %v\n", job.Name, i, run.Name, err)
			}
		}()
	}
}

// playPod is one pod: its own client, as the run's service account.
func playPod(ctx context.Context, cfg *rest.Config, run *v1alpha1.BenchmarkRun, index int, loader bool) error {
	pc := rest.CopyConfig(cfg)
	pc.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + run.Namespace + ":" + v1alpha1.RunnerServiceAccountName(run)}
	c, err := client.New(pc, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	o := pod.Options{Namespace: run.Namespace, Run: run.Name, Index: index, Log: logr.Discard()}
	if loader {
		return pod.Load(ctx, c, o)
	}
	return pod.Run(ctx, c, o)
}

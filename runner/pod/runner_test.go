package pod

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/emulatortest"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

// Bounds of the scenarios' waits.
const (
	readyWithin = time.Minute
	runWithin   = time.Minute
)

// ycsb is a small defaulted YCSB workload at 200 ops/s.
func ycsb(rows int64, duration time.Duration, ops ...v1alpha1.OperationSpec) v1alpha1.WorkloadSpec {
	rate := int32(200)
	w := v1alpha1.WorkloadSpec{
		Type:       v1alpha1.WorkloadYCSB,
		Dataset:    v1alpha1.DatasetSpec{Rows: &rows},
		Operations: ops,
		Load:       v1alpha1.LoadSpec{Rate: &rate},
		Duration:   &metav1.Duration{Duration: duration},
		Interval:   &metav1.Duration{Duration: time.Second},
	}
	w = w.Resolved()
	return w
}

var (
	readOp   = v1alpha1.OperationSpec{Type: v1alpha1.OpRead, Weight: 3}
	updateOp = v1alpha1.OperationSpec{Type: v1alpha1.OpUpdate, Weight: 1}
)

// TestShardsStartTogetherAndStoreMergeableResults is the run the controller
// drives: two runners report ready, get one start time, really begin
// sending at it, and store results that merge exactly.
func TestShardsStartTogetherAndStoreMergeableResults(t *testing.T) {
	spec := ycsb(100, 2*time.Second, readOp, updateOp)
	s := sessiontest.Start(t, &spec)
	ns, run := newNamespace(t), "together"
	createControl(t, ns, protocol.Control{Run: run, Namespace: ns, Shards: 2, Target: s.Target, Workload: spec, Region: "asia-northeast1"})
	createShardMaps(t, ns, run, 2)
	metricsAddr := freeAddr(t)
	runners := startRunners(t, k8sClient, ns, run, 2, func(i int, o *Options) {
		if i == 0 {
			o.MetricsAddr = metricsAddr
		}
	})

	waitReady(t, ns, run, runners, readyWithin)
	checkMetricsServed(t, metricsAddr)
	start := time.Now().Add(time.Second)
	publishStart(t, ns, run, start)
	start, _, _ = protocol.DecodeStart(protocol.EncodeStart(start)) // as the runners read it

	docs := make([]*result.Document, 2)
	for i, h := range runners {
		if err := h.wait(t, runWithin); err != nil {
			t.Fatalf("runner %d failed: %v", i, err)
		}
		docs[i] = succeededResult(t, ns, run, i)
		checkShardResult(t, docs[i], i, 2, start)
	}
	merged, err := result.Merge(docs...)
	if err != nil {
		t.Fatalf("the two shard results do not merge: %v", err)
	}
	if len(merged.Shards) != 2 || merged.Overall.OK < 250 || merged.Overall.ErrorCount() > 0 {
		t.Fatalf("merged result has %d shards, %d OK operations and errors %v; want 2 shards, about 400 OK and no errors",
			len(merged.Shards), merged.Overall.OK, merged.Overall.Errors)
	}
}

// checkShardResult checks what one shard's result says about itself.
func checkShardResult(t *testing.T, d *result.Document, i, n int, start time.Time) {
	t.Helper()
	if len(d.Shards) != 1 || d.Shards[0].Index != i || d.Shards[0].Count != n {
		t.Fatalf("shard %d's result describes shards %+v; want one, index %d of %d", i, d.Shards, i, n)
	}
	if !d.Start.Equal(start) {
		t.Errorf("shard %d's result starts at %s; want the published start %s", i, d.Start, start)
	}
	began := d.Shards[0].Started
	if skew := began.Sub(start); skew < -time.Millisecond || skew > 100*time.Millisecond {
		t.Errorf("shard %d began sending %s after the published start; want within 100ms", i, skew)
	}
	if began.Equal(start) {
		t.Errorf("shard %d's Started is exactly the scheduled start: the first send was not recorded", i)
	}
	if d.Environment.Region != "asia-northeast1" || d.Target.Endpoint != "emulator" || d.Target.Dialect != "GoogleSQL" || len(d.Notes) == 0 {
		t.Errorf("shard %d's result lacks its context: region %q, endpoint %q, dialect %q, notes %v", i, d.Environment.Region, d.Target.Endpoint, d.Target.Dialect, d.Notes)
	}
}

// succeededResult reads and decodes a shard's stored result.
func succeededResult(t *testing.T, ns, run string, i int) *result.Document {
	t.Helper()
	rep := shardReport(t, ns, run, i)
	if rep.State != protocol.StateSucceeded {
		t.Fatalf("shard %d's state is %q (message %q); want %s", i, rep.State, rep.Message, protocol.StateSucceeded)
	}
	if rep.Ready.IsZero() {
		t.Errorf("shard %d succeeded without a ready time", i)
	}
	d, err := protocol.DecodeResult(rep.Result)
	if err != nil {
		t.Fatalf("shard %d's stored result does not decode: %v", i, err)
	}
	return d
}

// freeAddr is a local address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// checkMetricsServed scrapes a runner's live metrics endpoint.
func checkMetricsServed(t *testing.T, addr string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scraping the runner's metrics: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"spanbench_operations_total", "go_goroutines"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the runner's /metrics lacks %s", want)
		}
	}
}

// emptyDatabase starts an emulator with the workload's schema and no rows.
func emptyDatabase(t *testing.T, spec *v1alpha1.WorkloadSpec) v1alpha1.TargetSpec {
	t.Helper()
	emu := emulatortest.Start(t)
	emulatortest.NoMetadataServer(t)
	one := int32(1)
	target := v1alpha1.TargetSpec{Project: "spanbench-test", Database: "bench", EmulatorHost: emu.Host(),
		Instance: v1alpha1.InstanceSpec{Name: "test", Config: "regional-asia-northeast1", Nodes: &one}}
	schema, err := workload.SchemaFor(spec, target.Dialect)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := session.EnsureDatabase(ctx, endpoint.Emulator(emu.Host()), target, schema, true); err != nil {
		t.Fatalf("creating the test database: %v", err)
	}
	return target
}

// onTable runs fn with a client of target and the name of the workload's
// main table.
func onTable(t *testing.T, target v1alpha1.TargetSpec, spec *v1alpha1.WorkloadSpec, fn func(ctx context.Context, c *spanner.Client, table string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := session.Open(ctx, endpoint.Emulator(target.EmulatorHost), target)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	schema, err := workload.SchemaFor(spec, target.Dialect)
	if err != nil {
		t.Fatal(err)
	}
	fn(ctx, s.Client, schema.Table())
}

func countRows(t *testing.T, target v1alpha1.TargetSpec, spec *v1alpha1.WorkloadSpec) int64 {
	t.Helper()
	var n int64
	onTable(t, target, spec, func(ctx context.Context, c *spanner.Client, table string) {
		err := c.Single().Query(ctx, spanner.Statement{SQL: "SELECT COUNT(*) FROM " + table}).Do(func(r *spanner.Row) error {
			return r.Column(0, &n)
		})
		if err != nil {
			t.Fatalf("counting rows: %v", err)
		}
	})
	return n
}

// TestBadControlFailsTheShardWithAMessage: a control map the runner cannot
// use ends it with an error that is also stored in its shard map.
func TestBadControlFailsTheShardWithAMessage(t *testing.T) {
	good := protocol.Control{Run: "bad", Shards: 1, Workload: ycsb(10, time.Second, readOp),
		Target: v1alpha1.TargetSpec{Project: "spanbench-test", Instance: v1alpha1.InstanceSpec{Name: "test"}, Database: "bench", EmulatorHost: "127.0.0.1:1"}}
	cases := []struct {
		name  string
		data  map[string]string
		index int
		want  string
	}{
		{"not JSON", map[string]string{protocol.KeyControl: `{"Run": "bad", `}, 0, "is not a control document"},
		{"unknown field", map[string]string{protocol.KeyControl: strings.Replace(mustJSON(t, good), `"Shards"`, `"Shard":1,"Shards"`, 1)}, 0, `unknown field "Shard"`},
		{"no control document", map[string]string{"other": "x"}, 0, "has no control.json"},
		{"no shards", map[string]string{protocol.KeyControl: strings.Replace(mustJSON(t, good), `"Shards":1`, `"Shards":0`, 1)}, 0, "Shards: Invalid value: 0"},
		{"bad workload", map[string]string{protocol.KeyControl: strings.Replace(mustJSON(t, good), `"type":"YCSB"`, `"type":"TPCH"`, 1)}, 0, "Workload.type"},
		{"index out of range", map[string]string{protocol.KeyControl: mustJSON(t, good)}, 1, "shard index 1 is out of range: the run has 1 shards"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := newNamespace(t)
			createControlRaw(t, ns, "bad", tc.data)
			createShardMaps(t, ns, "bad", tc.index+1)
			err := Run(bounded(t), k8sClient, Options{Namespace: ns, Run: "bad", Index: tc.index, Log: testLog(t)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run returned %v; want an error saying %q", err, tc.want)
			}
			rep := shardReport(t, ns, "bad", tc.index)
			if rep.State != protocol.StateFailed || !strings.Contains(rep.Message, tc.want) {
				t.Fatalf("shard map holds state %q, message %q; want %s saying %q", rep.State, rep.Message, protocol.StateFailed, tc.want)
			}
		})
	}
	t.Run("no shard map", func(t *testing.T) {
		ns := newNamespace(t)
		createControlRaw(t, ns, "bad", map[string]string{protocol.KeyControl: "{}"})
		if err := Run(bounded(t), k8sClient, Options{Namespace: ns, Run: "bad", Log: testLog(t)}); err == nil {
			t.Fatal("Run succeeded on an empty control document")
		}
		var cm corev1.ConfigMap
		err := k8sClient.Get(bounded(t), client.ObjectKey{Namespace: ns, Name: protocol.ShardConfigMapName("bad", 0)}, &cm)
		if !apierrors.IsNotFound(err) {
			t.Fatalf("reading the shard map the runner must not create: %v; want NotFound", err)
		}
	})
}

func mustJSON(t *testing.T, c protocol.Control) string {
	t.Helper()
	b, err := protocol.EncodeControl(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAFinishedShardIsNotRunAgain: a stored outcome is final; running the
// shard again would start late and overwrite it.
func TestAFinishedShardIsNotRunAgain(t *testing.T) {
	for _, state := range []protocol.State{protocol.StateSucceeded, protocol.StateFailed} {
		t.Run(string(state), func(t *testing.T) {
			ns := newNamespace(t)
			createControlRaw(t, ns, "again", map[string]string{protocol.KeyControl: mustJSON(t, protocol.Control{Run: "again", Shards: 1,
				Workload: ycsb(10, time.Second, readOp),
				Target:   v1alpha1.TargetSpec{Project: "spanbench-test", Instance: v1alpha1.InstanceSpec{Name: "test"}, Database: "bench", EmulatorHost: "127.0.0.1:1"}})})
			createShardMaps(t, ns, "again", 1)
			cm := shardMap(t, ns, "again", 0)
			cm.Data = protocol.EncodeShardReport(protocol.ShardReport{State: state, Message: "earlier"}).Data
			if err := k8sClient.Update(bounded(t), cm); err != nil {
				t.Fatal(err)
			}
			err := Run(bounded(t), k8sClient, Options{Namespace: ns, Run: "again", Log: testLog(t)})
			if (err == nil) != (state == protocol.StateSucceeded) {
				t.Fatalf("Run on a shard that already %s returned %v", state, err)
			}
			if after := shardMap(t, ns, "again", 0); after.ResourceVersion != cm.ResourceVersion {
				t.Fatalf("the runner rewrote a finished shard map: %v", after.Data)
			}
		})
	}
}

// TestNoStartTimeFailsTheShard: a runner that never gets a start time, or
// gets one long past, gives up with a message saying so.
func TestNoStartTimeFailsTheShard(t *testing.T) {
	spec := ycsb(10, time.Second, readOp)
	s := sessiontest.Start(t, &spec)
	cases := []struct {
		name  string
		start time.Time // published before the runner starts; zero for none
		want  string
	}{
		{"never", time.Time{}, "the runners never got a start time"},
		{"long past", time.Now().Add(-time.Minute), "cannot rejoin"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns, run := newNamespace(t), "nostart"
			createControl(t, ns, protocol.Control{Run: run, Namespace: ns, Shards: 1, Target: s.Target, Workload: spec})
			createShardMaps(t, ns, run, 1)
			if !tc.start.IsZero() {
				publishStart(t, ns, run, tc.start)
			}
			runners := startRunners(t, k8sClient, ns, run, 1, func(_ int, o *Options) {
				o.ReadyTimeout, o.PollInterval = time.Second, 100*time.Millisecond
			})
			err := runners[0].wait(t, runWithin)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run returned %v; want an error saying %q", err, tc.want)
			}
			rep := shardReport(t, ns, run, 0)
			if rep.Ready.IsZero() || rep.State != protocol.StateFailed || !strings.Contains(rep.Message, tc.want) {
				t.Fatalf("shard map holds %+v; want ready, state %s and a message saying %q", rep, protocol.StateFailed, tc.want)
			}
		})
	}
}

// TestRunnerNeedsOnlyItsOwnConfigMaps runs a runner as a service account
// bound to the Role the controller gives runners: get on the run's control
// map, get/update/patch on its shard maps, by name. That is enough, and it
// reaches nothing else.
func TestRunnerNeedsOnlyItsOwnConfigMaps(t *testing.T) {
	spec := ycsb(100, time.Second, readOp)
	s := sessiontest.Start(t, &spec)
	ns, run := newNamespace(t), "least"
	createControl(t, ns, protocol.Control{Run: run, Namespace: ns, Shards: 1, Target: s.Target, Workload: spec})
	createShardMaps(t, ns, run, 1)
	createControl(t, ns, protocol.Control{Run: "other", Namespace: ns, Shards: 1, Target: s.Target, Workload: spec})
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "credentials"}, StringData: map[string]string{"key.json": "{}"}}
	if err := k8sClient.Create(bounded(t), secret); err != nil {
		t.Fatal(err)
	}
	sa := runnerServiceAccount(t, ns, run, 1)

	runners := startRunners(t, sa, ns, run, 1, nil)
	waitReady(t, ns, run, runners, readyWithin)
	publishStart(t, ns, run, time.Now().Add(500*time.Millisecond))
	if err := runners[0].wait(t, runWithin); err != nil {
		t.Fatalf("the runner failed with only its Role's rights: %v", err)
	}
	succeededResult(t, ns, run, 0)

	forbidden := map[string]func(ctx context.Context) error{
		"get a Secret": func(ctx context.Context) error {
			return sa.Get(ctx, client.ObjectKeyFromObject(secret), &corev1.Secret{})
		},
		"get another run's control map": func(ctx context.Context) error {
			return sa.Get(ctx, client.ObjectKey{Namespace: ns, Name: protocol.ControlConfigMapName("other")}, &corev1.ConfigMap{})
		},
		"list ConfigMaps": func(ctx context.Context) error { return sa.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns)) },
		"create a ConfigMap": func(ctx context.Context) error {
			return sa.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: protocol.ShardConfigMapName(run, 1)}})
		},
		"write the control map": func(ctx context.Context) error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: protocol.ControlConfigMapName(run)}}
			return sa.Patch(ctx, cm, client.RawPatch("application/merge-patch+json", []byte(`{"data":{"startTime":"x"}}`)))
		},
	}
	for what, call := range forbidden {
		if err := call(bounded(t)); !apierrors.IsForbidden(err) {
			t.Errorf("the runner's service account could %s: %v; want Forbidden", what, err)
		}
	}
}

// runnerServiceAccount creates a service account bound to the runners' Role
// for a run of n shards, and returns a client impersonating it.
func runnerServiceAccount(t *testing.T, ns, run string, n int) client.Client {
	t.Helper()
	shards := make([]string, n)
	for i := range n {
		shards[i] = protocol.ShardConfigMapName(run, i)
	}
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: run + "-runner"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: run + "-runner"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}, ResourceNames: []string{protocol.ControlConfigMapName(run)}},
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "update", "patch"}, ResourceNames: shards},
		}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: run + "-runner"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: run + "-runner"}},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: run + "-runner"}},
	}
	for _, o := range objs {
		if err := k8sClient.Create(bounded(t), o); err != nil {
			t.Fatalf("creating the runner's %T: %v", o, err)
		}
	}
	rc := rest.CopyConfig(cfg)
	rc.Impersonate = rest.ImpersonationConfig{UserName: fmt.Sprintf("system:serviceaccount:%s:%s-runner", ns, run)}
	c, err := client.New(rc, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestResultOutlivesAnAPIServerOutage: the API server stops answering as
// the load ends (on the local cluster a kube-apiserver restart took 19 s)
// and the runner's final write meets refused connections for longer than
// its ordinary retries last; it must keep trying (within
// finalWriteTimeout) and store the result once the server is back.
func TestResultOutlivesAnAPIServerOutage(t *testing.T) {
	spec := ycsb(100, time.Second, readOp)
	s := sessiontest.Start(t, &spec)
	ns, run := newNamespace(t), "outage"
	createControl(t, ns, protocol.Control{Run: run, Namespace: ns, Shards: 1, Target: s.Target, Workload: spec})
	createShardMaps(t, ns, run, 1)
	down := &outageTransport{}
	rc := rest.CopyConfig(cfg)
	rc.WrapTransport = func(next http.RoundTripper) http.RoundTripper { down.next = next; return down }
	c, err := client.New(rc, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runners := startRunners(t, c, ns, run, 1, nil)
	waitReady(t, ns, run, runners, readyWithin)
	start := time.Now().Add(time.Second)
	publishStart(t, ns, run, start)
	// Down from the end of the load, for twice what writeAttempts' backoff
	// covers.
	down.set(start.Add(spec.Duration.Duration), 12*time.Second)

	if err := runners[0].wait(t, runWithin); err != nil {
		t.Fatalf("the runner gave up on its result during a 12 s API server outage: %v", err)
	}
	succeededResult(t, ns, run, 0)
	if n := down.refused.Load(); n == 0 {
		t.Fatalf("no call met the outage: the test did not test it")
	}
}

// outageTransport fails every call of a client as against a stopped API
// server (connection refused) within a window of time: a fault injected
// in the client's transport, since the suite's one envtest API server
// cannot be stopped under a running test.
type outageTransport struct {
	next    http.RoundTripper
	mu      sync.Mutex
	from    time.Time
	until   time.Time
	refused atomic.Int64
}

func (o *outageTransport) set(from time.Time, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.from, o.until = from, from.Add(d)
}

func (o *outageTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	o.mu.Lock()
	now := time.Now()
	down := !o.from.IsZero() && !now.Before(o.from) && now.Before(o.until)
	o.mu.Unlock()
	if down {
		o.refused.Add(1)
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}
	return o.next.RoundTrip(req)
}

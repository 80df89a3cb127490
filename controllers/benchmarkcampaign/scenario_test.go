package benchmarkcampaign_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkcampaign"
	"github.com/spanbench/spanbench/internal/await"
	"github.com/spanbench/spanbench/runner/pod"
)

// startCampaignManager runs a manager with the campaign reconciler alone
// on the envtest API server: the run controller does not run, and the
// scenario ends runs the way it would (finishCampaignRun). stop stops it
// (a killed manager: nothing of it runs after stop returns); the test's
// end stops it too.
func startCampaignManager(t *testing.T, clk *clocktesting.FakeClock) (stop func()) {
	t.Helper()
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0", Logger: logr.Discard(), Controller: config.Controller{SkipNameValidation: ptr.To(true)}})
	if err != nil {
		t.Fatal(err)
	}
	r := &benchmarkcampaign.BenchmarkCampaignReconciler{Client: mgr.GetClient(), Scheme: scheme,
		Recorder: mgr.GetEventRecorderFor("spanbench-campaign"), Clock: clk, APIReader: mgr.GetAPIReader(), Arrivals: pod.RunArrivals}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := mgr.Start(ctx); err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// TestCampaignScenarioComparesTwoCellsTwice: a 2-cell × 2-repetition
// campaign on the real API server (the CRDs of config/crd/bases) gets its
// four runs one at a time (one database), interleaved, and, once their
// statuses and reports say they succeeded, the comparison and verdict in
// its status.
func TestCampaignScenarioComparesTwoCellsTwice(t *testing.T) {
	s := newCampaignScenario(t, "c")
	startCampaignManager(t, s.clk)
	s.create(testCampaign("two-by-two", 2, 4, axis("rate", "workload.load.rate", "base=50", "fast=100")))
	got := s.awaitCampaign("two-by-two", "four runs ended and compared", func(c *v1alpha1.BenchmarkCampaign) bool {
		s.finish("two-by-two", -1, func(run *v1alpha1.BenchmarkRun) float64 {
			if run.Labels[v1alpha1.LabelVariant] == "fast" {
				return 0.5
			}
			return 1
		})
		return c.Status.Comparison != nil
	})
	if order := variants(s.runsOf("two-by-two", ""), s.runs.created()); fmt.Sprint(order) != "[base/1 fast/1 base/2 fast/2]" {
		t.Errorf("runs created in order %v, want interleaved [base/1 fast/1 base/2 fast/2]", order)
	}
	if o := s.runs.overlapping(); len(o) > 0 {
		t.Errorf("two runs on one database at once: %v", o)
	}
	st := got.Status
	if len(st.Iterations) != 1 || st.Iterations[0].Outcome != v1alpha1.IterationSucceeded || st.Iterations[0].Succeeded != 4 {
		t.Errorf("iterations %+v, want one Succeeded with 4 runs", st.Iterations)
	}
	if cmp := st.Comparison; cmp.Baseline != "base" || len(cmp.Rows) == 0 || cmp.Rows[0].N != "2+2" || cmp.Verdict == "" || st.Verdict != cmp.Verdict {
		t.Errorf("comparison %+v, verdict %s; want rows of 2+2 runs against base and the table's verdict", cmp, st.Verdict)
	}
	if st.ObservedGeneration != got.Generation {
		t.Errorf("observedGeneration %d, generation %d", st.ObservedGeneration, got.Generation)
	}
}

// TestCampaignScenarioScheduleFiresInTokyo: on the real API server, a
// campaign at 02:00 Asia/Tokyo announces the next 02:00 Tokyo as
// nextScheduleTime and starts its iteration when the injected clock
// reaches that instant.
func TestCampaignScenarioScheduleFiresInTokyo(t *testing.T) {
	s := newCampaignScenario(t, "s")
	startCampaignManager(t, s.clk)
	s.create(nightly("tokyo", ""))
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	next := s.awaitNextSchedule("tokyo")
	if l := next.In(tokyo); l.Hour() != 2 || l.Minute() != 0 || next.Sub(s.clk.Now()) > 24*time.Hour || len(s.campaign("tokyo").Status.Iterations) != 0 {
		t.Fatalf("nextScheduleTime %v (%v in Tokyo); want the next 02:00 Tokyo and no iteration yet", next, next.In(tokyo))
	}
	s.clk.SetTime(next)
	s.touch("tokyo")
	got := s.awaitCampaign("tokyo", "the iteration at 02:00 Tokyo and its run", func(c *v1alpha1.BenchmarkCampaign) bool {
		return len(c.Status.Iterations) == 1 && len(s.runs.created()) == 1
	})
	if it := got.Status.Iterations[0]; !it.ScheduledTime.Time.Equal(next) || it.Outcome != v1alpha1.IterationRunning {
		t.Errorf("iteration %+v, want Running, scheduled at %v", it, next)
	}
}

// campaignScenario is one scenario's namespace, client and clock, and a
// watch of its runs.
type campaignScenario struct {
	t    *testing.T
	c    client.WithWatch
	ns   string
	clk  *clocktesting.FakeClock
	runs *runWatch
}

var campaignPoll = await.Poll{Within: 30 * time.Second, Every: 50 * time.Millisecond}

// newCampaignScenario makes a namespace named after prefix and starts
// watching its runs; the clock starts at now.
func newCampaignScenario(t *testing.T, prefix string) *campaignScenario {
	t.Helper()
	c, err := client.NewWithWatch(restConfig, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	s := &campaignScenario{t: t, c: c, ns: fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1_000_000_000),
		clk: clocktesting.NewFakeClock(time.Now())}
	deleteRunsAtEnd(t, c, s.ns)
	t.Cleanup(func() {
		// Later scenarios' managers watch every namespace: a campaign left
		// behind would make its deleted runs again.
		if err := c.DeleteAllOf(context.Background(), &v1alpha1.BenchmarkCampaign{}, client.InNamespace(s.ns)); err != nil {
			t.Errorf("deleting the scenario's campaigns: %v", err)
		}
	})
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}); err != nil {
		t.Fatal(err)
	}
	s.runs = watchRuns(t, c, s.ns)
	return s
}

// create creates campaign in the scenario's namespace.
func (s *campaignScenario) create(campaign *v1alpha1.BenchmarkCampaign) {
	s.t.Helper()
	campaign.Namespace, campaign.UID, campaign.Generation, campaign.CreationTimestamp, campaign.ResourceVersion = s.ns, "", 0, metav1.Time{}, ""
	if err := s.c.Create(context.Background(), campaign); err != nil {
		s.t.Fatal(err)
	}
}

func (s *campaignScenario) campaign(name string) *v1alpha1.BenchmarkCampaign {
	s.t.Helper()
	got := &v1alpha1.BenchmarkCampaign{}
	if err := s.c.Get(context.Background(), client.ObjectKey{Namespace: s.ns, Name: name}, got); err != nil {
		s.t.Fatal(err)
	}
	return got
}

// runsOf lists the runs of the campaign's iteration (all of the
// campaign's, when iteration is empty).
func (s *campaignScenario) runsOf(campaign, iteration string) []v1alpha1.BenchmarkRun {
	s.t.Helper()
	sel := client.MatchingLabels{v1alpha1.LabelCampaign: campaign}
	if iteration != "" {
		sel[v1alpha1.LabelIteration] = iteration
	}
	list := &v1alpha1.BenchmarkRunList{}
	if err := s.c.List(context.Background(), list, client.InNamespace(s.ns), sel); err != nil {
		s.t.Fatal(err)
	}
	return list.Items
}

// awaitCampaign waits until cond holds for the campaign; the failure
// message shows its iterations.
func (s *campaignScenario) awaitCampaign(name, what string, cond func(c *v1alpha1.BenchmarkCampaign) bool) *v1alpha1.BenchmarkCampaign {
	s.t.Helper()
	got := &v1alpha1.BenchmarkCampaign{}
	await.Eventually(s.t, campaignPoll, what, func() (bool, string) {
		if err := s.c.Get(context.Background(), client.ObjectKey{Namespace: s.ns, Name: name}, got); err != nil {
			return false, err.Error()
		}
		return cond(got), fmt.Sprintf("campaign %s: iterations %+v", name, got.Status.Iterations)
	})
	return got
}

// edit changes the campaign's spec (a user's kubectl apply).
func (s *campaignScenario) edit(name string, change func(spec *v1alpha1.BenchmarkCampaignSpec)) {
	s.t.Helper()
	got := s.campaign(name)
	before := got.DeepCopy()
	change(&got.Spec)
	if err := s.c.Patch(context.Background(), got, client.MergeFrom(before)); err != nil {
		s.t.Fatal(err)
	}
}

// touch wakes the campaign's controller after the clock moved: the
// workqueue's own timer runs on real time, not on the injected clock.
func (s *campaignScenario) touch(names ...string) {
	s.t.Helper()
	for _, name := range names {
		got := s.campaign(name)
		before := got.DeepCopy()
		got.Annotations = map[string]string{"test/touch": s.clk.Now().String()}
		if err := s.c.Patch(context.Background(), got, client.MergeFrom(before)); err != nil {
			s.t.Fatal(err)
		}
	}
}

// finish ends the campaign's unfinished runs as Succeeded, latency scaled
// by scale; at most limit of them, oldest first (all when limit < 0).
func (s *campaignScenario) finish(campaign string, limit int, scale func(run *v1alpha1.BenchmarkRun) float64) int {
	s.t.Helper()
	runs := s.runsOf(campaign, "")
	slices.SortFunc(runs, func(a, b v1alpha1.BenchmarkRun) int {
		return slices.Index(s.runs.created(), a.Name) - slices.Index(s.runs.created(), b.Name)
	})
	n := 0
	for i := range runs {
		if !runs[i].IsFinished() && (limit < 0 || n < limit) {
			finishCampaignRun(s.t, s.c, &runs[i], scale(&runs[i]))
			n++
		}
	}
	return n
}

func sameScale(*v1alpha1.BenchmarkRun) float64 { return 1 }

// outcomesOf are the outcomes of the campaign's iterations, oldest first.
func outcomesOf(c *v1alpha1.BenchmarkCampaign) string {
	var out []string
	for _, it := range c.Status.Iterations {
		out = append(out, string(it.Outcome))
	}
	return strings.Join(out, ",")
}

// runWatch follows a namespace's runs through one watch, in the API
// server's order of events: the order runs were created in, and every
// moment two unfinished runs of a campaign used one database.
type runWatch struct {
	mu       sync.Mutex
	names    []string
	overlaps []string
	// live are the unfinished runs' databases, by name.
	live map[string]string
}

func watchRuns(t *testing.T, c client.WithWatch, ns string) *runWatch {
	t.Helper()
	w, err := c.Watch(context.Background(), &v1alpha1.BenchmarkRunList{}, client.InNamespace(ns))
	if err != nil {
		t.Fatal(err)
	}
	rw := &runWatch{live: map[string]string{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if run, ok := ev.Object.(*v1alpha1.BenchmarkRun); ok {
				rw.observe(ev.Type, run)
			}
		}
	}()
	t.Cleanup(func() { w.Stop(); <-done })
	return rw
}

func (rw *runWatch) observe(typ watch.EventType, run *v1alpha1.BenchmarkRun) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	tg := &run.Spec.Target
	db := run.Labels[v1alpha1.LabelCampaign] + "|" + tg.EmulatorHost + "|" + tg.Project + "|" + tg.Instance.Name + "|" + tg.Database
	switch {
	case typ == watch.Added:
		rw.names = append(rw.names, run.Name)
		for other, otherDB := range rw.live {
			if otherDB == db {
				rw.overlaps = append(rw.overlaps, fmt.Sprintf("%s created while %s ran on database %s", run.Name, other, tg.Database))
			}
		}
		rw.live[run.Name] = db
	case typ == watch.Deleted || run.IsFinished():
		delete(rw.live, run.Name)
	}
}

// created are the runs' names in creation order.
func (rw *runWatch) created() []string {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return slices.Clone(rw.names)
}

func (rw *runWatch) overlapping() []string {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	return slices.Clone(rw.overlaps)
}

// awaitCreated waits until n runs were created.
func (s *campaignScenario) awaitCreated(n int) []string {
	s.t.Helper()
	await.Eventually(s.t, campaignPoll, fmt.Sprintf("%d runs created", n), func() (bool, string) {
		got := s.runs.created()
		return len(got) >= n, fmt.Sprintf("created %v", got)
	})
	return s.runs.created()
}

// awaitNextSchedule waits until every named campaign announces the same
// nextScheduleTime, and returns it.
func (s *campaignScenario) awaitNextSchedule(names ...string) time.Time {
	s.t.Helper()
	var next time.Time
	for _, name := range names {
		got := s.awaitCampaign(name, "nextScheduleTime", func(c *v1alpha1.BenchmarkCampaign) bool { return c.Status.NextScheduleTime != nil })
		if t := got.Status.NextScheduleTime.Time; !next.IsZero() && !t.Equal(next) {
			s.t.Fatalf("campaign %s: nextScheduleTime %v, the others' %v", name, t, next)
		} else {
			next = t
		}
	}
	return next
}

// deleteRunsAtEnd deletes the runs a campaign scenario's campaigns created
// in ns when the test ends: the run controller of a later scenario's
// manager watches every namespace and would otherwise spend its reconciles
// preparing these runs' targets, delaying that scenario's own run.
func deleteRunsAtEnd(t *testing.T, c client.Client, ns string) {
	t.Cleanup(func() {
		if err := c.DeleteAllOf(context.Background(), &v1alpha1.BenchmarkRun{}, client.InNamespace(ns)); err != nil {
			t.Errorf("deleting the scenario's runs: %v", err)
		}
	})
}

package benchmarkrun

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/target"
)

// EventOrphanInstanceDeleted is the reason of the event the sweep emits
// when it deletes an instance whose run is gone.
const EventOrphanInstanceDeleted = "OrphanInstanceDeleted"

// Defaults of InstanceSweeper.
const (
	// DefaultSweepInterval spaces sweeps.
	DefaultSweepInterval = 10 * time.Minute
	// DefaultSweepCallTimeout bounds the sweep of one project.
	DefaultSweepCallTimeout = 30 * time.Second
)

// The manager names its cluster after the kube-system namespace's UID
// unless --cluster-id is given.
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get

// InstanceSweeper finds Ephemeral instances whose run no longer exists and
// deletes them: the backstop for an instance the finalizer could not
// cover (a run force-deleted with its finalizer stripped, a manager that
// crashed between creating an instance and recording it, a namespace
// wiped). It is a manager Runnable that sweeps at start and every
// Interval, on the leader only.
//
// It looks in every project of Projects on Cloud Spanner, in the projects
// of existing Ephemeral runs on Cloud Spanner, and in every emulator
// (with the projects used there) that an existing run names. It deletes
// only instances labelled by this cluster (target.LabelCluster equal to
// Cluster) whose run, read from the API server rather than a cache, is
// gone or has another UID.
type InstanceSweeper struct {
	// Client lists the runs (from the cache).
	Client client.Client
	// APIReader reads a run from the API server before its instance is
	// deleted, so a stale cache never condemns a live run's instance.
	APIReader client.Reader
	// Cloud is the Cloud Spanner endpoint swept (--spanner-endpoint); the
	// zero value is Cloud Spanner's default endpoint. Emulators are swept
	// at the hosts runs name, if Emulators allows them.
	Cloud endpoint.Endpoint
	// Emulators are the emulator addresses the sweeper may dial
	// (--allowed-emulator-hosts): a run naming another is skipped, never
	// dialed. The zero value restricts nothing (tests).
	Emulators endpoint.EmulatorAllowlist
	// OpenInstanceAdmin opens the instance admin API of an endpoint; nil
	// is target.OpenInstanceAdmin.
	OpenInstanceAdmin func(ctx context.Context, ep endpoint.Endpoint) (target.InstanceAdmin, error)
	// Cluster is the reconciler's ClusterID; "" is DefaultClusterID.
	Cluster string
	// Projects are Cloud Spanner projects to sweep even when no run names
	// them (--sweep-projects).
	Projects []string
	// Interval spaces sweeps; 0 is DefaultSweepInterval.
	Interval time.Duration
	// CallTimeout bounds the sweep of one project; 0 is
	// DefaultSweepCallTimeout.
	CallTimeout time.Duration
	// Recorder receives an event per deleted instance, on the namespace of
	// its run.
	Recorder record.EventRecorder
}

// NeedLeaderElection makes the sweep run on the leader alone.
func (s *InstanceSweeper) NeedLeaderElection() bool { return true }

// Start sweeps until ctx ends.
func (s *InstanceSweeper) Start(ctx context.Context) error {
	interval := s.Interval
	if interval <= 0 {
		interval = DefaultSweepInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		s.Sweep(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// sweepScope is one project at one endpoint: an emulator's host, or ""
// for the Cloud endpoint.
type sweepScope struct{ host, project string }

// Sweep deletes the orphaned instances it finds once, and returns how
// many it deleted. Failures are logged; the next sweep tries again.
func (s *InstanceSweeper) Sweep(ctx context.Context) int {
	logger := log.FromContext(ctx).WithName("instance-sweep")
	scopes, err := s.scopes(ctx)
	if err != nil {
		logger.Error(err, "listing the runs to find what to sweep")
		return 0
	}
	var mu sync.Mutex
	deleted := 0
	var wg sync.WaitGroup
	for _, sc := range scopes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := s.sweepScope(ctx, sc)
			mu.Lock()
			deleted += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	return deleted
}

// scopes are the projects to sweep: Projects, and the projects and
// emulators of existing runs.
func (s *InstanceSweeper) scopes(ctx context.Context) ([]sweepScope, error) {
	var out []sweepScope
	add := func(sc sweepScope) {
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	for _, p := range s.Projects {
		add(sweepScope{project: p})
	}
	runs := &v1alpha1.BenchmarkRunList{}
	if err := s.Client.List(ctx, runs); err != nil {
		return out, err
	}
	for _, r := range runs.Items {
		t := r.Spec.Target
		ep := endpoint.For(t, s.Cloud)
		if !s.Emulators.Allows(ep) {
			continue
		}
		if ep.IsEmulator() || t.Instance.Mode == v1alpha1.InstanceEphemeral {
			add(sweepScope{host: ep.EmulatorHost(), project: t.Project})
		}
	}
	return out, nil
}

func (s *InstanceSweeper) cluster() string {
	if s.Cluster == "" {
		return DefaultClusterID
	}
	return s.Cluster
}

// sweepScope deletes the orphans of one project.
func (s *InstanceSweeper) sweepScope(ctx context.Context, sc sweepScope) int {
	logger := log.FromContext(ctx).WithName("instance-sweep").WithValues("project", sc.project, "emulator", sc.host)
	timeout := s.CallTimeout
	if timeout <= 0 {
		timeout = DefaultSweepCallTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	open := s.OpenInstanceAdmin
	if open == nil {
		open = target.OpenInstanceAdmin
	}
	ep := s.Cloud
	if sc.host != "" {
		ep = endpoint.Emulator(sc.host)
	}
	admin, err := open(ctx, ep)
	if err != nil {
		logger.Error(err, "opening the instance admin API")
		return 0
	}
	defer func() { _ = admin.Close() }()
	owned, err := target.ListOwned(ctx, admin, sc.project, s.cluster())
	if err != nil {
		logger.V(1).Info("listing instances failed", "error", err.Error())
		return 0
	}
	deleted := 0
	for _, in := range owned {
		owner, _ := target.OwnerOf(in.Labels)
		gone, err := s.runGone(ctx, owner)
		if err != nil || !gone {
			continue
		}
		if err := target.DeleteOrphan(ctx, admin, in); err != nil {
			logger.Error(err, "deleting an orphaned instance", "instance", in.ID, "run", owner.String())
			continue
		}
		deleted++
		msg := fmt.Sprintf("deleted instance %s of project %s: it was created for %s, which no longer exists", in.ID, sc.project, owner)
		logger.Info("deleted an orphaned instance", "instance", in.ID, "namespace", owner.Namespace, "run", owner.Run, "uid", owner.UID)
		if s.Recorder != nil {
			s.Recorder.Event(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: owner.Namespace}}, corev1.EventTypeNormal, EventOrphanInstanceDeleted, msg)
		}
	}
	return deleted
}

// runGone reports whether the owner's run no longer exists: not found, or
// found with another UID (a new run of the same name).
func (s *InstanceSweeper) runGone(ctx context.Context, owner target.Owner) (bool, error) {
	run := &v1alpha1.BenchmarkRun{}
	err := s.APIReader.Get(ctx, client.ObjectKey{Namespace: owner.Namespace, Name: owner.Run}, run)
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, err
	}
	return string(run.UID) != owner.UID, nil
}

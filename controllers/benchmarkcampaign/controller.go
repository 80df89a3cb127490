package benchmarkcampaign

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/campaign/plan"
	"github.com/spanbench/spanbench/controllers/guardrails"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
	"github.com/spanbench/spanbench/spanner/pricing"
)

// BenchmarkCampaignReconciler runs BenchmarkCampaigns: it starts
// iterations, stamps out each iteration's BenchmarkRuns in the campaign's
// order (iteration.go, ordering.go) and, when they have
// all ended, compares them (comparison.go). It never edits a run
// it created: runs are the run controller's.
type BenchmarkCampaignReconciler struct {
	client.Client
	// APIReader reads the campaign's own ConfigMaps (iteration snapshots,
	// reports and history) from the API server: the manager's cache holds only
	// runs' ConfigMaps (cmd/spanbench/manager.go). SetupWithManager
	// defaults it to the manager's.
	APIReader client.Reader
	// Results is the results bucket the runs' reports may be in (the
	// BenchmarkRunReconciler's); nil: none.
	Results  *bucket.Bucket
	Scheme   *runtime.Scheme
	Recorder record.EventRecorder
	// Clock is injected so that iteration times are testable.
	Clock clock.PassiveClock
	// CostLimits are the guardrails in money (an iteration's); Prices is
	// the catalog the campaign is priced with (cost.go). The zero values
	// cap nothing and price with the embedded catalog.
	CostLimits guardrails.CostLimits
	Prices     guardrails.PriceSource
	// Arrivals is a run's open-loop schedule (pod.RunArrivals): a run's
	// report is read back only within what its schedule produced.
	// Required.
	Arrivals runreport.Schedules
}

// +kubebuilder:rbac:groups=bench.spanbench.io,resources=benchmarkcampaigns,verbs=get;list;watch
// +kubebuilder:rbac:groups=bench.spanbench.io,resources=benchmarkcampaigns/status,verbs=get;patch;update
// +kubebuilder:rbac:groups=bench.spanbench.io,resources=benchmarkcampaigns/finalizers,verbs=update
// +kubebuilder:rbac:groups=bench.spanbench.io,resources=benchmarkruns,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch

// Reconcile moves one campaign one step forward and writes its status
// once, if it changed; events follow the status write.
func (r *BenchmarkCampaignReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	c := &v1alpha1.BenchmarkCampaign{}
	if err := r.Get(ctx, req.NamespacedName, c); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !c.DeletionTimestamp.IsZero() {
		// Its runs go with it through their owner references.
		return ctrl.Result{}, nil
	}
	before := c.DeepCopy()
	outbox := &statuswrite.Outbox{}
	res, err := r.reconcile(ctx, c, outbox)
	if patchErr := r.patchStatus(ctx, before, c); patchErr != nil {
		if apierrors.IsConflict(patchErr) || apierrors.IsNotFound(patchErr) {
			return statuswrite.RequeueSoon, nil
		}
		return ctrl.Result{}, patchErr
	}
	outbox.Emit(r.Recorder, c)
	if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
		// A write of this pass met a newer object: decide again on fresh data.
		return statuswrite.RequeueSoon, nil
	}
	return res, err
}

// patchStatus writes the status if it changed (statuswrite.Patch), locked
// on the version read (the campaign's metadata is never written): a
// decision taken on a stale campaign (an iteration started twice) must
// not land.
func (r *BenchmarkCampaignReconciler) patchStatus(ctx context.Context, before, c *v1alpha1.BenchmarkCampaign) error {
	_, err := statuswrite.Patch(ctx, r, before, c, func(c *v1alpha1.BenchmarkCampaign) any { return c.Status })
	return err
}

// SetupWithManager watches campaigns and the runs they own. Without an
// APIReader, the campaign's ConfigMaps are read through the manager's.
func (r *BenchmarkCampaignReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.Arrivals == nil {
		return errors.New("BenchmarkCampaignReconciler: Arrivals is required: without the runs' schedules their reports' counts are unbounded")
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("benchmarkcampaign").
		For(&v1alpha1.BenchmarkCampaign{}).
		Owns(&v1alpha1.BenchmarkRun{}).
		Complete(r)
}

// reconcile advances the iterations that run, each by its own snapshot of
// the spec, then plans the campaign's current spec and starts a due
// iteration. A campaign whose current spec cannot be planned is Stalled
// until it changes: it starts nothing, while its running iterations go on.
func (r *BenchmarkCampaignReconciler) reconcile(ctx context.Context, c *v1alpha1.BenchmarkCampaign, outbox *statuswrite.Outbox) (ctrl.Result, error) {
	now := r.Clock.Now()
	runs, err := r.campaignRuns(ctx, c)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := &pass{c: c, runs: runs, now: now, outbox: outbox}
	current, planErr := planCampaign(&c.Spec)
	p.current = current
	if err := r.advanceIterations(ctx, p); err != nil {
		setCampaignConditions(c, p.stall, now)
		return ctrl.Result{}, err
	}
	c.Status.Active = activeNames(p.runs)
	priceIterations(p)
	if err := r.estimateCampaign(ctx, p); err != nil {
		setCampaignConditions(c, p.stall, now)
		return ctrl.Result{}, err
	}
	if planErr != nil {
		c.Status.ObservedGeneration = c.Generation
		setCampaignConditions(c, stalledBy(reasonInvalidCampaign, planErr.Error()), now)
		return ctrl.Result{}, nil
	}
	res, err := r.startDue(ctx, p)
	if err != nil {
		return ctrl.Result{}, err
	}
	setCampaignConditions(c, p.stall, now)
	showQueuedRuns(c, p.runs) // database_queue.go
	if p.started {
		// The iteration is recorded by this pass's status write; its
		// snapshot and runs are made by the next pass, so a crash in
		// between loses nothing and a retry duplicates nothing.
		return statuswrite.RequeueSoon, nil
	}
	return res, nil
}

// pass is what one reconcile of a campaign knows and decided.
type pass struct {
	c *v1alpha1.BenchmarkCampaign
	// current is the campaign's current spec, planned; nil when it is
	// invalid. A new iteration's snapshot is taken from it.
	current *iterationPlan
	// runs are the campaign's runs, by name; created runs are added.
	runs   map[string]*v1alpha1.BenchmarkRun
	now    time.Time
	outbox *statuswrite.Outbox
	// started says this pass recorded a new iteration.
	started bool
	// stall is why the campaign cannot proceed, if it cannot.
	stall *stall
	// iterationCost is one iteration of the current spec, estimated.
	iterationCost pricing.Money
}

// planCampaign expands the matrix of spec and finds the baseline.
func planCampaign(spec *v1alpha1.BenchmarkCampaignSpec) (*iterationPlan, error) {
	// plan.Expand is the one planning check: the CLI and the admission
	// webhook run it too, within plan.Admit, whose further checks a
	// campaign stored before them is not stalled for (its comparison marks
	// what it cannot compare Invalid).
	cells, baseline, err := plan.Expand(spec)
	if err != nil {
		return nil, err
	}
	return &iterationPlan{spec: spec, cells: cells, baseline: baseline}, nil
}

package serverfigures

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/spanner"
	"google.golang.org/grpc/codes"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/guardrails"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/serverstats"
	"github.com/spanbench/spanbench/spanner/session"
)

// After a run succeeded, the manager reads Spanner's own statistics of its
// operations (SPANNER_SYS, docs/server-stats.md) once the minutes covering
// the run have settled, joins them to the client's counts from the run's
// report, and records them in status.operations[].server, status.serverStats
// and the report. The run's outcome never waits for them or depends on
// them: condition ServerStatsCollected follows the run. An Ephemeral
// instance is deleted only after the collection ended (its statistics go
// with it), within the instance's allowed lifetime.

// ServerStatsConfig is how the manager collects a run's server statistics.
type ServerStatsConfig struct {
	// Prefix is put before the statistics tables' names; "" is
	// serverstats.SysPrefix. Tests give the prefix of stand-in tables.
	Prefix string
	// Settle is the wait after the run's last statistics minute closes
	// before it is read (--server-stats-settle); 0 is
	// serverstats.DefaultSettle.
	Settle time.Duration
	// GiveUpAfter bounds the retries of a collection that keeps failing
	// with a transient error, counted from when it could first be read; 0
	// is DefaultServerStatsGiveUp.
	GiveUpAfter time.Duration
	// OnEmulator collects on emulator endpoints too. The emulator has no
	// SPANNER_SYS, so the manager never sets it and no flag does: it is for
	// tests whose emulator database holds stand-in tables under Prefix.
	OnEmulator bool
}

// DefaultServerStatsGiveUp is how long a collection is retried past its
// settle time before the condition says it failed.
const DefaultServerStatsGiveUp = 15 * time.Minute

// serverStatsRetryEvery is the pace of retries after a transient error.
const serverStatsRetryEvery = 30 * time.Second

// serverStatsTimeout bounds one collection's Spanner calls.
const serverStatsTimeout = 2 * time.Minute

// Collection is what the collections need of the BenchmarkRun reconciler,
// as values: its clock and clients, its Spanner access and its report
// store. The reconciler makes one per pass.
type Collection struct {
	// Clock is the reconciler's.
	Clock clock.PassiveClock
	// Reader reads the run's report past the cache; Writer updates its
	// head ConfigMap.
	Reader client.Reader
	Writer client.Writer
	// Results is the results bucket a report may be stored in; nil keeps
	// reports in ConfigMaps.
	Results *bucket.Bucket
	// Schedules bound the counts of the report read back (the
	// reconciler's Arrivals).
	Schedules runreport.Schedules
	// StoreChunks rewrites a chunked report's chunks into cm (or the
	// bucket) before its head is updated.
	StoreChunks func(ctx context.Context, run *v1alpha1.BenchmarkRun, cm *corev1.ConfigMap, doc *result.Document) error
	// ApplyResult writes a report's figures into the run's status.
	ApplyResult func(status *v1alpha1.BenchmarkRunStatus, doc *result.Document, run *v1alpha1.BenchmarkRun)
	// Endpoint is the run's Spanner endpoint.
	Endpoint func(run *v1alpha1.BenchmarkRun) endpoint.Endpoint
	// Opener opens the run's database; nil when the manager's Spanner
	// access cannot.
	Opener DatabaseOpener
	// Call makes a Spanner read outside the reconcile workers, keyed by
	// run and step, bounded by timeout; ok is false while it is under way,
	// and the run is asked again after Poll.
	Call func(ctx context.Context, run *v1alpha1.BenchmarkRun, step string, timeout time.Duration,
		read func(ctx context.Context) (*serverstats.Result, error)) (_ *serverstats.Result, _ error, ok bool)
	Poll time.Duration
	// Stats and Metrics are the operator's settings of the two collections.
	Stats   ServerStatsConfig
	Metrics ServerMetricsConfig
}

func (c Collection) now() time.Time { return c.Clock.Now() }

// maxMessageBytes bounds the collected condition's message: a condition's
// message holds at most 32 KiB.
const maxMessageBytes = 8 << 10

// DatabaseOpener opens a data session of a run's database with the
// manager's identity; the preparer that talks to Spanner is one. The
// session is closed by the caller.
type DatabaseOpener interface {
	OpenDatabase(ctx context.Context, run *v1alpha1.BenchmarkRun) (*session.Session, error)
}

func (c ServerStatsConfig) prefix() string {
	if c.Prefix == "" {
		return serverstats.SysPrefix
	}
	return c.Prefix
}

// collector is base with the config's prefix and settle time and the
// run's dialect.
func (c ServerStatsConfig) collector(run *v1alpha1.BenchmarkRun, base serverstats.Collector) serverstats.Collector {
	base.Prefix, base.Settle, base.Dialect = c.prefix(), c.Settle, run.Spec.Target.Dialect
	return base
}

// StartServerStats sets the condition of a run that just succeeded with
// merged result doc: nothing to read on the emulator or without a whole
// minute, else Pending until the minutes settle. It records the minutes
// the collection will read in status.serverStats.
func (c Collection) StartServerStats(run *v1alpha1.BenchmarkRun, doc *result.Document) {
	set := func(status metav1.ConditionStatus, reason, msg string) {
		run.SetCondition(v1alpha1.ConditionServerStatsCollected, status, reason, msg, c.now())
	}
	if c.Endpoint(run).IsEmulator() && !c.Stats.OnEmulator {
		set(metav1.ConditionFalse, v1alpha1.ReasonNotAvailableOnEmulator,
			"not available on the emulator: it has no SPANNER_SYS statistics tables; nothing was read")
		return
	}
	if run.Status.Partial {
		set(metav1.ConditionFalse, v1alpha1.ReasonPartialResults, "not collected: the run's results are partial; "+
			"Spanner's statistics hold the missing runners' operations too, which the client counts do not, so per-operation figures would be wrong")
		return
	}
	w := serverStatsWindow(doc)
	minutes := w.Minutes()
	if w.Validate() != nil || len(minutes) == 0 {
		set(metav1.ConditionFalse, v1alpha1.ReasonNoWholeMinute,
			"the measured window (after the warm-up) holds no whole statistics minute; nothing is read (runs shorter than 2 minutes may not hold one)")
		return
	}
	a := w.Aligned()
	run.Status.ServerStats = &v1alpha1.ServerStatsSummary{Source: c.Stats.prefix(),
		WindowStart: &metav1.Time{Time: a.Start}, WindowEnd: &metav1.Time{Time: a.End}, Minutes: int32(len(minutes))}
	set(metav1.ConditionFalse, v1alpha1.ReasonServerStatsPending, pendingMessage(c.readyAt(run)))
}

// serverStatsWindow is the run's measured window: from the warm-up's end
// (warm-up minutes are never read) to the end of measurement.
func serverStatsWindow(doc *result.Document) serverstats.Window {
	return serverstats.Window{Start: doc.WarmUp.End, End: doc.End}
}

func pendingMessage(at time.Time) string {
	return fmt.Sprintf("waiting for Spanner to publish the statistics of the run's last minute: read from %s on", at.UTC().Format(time.RFC3339))
}

// readyAt is when the run's statistics are read: the last whole minute's
// end plus the settle time.
func (c Collection) readyAt(run *v1alpha1.BenchmarkRun) time.Time {
	s := run.Status.ServerStats
	if s == nil || s.WindowEnd == nil {
		return c.now()
	}
	col := c.Stats.collector(run, serverstats.Collector{})
	return col.ReadyAt(serverstats.Window{Start: s.WindowStart.Time, End: s.WindowEnd.Time})
}

// giveUpAt is when a collection still failing is abandoned: GiveUpAfter
// past readyAt, and for an Ephemeral instance no later than the end of its
// allowed lifetime, when it must be deleted (and its statistics go).
func (c Collection) giveUpAt(run *v1alpha1.BenchmarkRun) (time.Time, string) {
	after := c.Stats.GiveUpAfter
	if after <= 0 {
		after = DefaultServerStatsGiveUp
	}
	at, why := c.readyAt(run).Add(after), fmt.Sprintf("%s after the statistics settled", after)
	if run.Spec.Target.Instance.Mode == v1alpha1.InstanceEphemeral {
		if end := run.CreationTimestamp.Add(guardrails.EphemeralLifetime(run)); end.Before(at) {
			at, why = end, "the Ephemeral instance's allowed lifetime ended"
		}
	}
	return at, why
}

// serverStatsPending reports whether the run's collection is still to be
// done.
func serverStatsPending(run *v1alpha1.BenchmarkRun) bool {
	c := meta.FindStatusCondition(run.Status.Conditions, v1alpha1.ConditionServerStatsCollected)
	return c != nil && c.Reason == v1alpha1.ReasonServerStatsPending
}

// CollectServerStats moves a pending collection forward. pending is true
// while it must be come back to (at res's RequeueAfter); the run's wrap-up
// waits for it, since deleting an Ephemeral instance deletes its
// statistics.
func (c Collection) CollectServerStats(ctx context.Context, run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox) (res ctrl.Result, pending bool, err error) {
	if !serverStatsPending(run) {
		return ctrl.Result{}, false, nil
	}
	now := c.now()
	giveUp, why := c.giveUpAt(run)
	if ready := c.readyAt(run); now.Before(ready) {
		if !ready.Before(giveUp) {
			c.endServerStats(run, outbox, v1alpha1.ReasonServerStatsFailed, "not collected: "+why+" before the statistics settled")
			return ctrl.Result{}, false, nil
		}
		return ctrl.Result{RequeueAfter: max(ready.Sub(now), time.Second)}, true, nil
	}
	doc, cm, err := c.RunReport(ctx, run)
	if runreport.APITrouble(err) {
		return ctrl.Result{}, true, err // the API server's, not the report's: retried with backoff
	}
	if err != nil {
		c.endServerStats(run, outbox, v1alpha1.ReasonServerStatsFailed, "not collected: the run's report cannot be read: "+statuswrite.Shorten(err.Error(), statuswrite.MaxProblemBytes))
		return ctrl.Result{}, false, nil
	}
	stats, apportioned, called, err := c.readServerStats(ctx, run, doc)
	if !called {
		return ctrl.Result{RequeueAfter: c.Poll}, true, nil
	}
	if err != nil {
		return c.serverStatsError(run, outbox, err, now, giveUp, why)
	}
	doc.Server = serverSection(stats, c.Stats.prefix(), apportioned, now)
	if err := c.UpdateReport(ctx, cm, run, doc); err != nil {
		return ctrl.Result{}, true, err // a conflict or a lost write: the next pass reads again
	}
	applyServerStats(&run.Status, doc.Server)
	msg := collectedMessage(doc.Server)
	c.endServerStats(run, outbox, v1alpha1.ReasonServerStatsCollected, msg)
	return ctrl.Result{}, false, nil
}

// endServerStats ends the collection with reason; only Collected is True.
func (c Collection) endServerStats(run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox, reason, msg string) {
	status := metav1.ConditionFalse
	if reason == v1alpha1.ReasonServerStatsCollected {
		status = metav1.ConditionTrue
	}
	if !run.SetCondition(v1alpha1.ConditionServerStatsCollected, status, reason, msg, c.now()) {
		return
	}
	if status == metav1.ConditionTrue {
		outbox.Normal(EventServerStatsCollected, msg)
	} else {
		outbox.Warning(EventServerStatsNotCollected, msg)
	}
}

// Events of the collection.
const (
	EventServerStatsCollected    = "ServerStatsCollected"
	EventServerStatsNotCollected = "ServerStatsNotCollected"
)

// serverStatsError turns a failed collection into the condition: retried
// while transient and before giveUp, else ended with a reason a user can
// act on. A message never quotes a dial error: it names the gRPC code.
func (c Collection) serverStatsError(run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox, err error, now, giveUp time.Time, why string) (ctrl.Result, bool, error) {
	var notSettled *serverstats.NotSettledError
	if errors.As(err, &notSettled) {
		return ctrl.Result{RequeueAfter: max(notSettled.ReadyAt.Sub(now), time.Second)}, true, nil
	}
	reason, msg, transient := ClassifyServerStatsError(err)
	if transient && now.Before(giveUp) {
		run.SetCondition(v1alpha1.ConditionServerStatsCollected, metav1.ConditionFalse, v1alpha1.ReasonServerStatsPending,
			"retrying: "+msg, c.now())
		return ctrl.Result{RequeueAfter: serverStatsRetryEvery}, true, nil
	}
	if transient {
		msg = fmt.Sprintf("gave up (%s): %s", why, msg)
	}
	c.endServerStats(run, outbox, reason, "not collected: "+msg)
	return ctrl.Result{}, false, nil
}

// ClassifyServerStatsError is the condition reason of a failed
// collection, a message that names the cause without quoting dial errors
// or addresses, and whether trying again may help.
func ClassifyServerStatsError(err error) (reason, msg string, transient bool) {
	if errors.Is(err, endpoint.ErrNotAllowed) {
		return v1alpha1.ReasonServerStatsFailed, "the run's endpoint is not among the addresses the manager may dial; nothing was dialed", false
	}
	code := spanner.ErrCode(err)
	desc := spannerDesc(err)
	switch {
	case code == codes.PermissionDenied:
		return v1alpha1.ReasonPermissionDenied, "PermissionDenied: the manager's identity may not read SPANNER_SYS " +
			"(it needs spanner.databases.select on the database, e.g. roles/spanner.databaseReader)", false
	case code == codes.NotFound,
		code == codes.InvalidArgument && strings.Contains(strings.ToLower(desc), "not found"):
		return v1alpha1.ReasonStatisticsNotFound, "NotFound: the database or its statistics tables do not exist: " + statuswrite.Shorten(desc, statuswrite.MaxProblemBytes), false
	case code == codes.Unavailable, code == codes.DeadlineExceeded, code == codes.ResourceExhausted,
		code == codes.Aborted, code == codes.Internal, code == codes.Canceled:
		return v1alpha1.ReasonServerStatsFailed, code.String() + " reading the statistics", true
	case code == codes.Unknown:
		// Not a gRPC status: a local error (decoding rows, a refused
		// prefix), whose text is ours.
		return v1alpha1.ReasonServerStatsFailed, statuswrite.Shorten(err.Error(), statuswrite.MaxProblemBytes), false
	}
	return v1alpha1.ReasonServerStatsFailed, code.String() + ": " + statuswrite.Shorten(desc, statuswrite.MaxProblemBytes), false
}

// spannerDesc is the server's description of a Spanner error, without the
// client's wrapping.
func spannerDesc(err error) string {
	return spanner.ErrDesc(err)
}

// readServerStats dials the run's database with the manager's identity
// and reads the statistics of its operations over its measured window.
func (c Collection) readServerStats(ctx context.Context, run *v1alpha1.BenchmarkRun, doc *result.Document) (_ *serverstats.Result, apportioned int64, called bool, _ error) {
	w := serverStatsWindow(doc)
	// The finest tables still holding the window: the minute tables
	// unless the collection comes more than 6 hours after the run.
	g := serverstats.ChooseGranularity(w, c.now())
	ops, apportioned, err := clientMinuteCounts(doc, w, g, statsTags(run))
	if err != nil {
		return nil, 0, true, err
	}
	opener := c.Opener
	if opener == nil {
		return nil, 0, true, errors.New("this manager's Spanner access cannot open databases")
	}
	// The read runs outside the reconcile (c.Call) on a copy of the
	// run; its end queues the run, whose next pass takes the outcome.
	cp := run.DeepCopy()
	col := c.Stats.collector(cp, serverstats.Collector{Clock: c.Clock, Granularity: g})
	res, err, called := c.Call(ctx, run, "server-stats", serverStatsTimeout, func(ctx context.Context) (*serverstats.Result, error) {
		s, err := opener.OpenDatabase(ctx, cp)
		if err != nil {
			return nil, err
		}
		defer s.Close()
		return col.Collect(ctx, s.Client, w, ops)
	})
	return res, apportioned, called, err
}

// statsTags returns, for an operation of run's report, the tags its
// statistics are found under ("" for none): its request tag if it sends
// statements, its transaction tag if it commits (OperationSpec.
// StatisticsTags, from the operation's resolved spec; spanner/workload's
// executor sets both tags on everything it sends).
func statsTags(run *v1alpha1.BenchmarkRun) func(op result.Operation) (request, transaction string) {
	w := run.Spec.Workload.Resolved()
	specs := make(map[string]v1alpha1.OperationSpec, len(w.Operations))
	for _, o := range w.Operations {
		specs[o.Name] = o
	}
	return func(op result.Operation) (request, transaction string) {
		spec, ok := specs[op.Name]
		if !ok { // a report checked against its run names its operations; the type alone says the rest
			spec = v1alpha1.OperationSpec{Name: op.Name, Type: v1alpha1.OperationType(op.Type)}
		}
		tag := v1alpha1.RequestTag(run.Name, op.Name)
		statements, transactions := spec.StatisticsTags()
		if statements {
			request = tag
		}
		if transactions {
			transaction = tag
		}
		return request, transaction
	}
}

// RunReport reads and checks the run's merged result and its ConfigMap.
// The head is read past the cache, as its chunks are: both collections
// of a run may rewrite the report in one pass, and a cached head older
// than the chunks would not match them.
func (c Collection) RunReport(ctx context.Context, run *v1alpha1.BenchmarkRun) (*result.Document, *corev1.ConfigMap, error) {
	ref := run.Status.Report
	if ref == nil {
		return nil, nil, errors.New("the run has no report")
	}
	cm := &corev1.ConfigMap{}
	if err := c.Reader.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: ref.ConfigMapName}, cm); err != nil {
		return nil, nil, err
	}
	if !metav1.IsControlledBy(cm, run) {
		return nil, nil, fmt.Errorf("ConfigMap %s is not the run's", cm.Name)
	}
	if err := runreport.CheckReportPointer(run, cm); err != nil {
		return nil, nil, fmt.Errorf("ConfigMap %s: %w", cm.Name, err)
	}
	doc, err := protocol.LoadResult(ctx, c.Reader, c.Results, cm, ref.Key, protocol.ReportLimits())
	if err != nil {
		return nil, nil, fmt.Errorf("ConfigMap %s: %w", cm.Name, err)
	}
	doc, err = runreport.CheckReport(run, doc, c.Schedules)
	return doc, cm, err
}

// UpdateReport writes doc back into the run's report ConfigMap, locked on
// the version read. A chunked report's chunks are rewritten in place
// first: a reader between the two writes sees chunks that do not match
// their head, an integrity error it may retry.
func (c Collection) UpdateReport(ctx context.Context, cm *corev1.ConfigMap, run *v1alpha1.BenchmarkRun, doc *result.Document) error {
	cm = cm.DeepCopy()
	if err := c.StoreChunks(ctx, run, cm, doc); err != nil {
		return err
	}
	return c.Writer.Update(ctx, cm)
}

func collectedMessage(s *result.Server) string {
	captured := 0
	for _, o := range s.Operations {
		if len(o.NotCaptured) == 0 {
			captured++
		}
	}
	msg := fmt.Sprintf("%d of %d operations captured over %d whole minutes; %d client operations apportioned between minutes",
		captured, len(s.Operations), len(s.Minutes), s.ApportionedOps)
	if len(s.Notes) > 0 {
		msg += "; " + strings.Join(s.Notes, "; ")
	}
	return statuswrite.Shorten(msg, maxMessageBytes)
}

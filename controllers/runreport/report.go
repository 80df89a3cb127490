package runreport

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
	"github.com/spanbench/spanbench/spanner/monitoring"
)

// ReportKey is the key of the merged result in the report ConfigMap.
const ReportKey = "result.json.gz"

// RunExpectation is what every shard result of run must fit (by now, when
// given), from the run's own spec and status: the shard's result is written by a pod that
// may run the user's image, and nothing in it is trusted.
func RunExpectation(run *v1alpha1.BenchmarkRun, now time.Time) (result.Expect, error) {
	var start time.Time
	if run.Status.StartTime != nil {
		start = run.Status.StartTime.Time
	}
	e, err := protocol.ResultExpectation(run.Name, &run.Spec.Workload, start, run.Spec.Deadlines.Resolve().Overrun, -1, int(run.Replicas()))
	if !now.IsZero() {
		e.Latest = now.Add(protocol.MaxClockSkew)
	}
	return e, err
}

// Schedules gives a run's open-loop schedule as its runner pods send it
// (pod.RunArrivals, handed in by the binary: the manager's packages do
// not link the pod role). A stored report read back is held to it like
// the shards it was merged from: no interval may count more operations
// than the schedule produced in it.
type Schedules func(*v1alpha1.BenchmarkRun) result.Arrivals

// ReadReport reads the merged result of a finished run from its report
// ConfigMap, and its chunks when it has any (spanbench report --run); a
// report in a results bucket needs ReadReportFrom.
func ReadReport(ctx context.Context, c client.Reader, key client.ObjectKey, schedules Schedules) (*result.Document, error) {
	return ReadReportFrom(ctx, c, nil, key, schedules)
}

// ReadReportFrom is ReadReport with the results bucket b (nil: none), for
// a report stored there.
// Anyone who may edit ConfigMaps in the namespace may have edited them:
// the result is checked against the run like a shard's, and its figures
// derived again. The run's Cloud Monitoring figures are the report's own
// monitoring section, written when they are collected; a report stored
// before they were written there gets them from status.serverMetrics.
func ReadReportFrom(ctx context.Context, c client.Reader, b *bucket.Bucket, key client.ObjectKey, schedules Schedules) (*result.Document, error) {
	run := &v1alpha1.BenchmarkRun{}
	if err := c.Get(ctx, key, run); err != nil {
		return nil, err
	}
	if run.Status.Report == nil {
		return nil, fmt.Errorf("BenchmarkRun %s has no report yet (phase %s)", key, run.Status.Phase)
	}
	doc, err := LoadReport(ctx, c, b, run)
	if err != nil {
		return nil, err
	}
	if doc, err = CheckReport(run, doc, schedules); err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s: %w", key.Namespace, run.Status.Report.ConfigMapName, err)
	}
	return WithStatusMonitoring(doc, run), nil
}

// LoadReport reads a run's stored report, inline, chunked or an object of
// b, unchecked.
func LoadReport(ctx context.Context, c client.Reader, b *bucket.Bucket, run *v1alpha1.BenchmarkRun) (*result.Document, error) {
	ref := run.Status.Report
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: run.Namespace, Name: ref.ConfigMapName}, cm); err != nil {
		return nil, err
	}
	if err := CheckReportPointer(run, cm); err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s: %w", run.Namespace, cm.Name, err)
	}
	scoped, err := RunObjects(b, run)
	if err != nil {
		return nil, err
	}
	doc, err := protocol.LoadResult(ctx, c, scoped, cm, ref.Key, protocol.ReportLimits())
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s/%s: %w", run.Namespace, cm.Name, err)
	}
	return doc, nil
}

// CheckReport checks a run's merged result against the run and its
// schedule, and derives its figures again. Without schedules it refuses:
// a report whose counts nothing bounds is not read.
func CheckReport(run *v1alpha1.BenchmarkRun, doc *result.Document, schedules Schedules) (*result.Document, error) {
	if schedules == nil {
		return nil, errors.New("no schedule to bound the report's counts by (runreport.Schedules)")
	}
	e, err := RunExpectation(run, time.Time{})
	if err != nil {
		return nil, err
	}
	e.Arrivals = schedules(run)
	m := result.NewCheckedMerger(e)
	if err := m.Add(doc); err != nil {
		return nil, err
	}
	return m.Result()
}

// RunObjects is the results bucket scoped to run's objects
// (bucket.RunPrefix): every key the manager reads, writes or deletes for a
// run is checked against it, whatever a ConfigMap's pointer says. nil
// without a bucket.
func RunObjects(b *bucket.Bucket, run *v1alpha1.BenchmarkRun) (*bucket.Bucket, error) {
	if b == nil {
		return nil, nil
	}
	return b.Scope(bucket.RunPrefix(run.Namespace, run.Name, string(run.UID)))
}

// CheckReportPointer refuses a report ConfigMap pointing at an object
// other than its run's report: anyone who may edit ConfigMaps in the
// namespace may have edited it.
func CheckReportPointer(run *v1alpha1.BenchmarkRun, cm *corev1.ConfigMap) error {
	p, ok, err := bucket.DecodePointer(cm.Data, protocol.ReportLimits().MaxObjectBytes())
	switch want := bucket.ReportKey(run.Namespace, run.Name, string(run.UID)); {
	case err != nil:
		return err
	case ok && p.Key != want:
		return fmt.Errorf("points at object %.80q; the run's report is %s", p.Key, want)
	}
	return nil
}

// ServerMetricsWindow is the run's load window: from its start time to
// the end of its duration, or to its completion if it ended sooner.
func ServerMetricsWindow(run *v1alpha1.BenchmarkRun) (monitoring.Window, bool) {
	st := run.Status
	if st.StartTime == nil || st.CompletionTime == nil {
		return monitoring.Window{}, false
	}
	start := st.StartTime.Time
	end := st.CompletionTime.Time
	if d := run.Spec.Workload.TotalDuration(); d > 0 && start.Add(d).Before(end) {
		end = start.Add(d)
	}
	w := monitoring.Window{Start: start, End: end}
	if st.WarmUpEnd != nil && !st.WarmUpEnd.Time.Before(start) && st.WarmUpEnd.Time.Before(end) {
		w.WarmUpEnd = st.WarmUpEnd.Time
	}
	return w, w.Validate() == nil
}

// APITrouble says err is the API server's failure to answer, as opposed
// to a report that is missing or unreadable.
func APITrouble(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && !apierrors.IsNotFound(err)
}

package pod

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

// Load is a loader pod's life: read the run's control ConfigMap, load
// slice Index of the dataset's key space, of as many as the workload has
// loader pods (dataset.loaderPods), with batched mutations — of the
// tables the control document lists (LoadTables; the others' markers
// matched) or of every table — and report in the loader's own ConfigMap as it goes: state
// Loading with the rows loaded so far, then Succeeded, or Failed with a
// message before Load returns the error.
//
// Rows are a pure function of their key and written with InsertOrUpdate,
// so a loader the Job retries converges to the same rows; it resumes where
// the failed attempt had loaded every row (resumeFrom), rather than
// starting a slice of possibly hundreds of millions of rows over. A loader whose map already says Succeeded does nothing. The
// dataset marker is not the loaders' business: the controller writes it
// once every slice succeeded.
func Load(ctx context.Context, c client.Client, o Options) error {
	o = o.withDefaults()
	if err := o.validate(); err != nil {
		return err
	}
	r := newRunner(c, o, "loader", protocol.LoaderConfigMapName(o.Run, o.Index))
	r.loads = true
	cm, err := r.waitForControl(ctx)
	if err != nil {
		return err
	}
	done, err := r.load(ctx, cm)
	switch {
	case done:
		r.log.Info("the slice was already loaded; nothing to do")
	case err != nil:
		r.reportFailure(ctx, err)
	}
	return err
}

// load loads the slice; done says an earlier attempt already had.
func (r *runner) load(ctx context.Context, cm *corev1.ConfigMap) (done bool, err error) {
	ctl, err := r.decode(cm)
	if err != nil {
		return false, err
	}
	loaders := int(*ctl.Workload.Dataset.LoaderPods)
	if r.o.Index >= loaders {
		return false, fmt.Errorf("loader index %d is out of range: the run has %d loaders", r.o.Index, loaders)
	}
	own, err := r.getOwn(ctx)
	if err != nil {
		return false, err
	}
	earlier, err := protocol.DecodeLoaderReport(own.Data)
	if err != nil {
		return false, fmt.Errorf("ConfigMap %s: %w", r.own, err)
	}
	if earlier.State == protocol.StateSucceeded {
		return true, nil
	}
	ld, err := loadOf(ctl)
	if err != nil {
		return false, err
	}
	sl := newSlice(ld.Units, r.o.Index, loaders, earlier.ResumeFrom)
	if sl.start > sl.from {
		r.log.Info("resuming the slice where an earlier attempt left it", "from", sl.from, "resumeFrom", sl.start, "to", sl.to)
	}
	rep := startReport(earlier, sl)
	if err := r.patchOwn(ctx, protocol.EncodeLoaderReport(rep)); err != nil {
		return false, fmt.Errorf("reporting the start of the load: %w", err)
	}
	s, err := r.open(ctx, ctl)
	if err != nil {
		return false, err
	}
	defer s.Close()
	return false, r.loadSlice(ctx, s, ctl, ld, sl, rep)
}

// loadOf is the part of the dataset the loaders load: the tables the
// control document lists (the others' markers matched), or every table.
// The list comes from a ConfigMap; a table the dataset does not have is
// an error naming it.
func loadOf(ctl *protocol.Control) (dataset.Load, error) {
	schema, err := workload.SchemaFor(&ctl.Workload, ctl.Target.Dialect)
	if err != nil {
		return dataset.Load{}, err
	}
	ld, err := dataset.LoadOf(schema, *ctl.Workload.Dataset.Rows, ctl.LoadTables)
	if err != nil {
		return dataset.Load{}, fmt.Errorf("%s: LoadTables: %w", protocol.KeyControl, err)
	}
	return ld, nil
}

// startReport is what a loader writes as it starts: Loading, with the
// rows below its start already counted. An attempt that finds an earlier
// attempt's report (Loading or Failed) is a retry of the Job's: it counts
// itself in retries and records the row it resumed at, so that the
// controller can tell users, long after the failed pod is gone.
func startReport(earlier protocol.LoaderReport, sl slice) protocol.LoaderReport {
	rep := protocol.LoaderReport{State: protocol.StateLoading, Loaded: sl.start - sl.from, ResumeFrom: sl.start,
		Retries: earlier.Retries, ResumedAt: earlier.ResumedAt}
	if earlier.State == protocol.StateLoading || earlier.State == protocol.StateFailed {
		rep.Retries++
		rep.ResumedAt = sl.start
	}
	return rep
}

// slice is a loader's share of the key space, [from, to), and where this
// attempt starts: from, or where an earlier attempt of the same index got
// to (its resumeFrom report).
type slice struct{ from, to, start int64 }

// newSlice is loader i of n's slice of rows keys, resumed at resumeFrom
// when that is a row of the slice. The value comes from the loader's own
// map; anything else starts the slice over.
func newSlice(rows int64, i, n int, resumeFrom int64) slice {
	from, to := protocol.SliceBounds(rows, i, n)
	sl := slice{from: from, to: to, start: from}
	if resumeFrom > from && resumeFrom <= to {
		sl.start = resumeFrom
	}
	return sl
}

// loadSlice loads this loader's rows of the dataset, reporting in its map
// as it goes the rows loaded (the controller sums them into the run's
// status) and how far every row is loaded (resumeFrom, where a retry
// starts), and Succeeded with the slice's size at the end. A load that
// fails records how far it got before it returns. rep is the report
// written as the load started; ld is what the run loads, of which the
// slice is a share.
func (r *runner) loadSlice(ctx context.Context, s *session.Session, ctl *protocol.Control, ld dataset.Load, sl slice, rep protocol.LoaderReport) error {
	d := ctl.Workload.Dataset
	log := r.log.WithValues("table", ld.Schema.Table(), "from", sl.from, "to", sl.to)
	if len(ctl.LoadTables) > 0 {
		log = log.WithValues("tables", ctl.LoadTables)
	}
	log.Info("loading this slice of the dataset", "start", sl.start)
	logDue, reportDue := throttle(logEvery), throttle(r.o.LoadProgressInterval)
	last := dataset.Progress{Done: sl.start}
	progress := func(p dataset.Progress) {
		last = p
		if logDue() {
			log.Info("loading", "loaded", p.Loaded, "total", p.Total, "rowsPerSecond", int64(p.RowsPerSecond()))
		}
		if reportDue() {
			rep.Loaded, rep.ResumeFrom = sl.start-sl.from+p.Loaded, p.Done
			r.reportLoaded(ctx, rep)
		}
	}
	begin := time.Now()
	if err := dataset.Range(ctx, s.Client, ld.Schema, sl.start, sl.to, dataset.WritersOf(d, int(*d.LoaderPods)), progress); err != nil {
		wctx, cancel := durable(ctx)
		defer cancel()
		rep.Loaded, rep.ResumeFrom = sl.start-sl.from+last.Loaded, last.Done
		r.reportLoaded(wctx, rep)
		return err
	}
	wctx, cancel := durable(ctx)
	defer cancel()
	rep.State, rep.Loaded, rep.ResumeFrom = protocol.StateSucceeded, sl.to-sl.from, sl.to
	if err := r.patchFinal(wctx, protocol.EncodeLoaderReport(rep)); err != nil {
		return fmt.Errorf("reporting the loaded slice: %w", err)
	}
	log.Info("loaded this slice of the dataset", "rows", sl.to-sl.start, "took", time.Since(begin).String())
	return nil
}

// reportLoaded writes rep (the rows loaded so far and the resume
// watermark), once and without retries: a progress report that fails is
// replaced by the next, and an older watermark only means a retry redoes
// more.
func (r *runner) reportLoaded(ctx context.Context, rep protocol.LoaderReport) {
	body, _ := json.Marshal(protocol.EncodeLoaderReport(rep))
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: r.own.Namespace, Name: r.own.Name}}
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := r.c.Patch(callCtx, cm, client.RawPatch(types.MergePatchType, body)); err != nil {
		r.log.V(1).Info("reporting load progress failed", "error", err.Error())
	}
}

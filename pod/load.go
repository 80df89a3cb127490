package pod

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

// Load is a loader pod's life: read the run's control ConfigMap, load
// slice Index of the dataset's key space, of as many as the workload has
// loader pods (dataset.loaderPods), with batched
// mutations, and report in the loader's own ConfigMap as it goes: state
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
	r := newRunner(c, o, "loader", LoaderConfigMapName(o.Run, o.Index))
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
	if own.Data[KeyState] == StateSucceeded {
		return true, nil
	}
	sl := newSlice(*ctl.Workload.Dataset.Rows, r.o.Index, loaders, own.Data[KeyResumeFrom])
	if sl.start > sl.from {
		r.log.Info("resuming the slice where an earlier attempt left it", "from", sl.from, "resumeFrom", sl.start, "to", sl.to)
	}
	if err := r.patchOwn(ctx, startReport(own.Data, sl)); err != nil {
		return false, fmt.Errorf("reporting the start of the load: %w", err)
	}
	s, err := r.open(ctx, ctl)
	if err != nil {
		return false, err
	}
	defer s.Close()
	return false, r.loadSlice(ctx, s, ctl, sl)
}

// startReport is what a loader writes as it starts: Loading, with the
// rows below its start already counted. An attempt that finds an earlier
// attempt's report (Loading or Failed) is a retry of the Job's: it counts
// itself in retries and records the row it resumed at, so that the
// controller can tell users, long after the failed pod is gone.
func startReport(earlier map[string]string, sl slice) mapPatch {
	p := mapPatch{Data: map[string]string{KeyState: StateLoading, KeyLoaded: strconv.FormatInt(sl.start-sl.from, 10), KeyMessage: ""}}
	if s := earlier[KeyState]; s == StateLoading || s == StateFailed {
		n, _ := strconv.Atoi(earlier[KeyRetries])
		p.Data[KeyRetries] = strconv.Itoa(max(n, 0) + 1)
		p.Data[KeyResumedAt] = strconv.FormatInt(sl.start, 10)
	}
	return p
}

// slice is a loader's share of the key space, [from, to), and where this
// attempt starts: from, or where an earlier attempt of the same index got
// to (its resumeFrom report).
type slice struct{ from, to, start int64 }

// newSlice is loader i of n's slice of rows keys, resumed at resumeFrom
// when that is a row of the slice. The value comes from the loader's own
// map; anything else starts the slice over.
func newSlice(rows int64, i, n int, resumeFrom string) slice {
	from, to := SliceBounds(rows, i, n)
	sl := slice{from: from, to: to, start: from}
	if v, err := strconv.ParseInt(resumeFrom, 10, 64); err == nil && v > from && v <= to {
		sl.start = v
	}
	return sl
}

// loadSlice loads this loader's rows of the dataset, reporting in its map
// as it goes the rows loaded (the controller sums them into the run's
// status) and how far every row is loaded (resumeFrom, where a retry
// starts), and Succeeded with the slice's size at the end. A load that
// fails records how far it got before it returns.
func (r *runner) loadSlice(ctx context.Context, s *session.Session, ctl *Control, sl slice) error {
	schema, err := workload.SchemaFor(&ctl.Workload, ctl.Target.Dialect)
	if err != nil {
		return err
	}
	d := ctl.Workload.Dataset
	log := r.log.WithValues("table", schema.Table(), "from", sl.from, "to", sl.to)
	log.Info("loading this slice of the dataset", "start", sl.start)
	logDue, reportDue := throttle(logEvery), throttle(r.o.LoadProgressInterval)
	last := dataset.Progress{Done: sl.start}
	progress := func(p dataset.Progress) {
		last = p
		if logDue() {
			log.Info("loading", "loaded", p.Loaded, "total", p.Total, "rowsPerSecond", int64(p.RowsPerSecond()))
		}
		if reportDue() {
			r.reportLoaded(ctx, sl.start-sl.from+p.Loaded, p.Done)
		}
	}
	begin := time.Now()
	if err := dataset.Range(ctx, s.Client, schema, sl.start, sl.to, int(*d.BatchRows), int(*d.Loaders), progress); err != nil {
		wctx, cancel := durable(ctx)
		defer cancel()
		r.reportLoaded(wctx, sl.start-sl.from+last.Loaded, last.Done)
		return err
	}
	wctx, cancel := durable(ctx)
	defer cancel()
	p := mapPatch{Data: map[string]string{KeyState: StateSucceeded, KeyLoaded: strconv.FormatInt(sl.to-sl.from, 10),
		KeyResumeFrom: strconv.FormatInt(sl.to, 10)}}
	if err := r.patchOwn(wctx, p); err != nil {
		return fmt.Errorf("reporting the loaded slice: %w", err)
	}
	log.Info("loaded this slice of the dataset", "rows", sl.to-sl.start, "took", time.Since(begin).String())
	return nil
}

// reportLoaded writes the rows loaded so far and the resume watermark,
// once and without retries: a progress report that fails is replaced by
// the next, and an older watermark only means a retry redoes more.
func (r *runner) reportLoaded(ctx context.Context, rows, done int64) {
	body, _ := json.Marshal(mapPatch{Data: map[string]string{KeyLoaded: strconv.FormatInt(rows, 10), KeyResumeFrom: strconv.FormatInt(done, 10)}})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: r.own.Namespace, Name: r.own.Name}}
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := r.c.Patch(callCtx, cm, client.RawPatch(types.MergePatchType, body)); err != nil {
		r.log.V(1).Info("reporting load progress failed", "error", err.Error())
	}
}

// SliceBounds is loader i of n's share [from, to) of rows keys, so that
// the n slices cover every key exactly once. It avoids i*rows, which could
// overflow.
func SliceBounds(rows int64, i, n int) (from, to int64) {
	at := func(i int) int64 {
		q, rem := rows/int64(n), rows%int64(n)
		return q*int64(i) + rem*int64(i)/int64(n)
	}
	return at(i), at(i + 1)
}

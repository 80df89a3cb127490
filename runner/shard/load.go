package shard

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

	"github.com/spanbench/spanbench/runner/dataset"
	"github.com/spanbench/spanbench/runner/session"
	"github.com/spanbench/spanbench/runner/workload"
)

// Load is a loader pod's life: read the run's control ConfigMap, load
// slice Index of Control.Loaders of the dataset's key space with batched
// mutations, and report in the loader's own ConfigMap as it goes: state
// Loading with the rows loaded so far, then Succeeded, or Failed with a
// message before Load returns the error.
//
// Rows are a pure function of their key and written with InsertOrUpdate,
// so a loader the Job retries starts its slice over and converges to the
// same rows. A loader whose map already says Succeeded does nothing. The
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
	if r.o.Index >= ctl.Loaders {
		return false, fmt.Errorf("loader index %d is out of range: the run has %d loaders", r.o.Index, ctl.Loaders)
	}
	own, err := r.getOwn(ctx)
	if err != nil {
		return false, err
	}
	if own.Data[KeyState] == StateSucceeded {
		return true, nil
	}
	if err := r.patchOwn(ctx, mapPatch{Data: map[string]string{KeyState: StateLoading, KeyLoaded: "0", KeyMessage: ""}}); err != nil {
		return false, fmt.Errorf("reporting the start of the load: %w", err)
	}
	s, err := r.open(ctx, ctl)
	if err != nil {
		return false, err
	}
	defer s.Close()
	return false, r.loadSlice(ctx, s, ctl)
}

// loadSlice loads this loader's rows of the dataset, reporting the rows
// loaded in its map as it goes (the controller sums them into the run's
// status), and Succeeded with the slice's size at the end.
func (r *runner) loadSlice(ctx context.Context, s *session.Session, ctl *Control) error {
	schema, err := workload.SchemaFor(&ctl.Workload, ctl.Target.Dialect)
	if err != nil {
		return err
	}
	d := ctl.Workload.Dataset
	from, to := sliceBounds(*d.Rows, r.o.Index, ctl.Loaders)
	log := r.log.WithValues("table", schema.Table(), "from", from, "to", to)
	log.Info("loading this slice of the dataset")
	logDue, reportDue := throttle(logEvery), throttle(r.o.LoadProgressInterval)
	progress := func(p dataset.Progress) {
		if logDue() {
			log.Info("loading", "loaded", p.Loaded, "total", p.Total, "rowsPerSecond", int64(p.RowsPerSecond()))
		}
		if reportDue() {
			r.reportLoaded(ctx, p.Loaded)
		}
	}
	begin := time.Now()
	if err := dataset.Range(ctx, s.Client, schema, from, to, int(*d.BatchRows), int(*d.Loaders), progress); err != nil {
		return err
	}
	wctx, cancel := durable(ctx)
	defer cancel()
	p := mapPatch{Data: map[string]string{KeyState: StateSucceeded, KeyLoaded: strconv.FormatInt(to-from, 10)}}
	if err := r.patchOwn(wctx, p); err != nil {
		return fmt.Errorf("reporting the loaded slice: %w", err)
	}
	log.Info("loaded this slice of the dataset", "rows", to-from, "took", time.Since(begin).String())
	return nil
}

// reportLoaded writes the rows loaded so far, once and without retries: a
// progress report that fails is replaced by the next.
func (r *runner) reportLoaded(ctx context.Context, rows int64) {
	body, _ := json.Marshal(mapPatch{Data: map[string]string{KeyLoaded: strconv.FormatInt(rows, 10)}})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: r.own.Namespace, Name: r.own.Name}}
	callCtx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := r.c.Patch(callCtx, cm, client.RawPatch(types.MergePatchType, body)); err != nil {
		r.log.V(1).Info("reporting load progress failed", "error", err.Error())
	}
}

// sliceBounds is slice i's share [from, to) of rows keys, so that the n
// slices cover every key exactly once. It avoids i*rows, which could
// overflow.
func sliceBounds(rows int64, i, n int) (from, to int64) {
	at := func(i int) int64 {
		q, rem := rows/int64(n), rows%int64(n)
		return q*int64(i) + rem*int64(i)/int64(n)
	}
	return at(i), at(i + 1)
}

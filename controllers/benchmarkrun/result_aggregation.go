package benchmarkrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun/children"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/protocol/chunks"
)

// When every runner has reported (shard_reports.go), the controller
// decodes the shard results, once, merges their histograms exactly, and
// writes the merged result into the report ConfigMap and its figures into
// the status.

// aggregate decodes and merges the shard results exactly, writes the
// report (with checks, a TPCC run's consistency conditions) and the status
// figures, and ends the run. The runners are stopped by the wrap-up, once
// the ended status is stored.
func (r *BenchmarkRunReconciler) aggregate(ctx context.Context, run *v1alpha1.BenchmarkRun, outbox *statuswrite.Outbox, checks []result.Check) (ctrl.Result, error) {
	reports, err := r.readShards(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	if r.Arrivals == nil {
		return ctrl.Result{}, errors.New("the reconciler has no schedule to check results against (Arrivals)")
	}
	merged, problems, invalid, err := mergeShards(reports, run, r.now(), r.Arrivals(run),
		shardLoaders{chunked: r.shardLoader(ctx, run), object: r.shardObjectLoader(ctx, run)})
	var unavailable *protocol.UnavailableError
	if errors.As(err, &unavailable) {
		return ctrl.Result{}, err // the API server's trouble, not the result's: retried
	}
	for _, msg := range invalid {
		outbox.Warning(v1alpha1.ReasonResultInvalid, msg)
	}
	if err != nil {
		r.fail(run, outbox, v1alpha1.ReasonResultInvalid, err.Error())
		return ctrl.Result{}, nil
	}
	sec, err := r.runSearchSection(ctx, run)
	if err != nil {
		return ctrl.Result{}, err
	}
	merged.SetSearch(sec)
	applyResult(&run.Status, merged, run)
	warnIfReadsFoundNothing(run, merged, r.now())
	warnIfBatchCutShort(run, merged, r.now())
	run.Status.Environment.RunnerRegion = r.ranInRegion(ctx, run)
	recordChecks(merged, checks, notChecked(run))
	inconsistent := failedChecks(checks)
	applyTPCC(&run.Status, merged)
	if err := r.writeReport(ctx, run, merged); err != nil {
		problems = append(problems, "no report: "+err.Error())
	} else {
		run.Status.Report = &v1alpha1.ReportReference{ConfigMapName: v1alpha1.ResultConfigMapName(run), Key: runreport.ReportKey}
	}
	msg := fmt.Sprintf("%s operations, p99 %s", run.Status.Overall.Throughput+"/s", p99(run.Status.Overall))
	if len(problems) > 0 {
		msg += "; partial: " + joinProblems(problems)
	}
	if len(inconsistent) > 0 {
		r.fail(run, outbox, v1alpha1.ReasonConsistencyFailed, failConsistency(inconsistent))
		return ctrl.Result{}, nil
	}
	run.MarkSucceeded(len(problems) > 0, msg, r.now())
	if run.Status.Report != nil {
		r.serverFigures().StartServerStats(run, merged)
	}
	outbox.Normal(v1alpha1.ReasonCompleted, msg)
	return ctrl.Result{}, nil
}

// mergeShards decodes the succeeded shards' results, the only place they
// are decoded, checks each against the run (result.Expect: its spec, shard,
// intervals, times, counts and histograms) and merges the valid ones, one
// at a time: each shard's document is dropped once added, so the manager
// holds the merged intervals and one shard, whatever the number of shards.
// arrivals, the run's open-loop schedule (nil for a load without one),
// bounds every interval's counts, a shard's and the merge's.
// A shard refused is left out, and the others still make a (partial)
// result. It reports the shards that failed, sent unreadable reports or
// invalid results, for the condition message; invalid names the shards
// whose results were refused (and, for a chunked result, the chunk; for
// an object, the object). load reads a chunked result or an object; a
// *protocol.UnavailableError it returns ends the merge with that error,
// for the reconcile to retry.
func mergeShards(reports []shardReport, run *v1alpha1.BenchmarkRun, now time.Time, arrivals result.Arrivals, load shardLoaders) (doc *result.Document, problems, invalid []string, err error) {
	expect, err := runreport.RunExpectation(run, now)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("the run's own workload cannot be recorded: %w", err)
	}
	expect.Arrivals = arrivals
	merger := result.NewCheckedMerger(expect)
	merged := 0
	for _, o := range reports {
		switch {
		case o.err != nil:
			problems = append(problems, fmt.Sprintf("shard %d: unreadable report: %v", o.index, o.err))
		case o.State == protocol.StateSucceeded:
			if err := addShard(merger, o, load); err != nil {
				var unavailable *protocol.UnavailableError
				if errors.As(err, &unavailable) {
					return nil, nil, nil, err
				}
				msg := fmt.Sprintf("shard %d: invalid result: %s", o.index, statuswrite.Shorten(err.Error(), statuswrite.MaxProblemBytes))
				problems, invalid = append(problems, msg), append(invalid, msg)
				continue
			}
			merged++
		case o.State == protocol.StateFailed:
			problems = append(problems, fmt.Sprintf("shard %d failed: %s", o.index, o.Message))
		default:
			problems = append(problems, fmt.Sprintf("shard %d reported no result", o.index))
		}
	}
	if merged == 0 {
		return nil, problems, invalid, fmt.Errorf("no shard produced a usable result: %s", joinProblems(problems))
	}
	if doc, err = merger.Result(); err != nil {
		return nil, problems, invalid, fmt.Errorf("merging shard results: %w", err)
	}
	return doc, problems, invalid, nil
}

// maxProblemsBytes bounds the problems a condition message lists (each
// within statuswrite.MaxProblemBytes): a condition's message holds at most
// 32 KiB.
const maxProblemsBytes = 8 << 10

// joinProblems lists problems for a condition message, within
// maxProblemsBytes.
func joinProblems(problems []string) string {
	var b strings.Builder
	for i, p := range problems {
		if b.Len()+len(p) > maxProblemsBytes {
			fmt.Fprintf(&b, "; and %d more", len(problems)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p)
	}
	return b.String()
}

// chunkedLoader reads shard index's chunked result, which h describes.
type chunkedLoader func(index int, h chunks.Head) (*result.Document, error)

// shardLoaders read the shard results not inline in their ConfigMaps.
type shardLoaders struct {
	chunked chunkedLoader
	object  objectLoader
}

// shardLoader reads a shard's chunked result through the uncached reader,
// one chunk at a time: the chunks are not in the manager's cache.
func (r *BenchmarkRunReconciler) shardLoader(ctx context.Context, run *v1alpha1.BenchmarkRun) chunkedLoader {
	return func(index int, h chunks.Head) (*result.Document, error) {
		return protocol.LoadChunked(ctx, r.uncached(), run.Namespace, protocol.ShardConfigMapName(run.Name, index), h, protocol.ResultBudget())
	}
}

// uncached is the reader of objects outside the manager's cache.
func (r *BenchmarkRunReconciler) uncached() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}

// addShard decodes a succeeded shard's result, inline, chunked or an
// object, checks that it is this shard's alone, and merges it; a refused
// result leaves merger unchanged.
func addShard(merger *result.Merger, o shardReport, load shardLoaders) error {
	var doc *result.Document
	var err error
	switch {
	case o.Chunked != nil:
		doc, err = load.chunked(o.index, *o.Chunked)
	case o.Object != nil && load.object == nil:
		err = fmt.Errorf("points at object %.80q, and no results bucket is configured", o.Object.Key)
	case o.Object != nil:
		doc, err = load.object(o.index, *o.Object)
	default:
		doc, err = protocol.DecodeResult(o.Result)
	}
	switch {
	case err != nil:
		return err
	case len(doc.Shards) != 1 || doc.Shards[0].Index != o.index:
		return fmt.Errorf("result does not describe shard %d alone", o.index)
	}
	return merger.Add(doc)
}

func p99(f *v1alpha1.ResultFigures) string {
	if f == nil || f.Latency == nil || f.Latency.P99 == nil {
		return "-"
	}
	return f.Latency.P99.Duration.String()
}

// writeReport stores the merged result, histograms and time series
// included, in a ConfigMap that outlives the runner pods, and in chunk
// ConfigMaps before it when it is too long for one (protocol.StoreResult);
// all go with the run. With a results bucket, the result is an object
// instead, written first, and the ConfigMap points at it.
func (r *BenchmarkRunReconciler) writeReport(ctx context.Context, run *v1alpha1.BenchmarkRun, doc *result.Document) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: v1alpha1.ResultConfigMapName(run), Namespace: run.Namespace, Labels: v1alpha1.RunLabels(run)}}
	if err := r.storeReportChunks(ctx, run, cm, doc); err != nil {
		return err
	}
	return r.ensure(ctx, run, cm)
}

// storeReportChunks encodes doc as the report of run, writes its chunks
// when it needs any, and sets what the report ConfigMap cm must hold: the
// chunks' head in its data, or the result inline in its binaryData.
func (r *BenchmarkRunReconciler) storeReportChunks(ctx context.Context, run *v1alpha1.BenchmarkRun, cm *corev1.ConfigMap, doc *result.Document) error {
	if r.Results != nil {
		return r.storeReportObject(ctx, run, cm, doc)
	}
	data, err := protocol.EncodeReport(doc)
	if err != nil {
		return err
	}
	owner := metav1.NewControllerRef(run, v1alpha1.GroupVersion.WithKind("BenchmarkRun"))
	stored, err := protocol.StoreResult(data, protocol.ReportLimits(), run.Namespace, v1alpha1.ResultConfigMapName(run), []metav1.OwnerReference{*owner}, nil)
	if err != nil {
		return err
	}
	for _, chunk := range stored.Chunks {
		if err := protocol.ApplyChunk(ctx, r.Client, chunk, reportFieldOwner); err != nil {
			return fmt.Errorf("writing ConfigMap %s: %w", chunk.Name, err)
		}
	}
	if stored.Head != nil {
		cm.Data, cm.BinaryData = stored.Head.Data(), nil
	} else {
		cm.Data, cm.BinaryData = nil, map[string][]byte{runreport.ReportKey: stored.Inline}
	}
	return nil
}

// reportFieldOwner is the controller's field manager of report chunks.
const reportFieldOwner = "spanbench-manager"

// applyResult writes a merged result's figures into the status. Every
// percentile comes from the merged histograms.
func applyResult(status *v1alpha1.BenchmarkRunStatus, doc *result.Document, run *v1alpha1.BenchmarkRun) {
	var first, last time.Time
	for i, s := range doc.Shards {
		if i == 0 || s.Started.Before(first) {
			first = s.Started
		}
		if s.Started.After(last) {
			last = s.Started
		}
	}
	status.StartSkew = &metav1.Duration{Duration: last.Sub(first)}
	status.WarmUpEnd = &metav1.Time{Time: doc.WarmUp.End}
	stable := doc.WarmUp.Stable
	status.WarmUpStable = &stable
	status.Operations = status.Operations[:0]
	for _, op := range doc.Totals {
		status.Operations = append(status.Operations, v1alpha1.OperationResult{Name: op.Name, Type: v1alpha1.OperationType(op.Type),
			RequestTag: v1alpha1.RequestTag(run.Name, op.Name), GFELatency: gfeLatency(doc, op), ResultFigures: figures(op, 0)})
	}
	sort.Slice(status.Operations, func(i, j int) bool { return status.Operations[i].Name < status.Operations[j].Name })
	overall := figures(doc.Overall, doc.MeasuredMissed())
	status.Overall = &overall
	status.Streams = streamResults(doc, run)
	status.Environment = environment(doc, run)
}

// streamResults are a streams run's figures per stream: each stream of
// the spec that has a section (a stream none of whose runners reported
// has none), each with the operations of its own mix, in name order.
// Their number and names come from the run's spec, never the document.
func streamResults(doc *result.Document, run *v1alpha1.BenchmarkRun) []v1alpha1.StreamResult {
	var out []v1alpha1.StreamResult
	for i := range run.Spec.Workload.Streams {
		spec := &run.Spec.Workload.Streams[i]
		j := slices.IndexFunc(doc.Streams, func(s result.StreamSection) bool { return s.Name == spec.Name })
		if j < 0 {
			continue
		}
		sec := &doc.Streams[j]
		overall := figures(sec.Overall, sec.MeasuredMissed())
		sr := v1alpha1.StreamResult{Name: spec.Name, StartTime: &metav1.Time{Time: sec.Start}, Overall: &overall}
		if sec.WallTimeSeconds > 0 {
			sr.WallTime = &metav1.Duration{Duration: time.Duration(sec.WallTimeSeconds * float64(time.Second)).Round(time.Microsecond)}
		}
		for _, op := range sec.Totals {
			if slices.ContainsFunc(spec.Operations, func(o v1alpha1.StreamOperation) bool { return o.Name == op.Name }) {
				sr.Operations = append(sr.Operations, v1alpha1.StreamOperationResult{Name: op.Name, ResultFigures: figures(op, 0)})
			}
		}
		out = append(out, sr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func figures(op result.Operation, missed uint64) v1alpha1.ResultFigures {
	f := v1alpha1.ResultFigures{
		Count: int64(op.OK), NotFound: int64(op.NotFound), Throughput: v1alpha1.FormatThroughput(op.Throughput),
		Errors: int64(op.ErrorCount()), Retries: int64(op.Retries), Missed: int64(missed),
		Latency: latency(op.Latency),
	}
	if len(op.Errors) > 0 {
		f.ErrorsByCode = map[string]int64{}
		for code, n := range op.Errors {
			f.ErrorsByCode[code] = int64(n)
		}
	}
	return f
}

func latency(s histogram.Summary) *v1alpha1.LatencySummary {
	if s.Count == 0 {
		return nil
	}
	return &v1alpha1.LatencySummary{
		P50: v1alpha1.LatencyFromMicros(s.P50), P90: v1alpha1.LatencyFromMicros(s.P90),
		P99: v1alpha1.LatencyFromMicros(s.P99), P999: v1alpha1.LatencyFromMicros(s.P999),
		Max: v1alpha1.LatencyFromMicros(s.Max),
	}
}

// gfeLatency is op's GFE latency percentiles, or why it has none.
func gfeLatency(doc *result.Document, op result.Operation) *v1alpha1.GFELatency {
	if note := doc.GFENote(op); note != "" {
		return &v1alpha1.GFELatency{NotAvailable: note}
	}
	return &v1alpha1.GFELatency{Count: op.GFELatency.Count,
		P50: v1alpha1.LatencyFromMicros(op.GFELatency.P50), P99: v1alpha1.LatencyFromMicros(op.GFELatency.P99)}
}

func environment(doc *result.Document, run *v1alpha1.BenchmarkRun) *v1alpha1.RunEnvironment {
	env := &v1alpha1.RunEnvironment{
		SpanbenchVersion: doc.Environment.SpanbenchVersion, ClientVersion: doc.Environment.ClientVersion,
		GoVersion: doc.Environment.GoVersion, InstanceConfig: doc.Target.InstanceConfig,
		Runners: int32(len(doc.Shards)),
		Nodes:   run.Spec.Target.Instance.Nodes, ProcessingUnits: run.Spec.Target.Instance.ProcessingUnits,
	}
	if t := run.Status.Target; t != nil {
		// What Spanner reported, not what the spec asked for.
		env.InstanceConfig, env.Nodes, env.ProcessingUnits = t.InstanceConfig, children.CopyInt32(t.Nodes), children.CopyInt32(t.ProcessingUnits)
	}
	env.Endpoint = v1alpha1.EndpointSpanner
	if doc.Target.Endpoint == "emulator" {
		env.Endpoint = v1alpha1.EndpointEmulator
	}
	return env
}

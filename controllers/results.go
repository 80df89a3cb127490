package controllers

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/load/histogram"
	"github.com/spanbench/spanbench/load/result"
	"github.com/spanbench/spanbench/pod"
)

// ReportKey is the key of the merged result in the report ConfigMap.
const ReportKey = "result.json.gz"

// shardOutcome is what one shard ConfigMap says.
type shardOutcome struct {
	index   int
	ready   bool
	state   string
	message string
	doc     *result.Document
	err     error // the shard's result could not be used
}

// readShard interprets shard i's ConfigMap. Its content comes from a pod:
// every problem becomes an error on the outcome, never a panic.
func readShard(i int, cm *corev1.ConfigMap, run *v1alpha1.BenchmarkRun) shardOutcome {
	o := shardOutcome{index: i}
	if cm == nil {
		return o
	}
	_, o.ready = cm.Data[pod.KeyReady]
	o.state, o.message = cm.Data[pod.KeyState], cm.Data[pod.KeyMessage]
	if o.state != pod.StateSucceeded {
		return o
	}
	doc, err := pod.DecodeResult(cm.BinaryData[pod.KeyResult])
	switch {
	case err != nil:
		o.err = err
	case doc.Run != run.Name:
		o.err = fmt.Errorf("result is of run %q", doc.Run)
	case len(doc.Shards) != 1 || doc.Shards[0].Index != i:
		o.err = fmt.Errorf("result does not describe shard %d alone", i)
	default:
		o.doc = doc
	}
	return o
}

// mergeShards merges the usable shard results. It reports the shards that
// failed or sent unusable results, for the condition message.
func mergeShards(outcomes []shardOutcome) (*result.Document, []string, error) {
	var docs []*result.Document
	var problems []string
	for _, o := range outcomes {
		switch {
		case o.doc != nil:
			docs = append(docs, o.doc)
		case o.err != nil:
			problems = append(problems, fmt.Sprintf("shard %d: unusable result: %v", o.index, o.err))
		case o.state == pod.StateFailed:
			problems = append(problems, fmt.Sprintf("shard %d failed: %s", o.index, o.message))
		default:
			problems = append(problems, fmt.Sprintf("shard %d reported no result", o.index))
		}
	}
	if len(docs) == 0 {
		return nil, problems, fmt.Errorf("no shard produced a usable result: %s", strings.Join(problems, "; "))
	}
	merged, err := result.Merge(docs...)
	if err != nil {
		return nil, problems, fmt.Errorf("merging shard results: %w", err)
	}
	return merged, problems, nil
}

// applyResult writes a merged result's figures into the status. Every
// percentile comes from the merged histograms.
func applyResult(st *v1alpha1.BenchmarkRunStatus, doc *result.Document, run *v1alpha1.BenchmarkRun) {
	var missed uint64
	var first, last time.Time
	for i, s := range doc.Shards {
		missed += s.Missed
		if i == 0 || s.Started.Before(first) {
			first = s.Started
		}
		if s.Started.After(last) {
			last = s.Started
		}
	}
	st.StartSkew = &metav1.Duration{Duration: last.Sub(first)}
	st.WarmUpEnd = &metav1.Time{Time: doc.WarmUp.End}
	stable := doc.WarmUp.Stable
	st.WarmUpStable = &stable
	st.Operations = st.Operations[:0]
	for _, op := range doc.Totals {
		st.Operations = append(st.Operations, v1alpha1.OperationResult{Name: op.Name, Type: v1alpha1.OperationType(op.Type), ResultFigures: figures(op, 0)})
	}
	sort.Slice(st.Operations, func(i, j int) bool { return st.Operations[i].Name < st.Operations[j].Name })
	overall := figures(doc.Overall, missed)
	st.Overall = &overall
	st.Environment = environment(doc, run)
}

func figures(op result.Operation, missed uint64) v1alpha1.ResultFigures {
	f := v1alpha1.ResultFigures{
		Count: int64(op.OK), Throughput: v1alpha1.FormatThroughput(op.Throughput),
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

func environment(doc *result.Document, run *v1alpha1.BenchmarkRun) *v1alpha1.RunEnvironment {
	env := &v1alpha1.RunEnvironment{
		SpanbenchVersion: doc.Environment.SpanbenchVersion, ClientVersion: doc.Environment.ClientVersion,
		GoVersion: doc.Environment.GoVersion, InstanceConfig: doc.Target.InstanceConfig,
		Runners: int32(len(doc.Shards)), RunnerRegion: run.Spec.Runners.Region,
		Nodes: run.Spec.Target.Instance.Nodes, ProcessingUnits: run.Spec.Target.Instance.ProcessingUnits,
	}
	if t := run.Status.Target; t != nil {
		// What Spanner reported, not what the spec asked for.
		env.InstanceConfig, env.Nodes, env.ProcessingUnits = t.InstanceConfig, copyInt32(t.Nodes), copyInt32(t.ProcessingUnits)
	}
	env.Endpoint = v1alpha1.EndpointSpanner
	if doc.Target.Endpoint == "emulator" {
		env.Endpoint = v1alpha1.EndpointEmulator
	}
	return env
}

func dur(d *metav1.Duration) *time.Duration {
	if d == nil {
		return nil
	}
	return &d.Duration
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

package shardrun_test

import (
	"context"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/emulatortest"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/internal/spannerfake"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/result/histogram"
	"github.com/spanbench/spanbench/runner/engine"
	"github.com/spanbench/spanbench/runner/shardrun"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/session"
)

// ladderSpec is a closed-loop YCSB mix of a Read API read, a SQL read, a
// DML update and a mutation insert.
func ladderSpec() *v1alpha1.WorkloadSpec {
	rows, one := int64(100), int32(1)
	s := &v1alpha1.WorkloadSpec{
		Type:    v1alpha1.WorkloadYCSB,
		Dataset: v1alpha1.DatasetSpec{Rows: &rows},
		Operations: []v1alpha1.OperationSpec{
			{Name: "read", Type: v1alpha1.OpRead, Weight: 1},
			{Name: "query", Type: v1alpha1.OpRead, API: v1alpha1.APISQL, Weight: 1},
			{Name: "update", Type: v1alpha1.OpUpdate, WritePath: v1alpha1.WriteDML, Weight: 1},
			{Name: "insert", Type: v1alpha1.OpInsert, Weight: 1},
		},
		Load:     v1alpha1.LoadSpec{Concurrency: &one},
		Duration: &metav1.Duration{Duration: 2 * time.Second},
		Interval: &metav1.Duration{Duration: time.Second},
	}
	*s = s.Resolved()
	return s
}

// runOne runs spec's shard 0 of 1 on s.
func runOne(t *testing.T, s *session.Session, spec *v1alpha1.WorkloadSpec) *result.Document {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := shardrun.Config("ladder", spec, s, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := engine.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestGFELatencyComesFromTheServerTimingHeader runs a mix against a fake
// Spanner front end that answers every RPC with a known
// `server-timing: gfet4t7; dur=N`: each operation's GFE histogram holds
// one value per successful operation, the sum of its RPCs' N.
func TestGFELatencyComesFromTheServerTimingHeader(t *testing.T) {
	emulatortest.NoMetadataServer(t)
	fake := &spannerfake.Server{ServerTiming: map[string]string{
		"StreamingRead":       "gfet4t7; dur=3",
		"ExecuteStreamingSql": "gfet4t7; dur=5",
		"ExecuteSql":          "gfet4t7; dur=7",
		"BeginTransaction":    "gfet4t7; dur=11",
		"Commit":              "afe; dur=2, gfet4t7; dur=13",
		"CreateSession":       "gfet4t7; dur=1000",
		"BatchCreateSessions": "gfet4t7; dur=1000",
	}}
	fake.Start(t)
	ep := endpoint.Cloud(fake.Addr(), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	target := v1alpha1.TargetSpec{Project: "p", Instance: v1alpha1.InstanceSpec{Name: "i"}, Database: "d"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := session.Open(ctx, ep, target)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	doc := runOne(t, s, ladderSpec())
	t.Logf("calls: %v", fake.Calls())
	want := map[string]time.Duration{
		"read":   3 * time.Millisecond,  // one StreamingRead
		"query":  5 * time.Millisecond,  // one ExecuteStreamingSql
		"update": 20 * time.Millisecond, // ExecuteSql beginning the transaction, then Commit
		"insert": 24 * time.Millisecond, // BeginTransaction, then Commit
	}
	for _, op := range doc.Totals {
		if op.OK == 0 || op.ErrorCount() > 0 {
			t.Fatalf("%s: %d OK, errors %v: the fake did not answer the client as Spanner would", op.Name, op.OK, op.Errors)
		}
		g := op.GFELatency
		if g == nil {
			t.Errorf("%s: no GFE latency although every response carried one", op.Name)
			continue
		}
		h := histogram.New()
		_ = h.RecordValue(histogram.Micros(want[op.Name]))
		if w := equivalent(h); g.Count != int64(op.OK) || g.P50 != w || g.P99 != w || g.Max != w {
			t.Errorf("%s: GFE latency %+v over %d successful operations; want each %v (%d µs): the sum of its RPCs' server-timing",
				op.Name, *g, op.OK, want[op.Name], w)
		}
		if note := doc.GFENote(op); note != "" {
			t.Errorf("%s: has a GFE latency, yet the result says %q", op.Name, note)
		}
	}
}

// equivalent is the percentile value an HDR histogram holding one value
// reports for it.
func equivalent(h *hdr.Histogram) int64 { return h.ValueAtQuantile(50) }

// TestGFELatencyIsNotAvailableOnTheEmulator: the emulator sets no
// server-timing header, so a run on it has no GFE latency, and its result
// says so instead of reporting zero.
func TestGFELatencyIsNotAvailableOnTheEmulator(t *testing.T) {
	spec := ladderSpec()
	spec.Operations = spec.Operations[:2] // the reads: the emulator serialises transactions
	s := sessiontest.Start(t, spec)
	doc := runOne(t, s, spec)
	for _, op := range append(doc.Totals, doc.Overall) {
		if op.OK == 0 {
			t.Fatalf("%s: no successful operation on the emulator", op.Name)
		}
		if op.GFELatency != nil || op.GFELatencyHistogram != "" {
			t.Errorf("%s: a GFE latency %+v on the emulator, which sets no server-timing header", op.Name, op.GFELatency)
		}
		if note := doc.GFENote(op); note != result.GFEUnavailableEmulator {
			t.Errorf("%s: the result says %q, want %q", op.Name, note, result.GFEUnavailableEmulator)
		}
	}
}

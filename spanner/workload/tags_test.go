package workload_test

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/spanner"
	"cloud.google.com/go/spanner/apiv1/spannerpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/internal/sessiontest"
	"github.com/spanbench/spanbench/spanner/session"
	"github.com/spanbench/spanbench/spanner/workload"
)

// tagTap records the tags of the requests a client sends: the request
// tags of its statements and reads, and the transaction tags of its
// commits.
type tagTap struct {
	mu         sync.Mutex
	statements map[string]bool
	commits    map[string]bool
}

type withRequestOptions interface {
	GetRequestOptions() *spannerpb.RequestOptions
}

func (tp *tagTap) see(req any) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	switch r := req.(type) {
	case *spannerpb.CommitRequest:
		tp.commits[r.GetRequestOptions().GetTransactionTag()] = true
	case *spannerpb.ExecuteSqlRequest, *spannerpb.ReadRequest, *spannerpb.ExecuteBatchDmlRequest:
		tp.statements[r.(withRequestOptions).GetRequestOptions().GetRequestTag()] = true
	}
}

func (tp *tagTap) reset() {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tp.statements, tp.commits = map[string]bool{}, map[string]bool{}
}

func (tp *tagTap) options() []option.ClientOption {
	unary := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		tp.see(req)
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	stream := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		cs, err := streamer(ctx, desc, cc, method, opts...)
		return tappedStream{cs, tp}, err
	}
	return []option.ClientOption{option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(unary)),
		option.WithGRPCDialOption(grpc.WithChainStreamInterceptor(stream))}
}

type tappedStream struct {
	grpc.ClientStream
	tp *tagTap
}

func (s tappedStream) SendMsg(m any) error {
	s.tp.see(m)
	return s.ClientStream.SendMsg(m)
}

// TestEveryOperationSendsTheTagsItsStatisticsAreReadBy runs every
// operation kind on the real emulator through a client that records the
// tags of its requests, and checks them against
// OperationSpec.StatisticsTags, which the manager's SPANNER_SYS
// collection reads rows by: an operation sends statements under its
// request tag exactly when StatisticsTags says so, and commits under its
// transaction tag exactly when it says that. A mismatch would report an
// operation's rows as not captured, or lose its commit latency, aborts
// and lock wait.
func TestEveryOperationSendsTheTagsItsStatisticsAreReadBy(t *testing.T) {
	dml, mutation := v1alpha1.WriteDML, v1alpha1.WriteMutation
	ycsbOp := func(name string, typ v1alpha1.OperationType, api v1alpha1.ReadAPI, path v1alpha1.WritePath) v1alpha1.OperationSpec {
		return v1alpha1.OperationSpec{Name: name, Type: typ, Weight: 1, API: api, WritePath: path}
	}
	ycsb := ycsbSpec(ycsbOp("read", v1alpha1.OpRead, v1alpha1.APIRead, ""), ycsbOp("read-sql", v1alpha1.OpRead, v1alpha1.APISQL, ""),
		ycsbOp("scan", v1alpha1.OpScan, v1alpha1.APIRead, ""), ycsbOp("read-keys", v1alpha1.OpReadKeys, v1alpha1.APISQL, ""),
		ycsbOp("insert", v1alpha1.OpInsert, "", mutation), ycsbOp("insert-dml", v1alpha1.OpInsert, "", dml),
		ycsbOp("update", v1alpha1.OpUpdate, "", mutation), ycsbOp("update-dml", v1alpha1.OpUpdate, "", dml),
		ycsbOp("delete", v1alpha1.OpDelete, "", mutation), ycsbOp("delete-dml", v1alpha1.OpDelete, "", dml),
		ycsbOp("read-modify-write", v1alpha1.OpReadModifyWrite, "", ""))
	tpccOp := func(typ v1alpha1.OperationType, path v1alpha1.WritePath) v1alpha1.OperationSpec {
		return v1alpha1.OperationSpec{Type: typ, Weight: 1, WritePath: path}
	}
	for name, spec := range map[string]*v1alpha1.WorkloadSpec{
		"YCSB":   ycsb,
		"Custom": customSpec(t),
		"TPCC": tpccSpec(1, tpccOp(v1alpha1.OpNewOrder, dml), tpccOp(v1alpha1.OpPayment, mutation),
			tpccOp(v1alpha1.OpOrderStatus, ""), tpccOp(v1alpha1.OpDelivery, mutation), tpccOp(v1alpha1.OpStockLevel, "")),
	} {
		t.Run(name, func(t *testing.T) { checkTags(t, spec) })
	}
}

// deletes is 1 for an operation that deletes rows, else 0.
func deletes(o v1alpha1.OperationSpec) int {
	if o.Type == v1alpha1.OpDelete || (o.Custom != nil && o.Custom.Mutation != nil && o.Custom.Mutation.Kind == v1alpha1.MutationDelete) {
		return 1
	}
	return 0
}

func checkTags(t *testing.T, spec *v1alpha1.WorkloadSpec) {
	s := sessiontest.Start(t, spec)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tp := &tagTap{}
	c, err := s.Endpoint.NewClient(ctx, session.DatabasePath(s.Target), spanner.ClientConfig{}, tp.options()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tapped := &session.Session{Target: s.Target, Endpoint: s.Endpoint, Client: c}
	w, err := tapped.Workload(spec, "tags", 0, 1)
	if err != nil {
		t.Fatalf("binding the workload: %v", err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	ops := w.Ops()
	// Deletes last, so no transaction reads a row a delete took.
	slices.SortStableFunc(ops, func(a, b *workload.Op) int { return cmp.Compare(deletes(a.Spec), deletes(b.Spec)) })
	for _, op := range ops {
		tp.reset()
		// Three calls: a delete takes a row an insert before it added.
		// An operation that fails every time (copy-missing's step reads
		// no row, by design) rolls back: it sends its statements but
		// commits nothing.
		succeeded := false
		for range 3 {
			_, err := op.Do(ctx, rng)
			succeeded = succeeded || err == nil
		}
		tag := v1alpha1.RequestTag("tags", op.Spec.Name)
		statements, commits := op.Spec.StatisticsTags()
		commits = commits && succeeded
		if !succeeded && op.Spec.Name != "copy-missing" {
			t.Errorf("%s failed every call", op.Spec.Name)
		}
		tp.mu.Lock()
		if got := tp.statements[tag]; got != statements {
			t.Errorf("%s (%s): sent statements under its request tag %q: %v; StatisticsTags says %v (statement tags seen: %v)",
				op.Spec.Name, op.Spec.Type, tag, got, statements, tp.statements)
		}
		if got := tp.commits[tag]; got != commits {
			t.Errorf("%s (%s): committed under its transaction tag %q: %v; StatisticsTags says %v (commit tags seen: %v)",
				op.Spec.Name, op.Spec.Type, tag, got, commits, tp.commits)
		}
		tp.mu.Unlock()
	}
}

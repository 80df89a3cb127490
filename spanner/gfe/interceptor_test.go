package gfe_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	sppb "cloud.google.com/go/spanner/apiv1/spannerpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/spanbench/spanbench/internal/spannerfake"
	"github.com/spanbench/spanbench/spanner/gfe"
)

// dial is a raw Spanner gRPC client of the fake with the interceptors.
func dial(t testing.TB, fake *spannerfake.Server) sppb.SpannerClient {
	t.Helper()
	conn, err := grpc.NewClient(fake.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(gfe.UnaryInterceptor), grpc.WithChainStreamInterceptor(gfe.StreamInterceptor))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return sppb.NewSpannerClient(conn)
}

// TestTheInterceptorsSumTheGFETimingOfAnOperationsRPCs: a unary and a
// streaming RPC made under one Timer add their headers' durations to it;
// an RPC whose response has no header adds nothing, and RPCs made without
// a Timer are not attributed to anyone.
func TestTheInterceptorsSumTheGFETimingOfAnOperationsRPCs(t *testing.T) {
	fake := &spannerfake.Server{ServerTiming: map[string]string{
		"Commit":        "gfet4t7; dur=12",
		"StreamingRead": "afe; dur=1, gfet4t7; dur=3.5",
	}}
	fake.Start(t)
	c := dial(t, fake)
	var timer gfe.Timer
	ctx := gfe.WithTimer(context.Background(), &timer)
	if _, err := c.Commit(ctx, &sppb.CommitRequest{}); err != nil {
		t.Fatal(err)
	}
	drain(t, ctx, c)
	if _, err := c.BeginTransaction(ctx, &sppb.BeginTransactionRequest{}); err != nil { // no header
		t.Fatal(err)
	}
	if got, ok := timer.Total(); got != 15500*time.Microsecond || !ok {
		t.Errorf("a commit (12 ms), a streaming read (3.5 ms) and a begin without header: timer says %v (measured %v), want 15.5ms", got, ok)
	}

	var untouched gfe.Timer
	if _, err := c.Commit(context.Background(), &sppb.CommitRequest{}); err != nil {
		t.Fatal(err)
	}
	if got, ok := untouched.Total(); ok || got != 0 {
		t.Errorf("an RPC without a timer in its context was attributed: %v", got)
	}

	var none gfe.Timer
	if _, err := c.BeginTransaction(gfe.WithTimer(context.Background(), &none), &sppb.BeginTransactionRequest{}); err != nil {
		t.Fatal(err)
	}
	if got, ok := none.Total(); ok {
		t.Errorf("no response carried the header, yet the timer says it measured %v", got)
	}
}

func drain(t testing.TB, ctx context.Context, c sppb.SpannerClient) {
	t.Helper()
	s, err := c.StreamingRead(ctx, &sppb.ReadRequest{Columns: []string{"a"}})
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := s.Recv(); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkUnaryInterceptor measures what the interceptor adds to one
// unary RPC: reading the header's metadata and parsing it, against an
// invoker that returns at once with the header set.
func BenchmarkUnaryInterceptor(b *testing.B) {
	for _, bc := range []struct {
		name  string
		timer bool
	}{{"with-timer", true}, {"without-timer", false}} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			var timer gfe.Timer
			if bc.timer {
				ctx = gfe.WithTimer(ctx, &timer)
			}
			// gRPC parses the headers whatever the options; the option
			// only hands them over, as this invoker does.
			md := metadata.MD{gfe.HeaderKey: {"gfet4t7; dur=12"}}
			invoker := func(_ context.Context, _ string, _, _ any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
				for _, o := range opts {
					if h, ok := o.(grpc.HeaderCallOption); ok {
						*h.HeaderAddr = md
					}
				}
				return nil
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = gfe.UnaryInterceptor(ctx, "/google.spanner.v1.Spanner/Commit", nil, nil, nil, invoker)
			}
		})
	}
}

// headerStream is a ClientStream whose headers carry the GFE's timing and
// whose every message arrives at once.
type headerStream struct {
	grpc.ClientStream
	md metadata.MD
}

func (s headerStream) Header() (metadata.MD, error) { return s.md, nil }
func (s headerStream) RecvMsg(any) error            { return nil }

// BenchmarkStreamInterceptor measures what the interceptor adds to one
// streaming RPC of one response: the wrapper and one header parse.
func BenchmarkStreamInterceptor(b *testing.B) {
	var timer gfe.Timer
	ctx := gfe.WithTimer(context.Background(), &timer)
	st := headerStream{md: metadata.MD{gfe.HeaderKey: {"gfet4t7; dur=12"}}}
	streamer := func(context.Context, *grpc.StreamDesc, *grpc.ClientConn, string, ...grpc.CallOption) (grpc.ClientStream, error) {
		return st, nil
	}
	b.ReportAllocs()
	for b.Loop() {
		s, _ := gfe.StreamInterceptor(ctx, &grpc.StreamDesc{ServerStreams: true}, nil, "/google.spanner.v1.Spanner/StreamingRead", streamer)
		_ = s.RecvMsg(nil)
	}
}

// BenchmarkTimerPerOperation measures what each operation pays to carry
// a timer: a context value and reading the sum.
func BenchmarkTimerPerOperation(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var t gfe.Timer
		_ = gfe.WithTimer(ctx, &t)
		_, _ = t.Total()
	}
}

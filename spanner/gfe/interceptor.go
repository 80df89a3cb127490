package gfe

import (
	"context"
	"sync"

	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// ClientOptions are the options that make a Spanner client's RPCs report
// their GFE durations to the Timer in their context.
func ClientOptions() []option.ClientOption {
	return []option.ClientOption{
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(UnaryInterceptor)),
		option.WithGRPCDialOption(grpc.WithChainStreamInterceptor(StreamInterceptor)),
	}
}

// UnaryInterceptor adds a unary RPC's GFE duration to the Timer in its
// context, if any; without one it only calls the invoker.
func UnaryInterceptor(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	t := timerFrom(ctx)
	if t == nil {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	var md metadata.MD
	err := invoker(ctx, method, req, reply, cc, append(opts, grpc.Header(&md))...)
	if d, ok := Duration(md[HeaderKey]); ok {
		t.Add(d)
	}
	return err
}

// StreamInterceptor adds a streaming RPC's GFE duration (its response
// headers', which come with the first response) to the Timer in its
// context, if any.
func StreamInterceptor(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	t := timerFrom(ctx)
	if err != nil || t == nil {
		return s, err
	}
	return &timedStream{ClientStream: s, timer: t}, nil
}

// timedStream reads the headers once the first response (or the stream's
// end) has arrived, when Header no longer blocks.
type timedStream struct {
	grpc.ClientStream
	timer *Timer
	once  sync.Once
}

func (s *timedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	s.once.Do(s.record)
	return err
}

func (s *timedStream) record() {
	md, err := s.ClientStream.Header()
	if err != nil {
		return
	}
	if d, ok := Duration(md[HeaderKey]); ok {
		s.timer.Add(d)
	}
}

// Package spannerfake is a fake Cloud Spanner data API on loopback, for
// what the emulator cannot show: it answers the RPCs the Go client makes
// for spanbench's operations (sessions, single-use reads and queries,
// read-write transactions with DML or mutations) with empty-but-valid
// results, and sets the response headers a test asks for per method, such
// as the Google Front End's `server-timing: gfet4t7; dur=N`. It stores no
// data. A test helper: never linked into the binary.
package spannerfake

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sppb "cloud.google.com/go/spanner/apiv1/spannerpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Server is the fake. Its exported fields are set before Start.
type Server struct {
	sppb.UnimplementedSpannerServer
	// ServerTiming maps a method's name (such as "Commit" or
	// "StreamingRead") to the server-timing header value its responses
	// carry; a method it does not name sends none.
	ServerTiming map[string]string

	addr     string
	sessions atomic.Int64
	mu       sync.Mutex
	calls    map[string]int
}

// Start serves the fake on a loopback port until tb ends.
func (s *Server) Start(tb testing.TB) {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	g := grpc.NewServer()
	sppb.RegisterSpannerServer(g, s)
	s.addr = l.Addr().String()
	go func() { _ = g.Serve(l) }()
	tb.Cleanup(g.Stop)
}

// Addr is the fake's host:port.
func (s *Server) Addr() string { return s.addr }

// Calls is how many times each method was called.
func (s *Server) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.calls))
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

// header counts a call of method and is the headers to send with it.
func (s *Server) header(method string) metadata.MD {
	s.mu.Lock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	s.calls[method]++
	s.mu.Unlock()
	if v, ok := s.ServerTiming[method]; ok {
		return metadata.Pairs("server-timing", v)
	}
	return nil
}

func (s *Server) unary(ctx context.Context, method string) error {
	if md := s.header(method); md != nil {
		return grpc.SetHeader(ctx, md)
	}
	return nil
}

func (s *Server) session(database string, multiplexed bool) *sppb.Session {
	return &sppb.Session{Name: fmt.Sprintf("%s/sessions/s%d", database, s.sessions.Add(1)), Multiplexed: multiplexed,
		CreateTime: timestamppb.Now()}
}

// CreateSession answers with a new session.
func (s *Server) CreateSession(ctx context.Context, req *sppb.CreateSessionRequest) (*sppb.Session, error) {
	return s.session(req.Database, req.GetSession().GetMultiplexed()), s.unary(ctx, "CreateSession")
}

// BatchCreateSessions answers with the sessions asked for.
func (s *Server) BatchCreateSessions(ctx context.Context, req *sppb.BatchCreateSessionsRequest) (*sppb.BatchCreateSessionsResponse, error) {
	out := &sppb.BatchCreateSessionsResponse{}
	for range req.SessionCount {
		out.Session = append(out.Session, s.session(req.Database, false))
	}
	return out, s.unary(ctx, "BatchCreateSessions")
}

// GetSession answers that the session exists.
func (s *Server) GetSession(ctx context.Context, req *sppb.GetSessionRequest) (*sppb.Session, error) {
	return &sppb.Session{Name: req.Name}, s.unary(ctx, "GetSession")
}

// DeleteSession forgets nothing: the fake keeps no sessions.
func (s *Server) DeleteSession(ctx context.Context, _ *sppb.DeleteSessionRequest) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, s.unary(ctx, "DeleteSession")
}

// BeginTransaction answers with a transaction.
func (s *Server) BeginTransaction(ctx context.Context, _ *sppb.BeginTransactionRequest) (*sppb.Transaction, error) {
	return &sppb.Transaction{Id: []byte("tx")}, s.unary(ctx, "BeginTransaction")
}

// Commit answers that the commit happened now.
func (s *Server) Commit(ctx context.Context, _ *sppb.CommitRequest) (*sppb.CommitResponse, error) {
	return &sppb.CommitResponse{CommitTimestamp: timestamppb.Now()}, s.unary(ctx, "Commit")
}

// Rollback answers that the transaction was rolled back.
func (s *Server) Rollback(ctx context.Context, _ *sppb.RollbackRequest) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, s.unary(ctx, "Rollback")
}

// ExecuteSql answers a DML statement: one row changed.
func (s *Server) ExecuteSql(ctx context.Context, req *sppb.ExecuteSqlRequest) (*sppb.ResultSet, error) {
	return &sppb.ResultSet{
		Metadata: &sppb.ResultSetMetadata{RowType: &sppb.StructType{}, Transaction: begun(req.Transaction)},
		Stats:    &sppb.ResultSetStats{RowCount: &sppb.ResultSetStats_RowCountExact{RowCountExact: 1}},
	}, s.unary(ctx, "ExecuteSql")
}

// ExecuteStreamingSql answers a query with one row of one STRING column
// ("" for a DML statement: no row, one row changed).
func (s *Server) ExecuteStreamingSql(req *sppb.ExecuteSqlRequest, stream sppb.Spanner_ExecuteStreamingSqlServer) error {
	if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(req.Sql)), "SELECT") {
		return s.stream(stream, "ExecuteStreamingSql", []string{"c"}, req.Transaction, nil)
	}
	return s.stream(stream, "ExecuteStreamingSql", nil, req.Transaction,
		&sppb.ResultSetStats{RowCount: &sppb.ResultSetStats_RowCountExact{RowCountExact: 1}})
}

// StreamingRead answers a read with one row of the columns asked for.
func (s *Server) StreamingRead(req *sppb.ReadRequest, stream sppb.Spanner_StreamingReadServer) error {
	return s.stream(stream, "StreamingRead", req.Columns, req.Transaction, nil)
}

// stream sends one row of cols (none when cols is empty), all STRING.
func (s *Server) stream(stream partialSender, method string, cols []string,
	tx *sppb.TransactionSelector, stats *sppb.ResultSetStats) error {
	if md := s.header(method); md != nil {
		if err := stream.SetHeader(md); err != nil {
			return err
		}
	}
	rt := &sppb.StructType{}
	var values []*structpb.Value
	for _, c := range cols {
		rt.Fields = append(rt.Fields, &sppb.StructType_Field{Name: c, Type: &sppb.Type{Code: sppb.TypeCode_STRING}})
		values = append(values, structpb.NewStringValue("v"))
	}
	return stream.Send(&sppb.PartialResultSet{
		Metadata: &sppb.ResultSetMetadata{RowType: rt, Transaction: begun(tx)},
		Values:   values, Stats: stats, Last: true,
	})
}

// partialSender is either streaming method's server side.
type partialSender interface {
	SetHeader(metadata.MD) error
	Send(*sppb.PartialResultSet) error
}

// begun is the transaction a request that begins one starts.
func begun(sel *sppb.TransactionSelector) *sppb.Transaction {
	if sel.GetBegin() == nil {
		return nil
	}
	return &sppb.Transaction{Id: []byte("tx")}
}

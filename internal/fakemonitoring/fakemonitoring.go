// Package fakemonitoring is a fake Cloud Monitoring MetricService for
// tests: a real gRPC server on a loopback listener that serves recorded
// time series and records every request, so a test asserts both the
// figures a collector reads and the filter, interval and aggregation it
// asked for. Cloud Monitoring cannot run here, and the emulator has no
// metrics; the fake does not filter or aggregate — it answers with the
// series recorded for the request's metric type, as the real service
// would after aggregating. It serves only what Google documents: a series
// whose labels, resource or unit the collector's table of the documented
// metrics (monitoring.DocumentedMetrics) does not have is refused.
package fakemonitoring

import (
	"context"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"sync"

	"cloud.google.com/go/monitoring/apiv3/v2/monitoringpb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/spanbench/spanbench/spanner/monitoring"
)

// Server is the fake MetricService.
type Server struct {
	monitoringpb.UnimplementedMetricServiceServer

	// Addr is the loopback host:port it listens on.
	Addr string

	mu       sync.Mutex
	series   map[string][]*monitoringpb.TimeSeries
	err      error
	requests []*monitoringpb.ListTimeSeriesRequest
	pageSize int
	srv      *grpc.Server
}

// Start serves on a new loopback listener until Stop.
func Start() (*Server, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: lis.Addr().String(), series: map[string][]*monitoringpb.TimeSeries{}, pageSize: 2}
	s.srv = grpc.NewServer()
	monitoringpb.RegisterMetricServiceServer(s.srv, s)
	go func() { _ = s.srv.Serve(lis) }()
	return s, nil
}

// Stop ends the server.
func (s *Server) Stop() { s.srv.Stop() }

// ClientOptions are the options a client needs to reach the fake:
// plaintext, no credentials.
func (s *Server) ClientOptions() []option.ClientOption {
	return []option.ClientOption{
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		option.WithoutAuthentication(),
	}
}

// Serve records the series answered for metric type metric. It panics on
// a metric, label, resource or unit Google does not document for it: a
// test must not pass against series the real service cannot send.
func (s *Server) Serve(metric string, series ...*monitoringpb.TimeSeries) {
	if err := Documented(metric, series...); err != nil {
		panic(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.series[metric] = series
}

// Fail makes every request fail with code c.
func (s *Server) Fail(c codes.Code, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = status.Error(c, msg)
}

// Requests are the requests received, in order.
func (s *Server) Requests() []*monitoringpb.ListTimeSeriesRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*monitoringpb.ListTimeSeriesRequest, len(s.requests))
	for i, r := range s.requests {
		out[i] = proto.Clone(r).(*monitoringpb.ListTimeSeriesRequest)
	}
	return out
}

var metricType = regexp.MustCompile(`metric\.type = "([^"]+)"`)

// ListTimeSeries answers the series recorded for the filter's metric
// type, a few a page, so a client must follow page tokens as it must with
// the real service.
func (s *Server) ListTimeSeries(_ context.Context, req *monitoringpb.ListTimeSeriesRequest) (*monitoringpb.ListTimeSeriesResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.GetPageToken() == "" {
		s.requests = append(s.requests, proto.Clone(req).(*monitoringpb.ListTimeSeriesRequest))
	}
	if s.err != nil {
		return nil, s.err
	}
	m := metricType.FindStringSubmatch(req.GetFilter())
	if m == nil {
		return nil, status.Error(codes.InvalidArgument, "the filter names no metric.type")
	}
	all := s.series[m[1]]
	from := 0
	if req.GetPageToken() != "" {
		n, err := strconv.Atoi(req.GetPageToken())
		if err != nil || n < 0 || n > len(all) {
			return nil, status.Error(codes.InvalidArgument, "bad page token")
		}
		from = n
	}
	to := min(from+s.pageSize, len(all))
	resp := &monitoringpb.ListTimeSeriesResponse{TimeSeries: all[from:to]}
	if to < len(all) {
		resp.NextPageToken = strconv.Itoa(to)
	}
	return resp, nil
}

// Documented says which of series is not what the real service can send
// for metric: an undocumented metric, metric label or resource label, or
// another resource type or unit than documented.
func Documented(metric string, series ...*monitoringpb.TimeSeries) error {
	m, ok := monitoring.DocumentedMetric(metric)
	if !ok {
		return fmt.Errorf("metric %s is not one the collector's table documents", metric)
	}
	for i, ts := range series {
		for l := range ts.GetMetric().GetLabels() {
			if !m.HasLabel(l) {
				return fmt.Errorf("series %d of %s has metric label %q; %s documents %q", i, metric, l, m.Source, m.Labels)
			}
		}
		if r := ts.GetResource(); r.GetType() != m.Resource.Type {
			return fmt.Errorf("series %d of %s is of resource %q, documented as %q", i, metric, r.GetType(), m.Resource.Type)
		}
		for l := range ts.GetResource().GetLabels() {
			if !m.Resource.HasLabel(l) {
				return fmt.Errorf("series %d of %s has resource label %q; %s has %q", i, metric, l, m.Resource.Source, m.Resource.Labels)
			}
		}
		if ts.GetUnit() != m.Unit {
			return fmt.Errorf("series %d of %s is in %q, documented in %q", i, metric, ts.GetUnit(), m.Unit)
		}
	}
	return nil
}

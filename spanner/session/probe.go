package session

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/spanner/admin/instance/apiv1/instancepb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/target"
)

// ProbeTimeout bounds the first call to a target: the clients retry an
// unreachable endpoint until their context ends, which without a bound
// looks like a hang.
const ProbeTimeout = 15 * time.Second

// Probe checks that the target's endpoint answers at all, so an
// unreachable emulator or network fails fast with a clear message. Any
// answer, even PermissionDenied, proves the endpoint is there. ep is where
// the target is.
func Probe(ctx context.Context, ep endpoint.Endpoint, t v1alpha1.TargetSpec) error {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	ia, da, err := target.AdminClients(ctx, ep)
	if err != nil {
		return err
	}
	defer ia.Close()
	defer da.Close()
	_, err = ia.GetInstance(ctx, &instancepb.GetInstanceRequest{Name: fmt.Sprintf("projects/%s/instances/%s", t.Project, t.Instance.Name)})
	// The clients retry Unavailable until the context ends and then return
	// the context's error, which carries no gRPC code.
	switch code := status.Code(err); {
	case ctx.Err() != nil, code == codes.Unavailable, code == codes.DeadlineExceeded:
		return fmt.Errorf("cannot reach %s within %s: %w", ep, ProbeTimeout, err)
	}
	return nil
}

package session

import (
	"context"
	"errors"
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

// ErrNoAnswer is in Probe's error when the endpoint does not answer as
// Cloud Spanner or the emulator does: nothing listens, nothing answers in
// time, or (for an emulator) something else answers, such as an HTTP
// server's 404.
var ErrNoAnswer = errors.New("does not answer")

// ErrNoClients is in Probe's error when no client could be opened, before
// anything was sent: for Cloud Spanner, usually missing credentials.
var ErrNoClients = errors.New("cannot open clients")

// Probe checks that the target's endpoint answers, so an unreachable
// emulator or network fails fast with a clear message. From Cloud Spanner
// any answer, even PermissionDenied, proves the endpoint is there. An
// emulator answers GetInstance with the instance or NotFound; any other
// answer (Unimplemented is what gRPC makes of an HTTP 404) comes from
// something else at that address. ep is where the target is.
func Probe(ctx context.Context, ep endpoint.Endpoint, t v1alpha1.TargetSpec) error {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	ia, da, err := target.AdminClients(ctx, ep)
	if err != nil {
		return fmt.Errorf("%w for %s: %w", ErrNoClients, ep, err)
	}
	defer ia.Close()
	defer da.Close()
	_, err = ia.GetInstance(ctx, &instancepb.GetInstanceRequest{Name: fmt.Sprintf("projects/%s/instances/%s", t.Project, t.Instance.Name)})
	// The clients retry Unavailable until the context ends and then return
	// the context's error, which carries no gRPC code.
	switch code := status.Code(err); {
	case ctx.Err() != nil, code == codes.Unavailable, code == codes.DeadlineExceeded:
		return fmt.Errorf("%s %w within %s: %w", ep, ErrNoAnswer, ProbeTimeout, err)
	case ep.IsEmulator() && code != codes.OK && code != codes.NotFound:
		return fmt.Errorf("%s %w as an emulator does (GetInstance: %s): %w", ep, ErrNoAnswer, code, err)
	}
	return nil
}

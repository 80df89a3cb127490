package benchmarkrun

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/spanner/dataset"
	"github.com/spanbench/spanbench/spanner/target"
)

// TestClassifyGivesEveryTargetErrorAReasonAUserCanActOn covers the errors
// of a real project, most of which the emulator cannot produce.
func TestClassifyGivesEveryTargetErrorAReasonAUserCanActOn(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("creating instance projects/p/instances/i: %w", err) }
	for _, tc := range []struct {
		err    error
		reason string
		retry  bool
	}{
		{wrap(status.Error(codes.PermissionDenied, "Permission 'spanner.instances.create' denied")), v1alpha1.ReasonPermissionDenied, false},
		{status.Error(codes.Unauthenticated, "no credentials"), v1alpha1.ReasonPermissionDenied, false},
		{wrap(status.Error(codes.ResourceExhausted, "Quota exceeded for quota metric 'Nodes'")), v1alpha1.ReasonQuotaExceeded, false},
		{fmt.Errorf("%w: asia9", target.ErrConfigNotFound), v1alpha1.ReasonInstanceConfigNotFound, false},
		{fmt.Errorf("%w: instance i", target.ErrNotOwned), v1alpha1.ReasonInstanceNotOwned, false},
		{fmt.Errorf("%w: 300 rows", dataset.ErrMismatch), v1alpha1.ReasonDatasetMismatch, false},
		// target marks the schema change's FailedPrecondition and Aborted
		// as busy; the type decides, not the message.
		{wrap(fmt.Errorf("%w: %w", target.ErrDatabaseBusy, status.Error(codes.FailedPrecondition, "Schema change operation rejected because a concurrent schema change operation or read-write transaction is already in progress."))), v1alpha1.ReasonDatabaseBusy, true},
		{fmt.Errorf("%w: database d is still being created or restored", target.ErrDatabaseBusy), v1alpha1.ReasonDatabaseBusy, true},
		{fmt.Errorf("%w: %w", target.ErrDatabaseBusy, status.Error(codes.Aborted, "aborted")), v1alpha1.ReasonDatabaseBusy, true},
		{status.Error(codes.Aborted, "aborted"), v1alpha1.ReasonTargetUnreachable, true},
		{wrap(fmt.Errorf("%w: database d is PostgreSQL, the spec asks for GoogleSQL", target.ErrDialectMismatch)), v1alpha1.ReasonDialectMismatch, false},
		{status.Error(codes.FailedPrecondition, "Cannot drop table with indexes"), v1alpha1.ReasonTargetUnreachable, false},
		{fmt.Errorf("%w: instance i", target.ErrInstanceNotFound), v1alpha1.ReasonTargetUnreachable, false},
		{status.Error(codes.NotFound, "Database not found"), v1alpha1.ReasonTargetUnreachable, false},
		{status.Error(codes.Unavailable, "connection refused"), v1alpha1.ReasonTargetUnreachable, true},
	} {
		reason, retry := classify(tc.err)
		if reason != tc.reason || retry != tc.retry {
			t.Errorf("classify(%q) = %s, retry %v; want %s, retry %v", tc.err, reason, retry, tc.reason, tc.retry)
		}
	}
}

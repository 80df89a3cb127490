package engine

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/spanbench/spanbench/result/operation"
)

// TestARolledBackOperationCountsAsOKAndARollback: TPC-C's deliberate
// New-Order rollback is a completed transaction, counted in ok and apart
// in rollbacks; a failed one is not.
func TestARolledBackOperationCountsAsOKAndARollback(t *testing.T) {
	r := newOpRecorder("new-order")
	r.record(0, 0, codes.OK, time.Millisecond, time.Millisecond, operation.Outcome{Rows: 5})
	r.record(1, 0, codes.OK, time.Millisecond, time.Millisecond, operation.Outcome{RolledBack: true})
	r.record(1, 0, codes.Aborted, time.Millisecond, time.Millisecond, operation.Outcome{RolledBack: true})
	in, err := r.drain(0)
	if err != nil {
		t.Fatal(err)
	}
	if in.OK != 2 || in.Rollbacks != 1 || in.ErrorCount() != 1 {
		t.Errorf("counts %+v: want ok 2, rollbacks 1, one error", in.Counts)
	}
}

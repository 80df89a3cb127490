// Package slowddlfake makes the emulator's database operations as slow as
// Cloud Spanner's: a fake around the real database admin API (named so,
// since it lies about the operations' state). The emulator finishes a
// CreateDatabase or UpdateDatabaseDdl within the call; Cloud Spanner takes
// tens of seconds, minutes with indexes. A Hold wraps the admins a test
// opens: the operations they start are really carried out by the
// emulator, but reported running (and their database CREATING) until the
// test releases them. A test helper: never linked into the binary.
package slowddlfake

import (
	"context"
	"strings"
	"sync"

	"cloud.google.com/go/longrunning/autogen/longrunningpb"
	"cloud.google.com/go/spanner/admin/database/apiv1/databasepb"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/spanbench/spanbench/spanner/target"
)

// Hold is the state the admins it wraps share: the operations they
// started, and whether those are released yet.
type Hold struct {
	databases map[string]bool
	started   chan string

	mu       sync.Mutex
	held     map[string]string // operation name -> database ID
	creating map[string]bool   // database resource names being "created"
	released bool
	applied  int
	failure  error
}

// NewHold holds the operations on the databases named by ID, or on every
// database when none is named.
func NewHold(databases ...string) *Hold {
	h := &Hold{started: make(chan string, 64), held: map[string]string{}, creating: map[string]bool{}}
	if len(databases) > 0 {
		h.databases = map[string]bool{}
		for _, d := range databases {
			h.databases[d] = true
		}
	}
	return h
}

// Started receives the database ID of every operation a held admin
// starts (as long as its buffer has room).
func (h *Hold) Started() <-chan string { return h.started }

// Release lets the held operations be seen as done.
func (h *Hold) Release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.released = true
}

// Applied sets how many statements a held schema change reports applied.
func (h *Hold) Applied(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.applied = n
}

// FailWith makes the held operations end with err (a gRPC status error)
// once released, as an operation Cloud Spanner accepted can fail late.
func (h *Hold) FailWith(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failure = err
}

// Wrap is real with the operations it starts held.
func (h *Hold) Wrap(real target.DatabaseAdmin) target.DatabaseAdmin {
	return admin{DatabaseAdmin: real, h: h}
}

// admin is the fake.
type admin struct {
	target.DatabaseAdmin
	h *Hold
}

func (a admin) StartCreateDatabase(ctx context.Context, req *databasepb.CreateDatabaseRequest) (string, error) {
	op, err := a.DatabaseAdmin.StartCreateDatabase(ctx, req)
	if err == nil && a.h.hold(op) {
		a.h.mu.Lock()
		a.h.creating[databaseOf(op)] = true
		a.h.mu.Unlock()
	}
	return op, err
}

func (a admin) StartUpdateDatabaseDdl(ctx context.Context, req *databasepb.UpdateDatabaseDdlRequest) (string, error) {
	op, err := a.DatabaseAdmin.StartUpdateDatabaseDdl(ctx, req)
	if err == nil {
		a.h.hold(op)
	}
	return op, err
}

func (a admin) GetDatabase(ctx context.Context, name string) (*databasepb.Database, error) {
	db, err := a.DatabaseAdmin.GetDatabase(ctx, name)
	a.h.mu.Lock()
	defer a.h.mu.Unlock()
	if err == nil && a.h.creating[name] && !a.h.released {
		db = proto.Clone(db).(*databasepb.Database)
		db.State = databasepb.Database_CREATING
	}
	return db, err
}

func (a admin) GetOperation(ctx context.Context, name string) (*longrunningpb.Operation, error) {
	op, err := a.DatabaseAdmin.GetOperation(ctx, name)
	a.h.mu.Lock()
	defer a.h.mu.Unlock()
	if _, held := a.h.held[name]; err != nil || !held {
		return op, err
	}
	op = proto.Clone(op).(*longrunningpb.Operation)
	switch {
	case !a.h.released:
		op.Done, op.Result = false, nil
		op.Metadata = trimmed(op.GetMetadata(), a.h.applied)
	case a.h.failure != nil:
		op.Result = &longrunningpb.Operation_Error{Error: status.Convert(a.h.failure).Proto()}
	}
	return op, nil
}

// hold records operation, if its database is held, and says so.
func (h *Hold) hold(operation string) bool {
	id := databaseOf(operation)
	id = id[strings.LastIndexByte(id, '/')+1:]
	if h.databases != nil && !h.databases[id] {
		return false
	}
	h.mu.Lock()
	h.held[operation] = id
	h.mu.Unlock()
	select {
	case h.started <- id:
	default:
	}
	return true
}

// databaseOf is the database resource name of an operation's name.
func databaseOf(operation string) string {
	if i := strings.Index(operation, "/operations/"); i >= 0 {
		return operation[:i]
	}
	return operation
}

// trimmed is a schema change's metadata with only applied statements
// committed.
func trimmed(md *anypb.Any, applied int) *anypb.Any {
	var u databasepb.UpdateDatabaseDdlMetadata
	if md.UnmarshalTo(&u) != nil {
		return md
	}
	u.CommitTimestamps = u.CommitTimestamps[:min(applied, len(u.CommitTimestamps))]
	out, err := anypb.New(&u)
	if err != nil {
		return md
	}
	return out
}

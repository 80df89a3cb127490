package target

import (
	"context"
	"errors"
	"fmt"

	"cloud.google.com/go/spanner/admin/database/apiv1/databasepb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

// MaxSplitPointsPerCall bounds the keys of one AddSplitPoints request;
// more are sent in several.
const MaxSplitPointsPerCall = 100

// ErrSplitPointsUnsupported says the endpoint does not implement
// AddSplitPoints (the emulator): the database is not pre-split.
var ErrSplitPointsUnsupported = errors.New("AddSplitPoints is not implemented by this endpoint")

// SplitPointAdder is the database admin call that pre-splits a table;
// *database.DatabaseAdminClient is one.
type SplitPointAdder interface {
	AddSplitPoints(ctx context.Context, req *databasepb.AddSplitPointsRequest, opts ...gax.CallOption) (*databasepb.AddSplitPointsResponse, error)
}

// EvenSplitKeys returns n split keys that cut the built-in workloads' key
// space into n+1 equal ranges. Every preloaded and inserted key of both
// built-in workloads (YCSB's usertable.id, Tweet.Id) begins with 8
// hexadecimal digits of a hash, spread uniformly, so evenly spaced 8-digit
// prefixes split the rows, and the load, evenly.
func EvenSplitKeys(n int) []string {
	keys := make([]string, 0, max(n, 0))
	for i := 1; i <= n; i++ {
		keys = append(keys, fmt.Sprintf("%08x", uint32(uint64(i)*(1<<32)/uint64(n+1))))
	}
	return keys
}

// AddSplitPoints pre-splits table, whose primary key is one STRING column,
// at keys, in requests of at most MaxSplitPointsPerCall keys. Spanner keeps
// split points for 10 days unless traffic decides otherwise. An endpoint
// without the API returns ErrSplitPointsUnsupported.
func AddSplitPoints(ctx context.Context, admin SplitPointAdder, project, instance, db, table string, keys []string) error {
	name := "projects/" + project + "/instances/" + instance + "/databases/" + db
	for lo := 0; lo < len(keys); lo += MaxSplitPointsPerCall {
		batch := keys[lo:min(lo+MaxSplitPointsPerCall, len(keys))]
		sp := &databasepb.SplitPoints{Table: table}
		for _, k := range batch {
			sp.Keys = append(sp.Keys, &databasepb.SplitPoints_Key{KeyParts: &structpb.ListValue{Values: []*structpb.Value{structpb.NewStringValue(k)}}})
		}
		_, err := admin.AddSplitPoints(ctx, &databasepb.AddSplitPointsRequest{Database: name, SplitPoints: []*databasepb.SplitPoints{sp}, Initiator: "spanbench"})
		if status.Code(err) == codes.Unimplemented {
			return fmt.Errorf("%w: %w", ErrSplitPointsUnsupported, err)
		}
		if err != nil {
			return fmt.Errorf("adding split points to %s of %s: %w", table, name, err)
		}
	}
	return nil
}

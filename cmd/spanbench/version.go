package main

import (
	"context"
	"fmt"
	"io"
	"runtime"

	"github.com/spanbench/spanbench/spanner/session"
)

func versionCommand(_ context.Context, _ []string, stdout, _ io.Writer) error {
	_, err := fmt.Fprintf(stdout, "spanbench %s (Cloud Spanner Go client %s, %s)\n", session.Version, session.ClientVersion(), runtime.Version())
	return err
}

//go:build !runner

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"

	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/spanbench/spanbench/cmd/spanbench/manifest"
	"github.com/spanbench/spanbench/spanner/endpoint"
	"github.com/spanbench/spanbench/spanner/preflight"
)

// standInEnv names a loopback stand-in of Google's admin APIs
// (internal/gcpadminfake) for the CLI's tests. It is not in --help, and a
// non-loopback address is refused, so it can never point a user's
// preflight at another host; the report says STAND-IN when it is used.
const standInEnv = "SPANBENCH_TEST_ADMIN_STANDIN"

func preflightCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return preflightWith(ctx, args, stdout, stderr, os.Getenv)
}

// preflightFlags are the command's flags.
type preflightFlags struct {
	file, keyFile              string
	nodeQuota                  int
	serverStats, serverMetrics bool
}

func parsePreflightFlags(args []string, stderr io.Writer) (*preflightFlags, error) {
	var f preflightFlags
	fs := flag.NewFlagSet("spanbench preflight", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.file, "f", "", "a BenchmarkRun manifest (required)")
	fs.StringVar(&f.keyFile, "credentials", "", "a service-account key file to check with (default: Application Default Credentials)")
	fs.IntVar(&f.nodeQuota, "node-quota", 0, "the project's node limit for the instance configuration, to check an Ephemeral instance fits (0: not checked)")
	fs.BoolVar(&f.serverStats, "server-stats", true, "the manager reads SPANNER_SYS statistics after the run (check their permissions)")
	fs.BoolVar(&f.serverMetrics, "server-metrics", true, "the manager reads Cloud Monitoring after the run (check monitoring.timeSeries.list)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.file == "" || fs.NArg() > 0 {
		return nil, errors.New("usage: spanbench preflight -f MANIFEST [--credentials KEY] [--node-quota N]")
	}
	if f.nodeQuota < 0 || f.nodeQuota > maxPreflightNodeQuota {
		return nil, fmt.Errorf("--node-quota %d: must be 0 to %d", f.nodeQuota, maxPreflightNodeQuota)
	}
	return &f, nil
}

// preflightWith is the command with the process environment as a value.
func preflightWith(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	f, err := parsePreflightFlags(args, stderr)
	if err != nil {
		return err
	}
	file, keyFile, nodeQuota, serverStats, serverMetrics := &f.file, &f.keyFile, &f.nodeQuota, &f.serverStats, &f.serverMetrics
	run, err := manifest.ReadFile(*file)
	if err != nil {
		return err
	}
	if run.Target == nil {
		return fmt.Errorf("%s: a BenchmarkRun manifest with spec.target is needed", *file)
	}
	t := *run.Target
	opts := []preflight.Option{preflight.NodeQuota(int32(*nodeQuota))}
	standIn := getenv(standInEnv)
	cloud := endpoint.Cloud("")
	switch {
	case standIn != "":
		if err := loopback(standIn); err != nil {
			return fmt.Errorf("%s: %w", standInEnv, err)
		}
		plain := []option.ClientOption{option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())), option.WithoutAuthentication()}
		cloud = endpoint.Cloud(standIn, plain...)
		opts = append(opts, preflight.ResourceManager(standIn, plain...))
		fmt.Fprintf(stdout, "STAND-IN: Google's admin APIs are answered by a test stand-in at %s, not by Google Cloud\n", standIn)
	case t.EmulatorHost == "":
		if err := endpoint.RefuseInherited(getenv); err != nil {
			return err
		}
		if *keyFile != "" {
			// The clients authenticate with the key that is checked.
			key := option.WithAuthCredentialsFile(option.ServiceAccount, *keyFile)
			cloud = endpoint.Cloud("", key)
			opts = append(opts, preflight.ResourceManager("", key))
		}
	}
	opts = append(opts, preflight.Spanner(endpoint.For(t, cloud)))
	if t.EmulatorHost == "" {
		creds, err := preflightCredentials(*keyFile, standIn != "")
		if err != nil {
			return err
		}
		opts = append(opts, preflight.WithCredentials(creds))
	}
	report := preflight.Check(ctx, preflight.TargetOf(t, *serverStats, *serverMetrics), opts...)
	if err := report.WriteText(stdout); err != nil {
		return err
	}
	if !report.OK() {
		return &exitError{code: 1, err: fmt.Errorf("%d permission(s) missing or a check failed", len(report.Missing()))}
	}
	return nil
}

// preflightCredentials reads the key file, or finds Application Default
// Credentials; against a stand-in, only a key file (a stand-in has no
// metadata server, and nothing here asks the real one).
func preflightCredentials(keyFile string, standIn bool) (preflight.Credentials, error) {
	if keyFile != "" {
		js, err := os.ReadFile(keyFile) //nolint:gosec // the user names the key file to check
		if err != nil {
			return preflight.Credentials{}, fmt.Errorf("--credentials: %w", err)
		}
		return preflight.Credentials{JSON: js, Source: keyFile}, nil
	}
	if standIn {
		return preflight.Credentials{}, nil
	}
	c, err := preflight.DetectCredentials()
	if err != nil {
		return preflight.Credentials{}, nil //nolint:nilerr // "none found" is the credentials check's finding, reported as such
	}
	return c, nil
}

// loopback refuses an address that is not on this machine.
func loopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%s is not a loopback address: the stand-in hook serves tests on this machine only", addr)
	}
	return nil
}

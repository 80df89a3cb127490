package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
)

// Environment the runner Job gives every pod.
const (
	envNamespace = "POD_NAMESPACE"
	envIndex     = "JOB_COMPLETION_INDEX"
	// namespaceFile is the pod's namespace, mounted with its service
	// account token; the fallback when POD_NAMESPACE is not set.
	namespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
)

// runnerAPITimeout bounds each call to the API server.
const runnerAPITimeout = 30 * time.Second

// runnerFlags are `spanbench runner`'s flags.
type runnerFlags struct {
	run, namespace, index, metricsAddr string
	resultsBucket, runUID              string
	readyTimeout                       time.Duration
	load                               bool
	zap                                crzap.Options
}

func parseRunnerFlags(args []string, stderr io.Writer) (*runnerFlags, error) {
	f := &runnerFlags{}
	fs := flag.NewFlagSet("runner", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.run, "run", "", "the BenchmarkRun's name; required")
	fs.StringVar(&f.namespace, "namespace", "", "the run's namespace (default: $"+envNamespace+", else the pod's namespace)")
	fs.StringVar(&f.index, "index", "", "this pod's shard (or loader) index (default: $"+envIndex+")")
	fs.BoolVar(&f.load, "load", false, "be a loader pod: load this index's slice of the dataset, then exit")
	fs.StringVar(&f.metricsAddr, "metrics-addr", ":9090", "serve live Prometheus metrics on this address; empty to disable")
	fs.DurationVar(&f.readyTimeout, "ready-timeout", pod.DefaultReadyTimeout, "how long to wait for the start time after reporting ready")
	fs.StringVar(&f.resultsBucket, "results-bucket", "", "store the shard's result in this results bucket, gs://BUCKET[/PREFIX] or file:///DIR (the manager's --results-bucket; default: in ConfigMaps)")
	fs.StringVar(&f.runUID, "run-uid", "", "the BenchmarkRun's UID, which the result's object key names; required with --results-bucket")
	config.RegisterFlags(fs) // --kubeconfig; in a pod the in-cluster config is used
	f.zap.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.run == "" || fs.NArg() > 0 {
		fs.Usage()
		return nil, errors.New("usage: spanbench runner --run NAME [flags]")
	}
	if f.resultsBucket != "" && f.runUID == "" {
		return nil, errors.New("--results-bucket needs --run-uid")
	}
	return f, nil
}

// runnerCommand is a runner pod's main, pod.Run, or with --load a loader
// pod's, pod.Load; both with a client of the pod's service account.
func runnerCommand(ctx context.Context, args []string, _, stderr io.Writer) error {
	f, err := parseRunnerFlags(args, stderr)
	if err != nil {
		return err
	}
	log := crzap.New(crzap.UseFlagOptions(&f.zap), crzap.JSONEncoder(), crzap.WriteTo(stderr))
	crlog.SetLogger(log)
	opts, err := runnerOptions(f)
	if err != nil {
		return err
	}
	opts.Log = log
	cfg, err := config.GetConfig()
	if err != nil {
		return fmt.Errorf("no Kubernetes API access (in-cluster or --kubeconfig): %w", err)
	}
	cfg.Timeout = runnerAPITimeout
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	if f.resultsBucket != "" && !f.load {
		b, err := bucket.Open(ctx, f.resultsBucket)
		if err != nil {
			return err
		}
		defer func() { _ = b.Close() }()
		// The runner writes only under its run's prefix: a key outside it
		// is refused before anything reaches the store.
		if opts.Results, err = b.Scope(bucket.RunPrefix(opts.Namespace, opts.Run, f.runUID)); err != nil {
			return err
		}
		opts.RunUID = f.runUID
	}
	if f.load {
		if err := pod.Load(ctx, c, opts); err != nil {
			return err
		}
		log.Info("loader finished", "run", opts.Run, "loader", opts.Index)
		return nil
	}
	if err := pod.Run(ctx, c, opts); err != nil {
		return err
	}
	log.Info("runner finished", "run", opts.Run, "shard", opts.Index)
	return nil
}

// runnerOptions resolves the flags and the pod's environment.
func runnerOptions(f *runnerFlags) (pod.Options, error) {
	ns, err := runnerNamespace(f.namespace)
	if err != nil {
		return pod.Options{}, err
	}
	index := f.index
	if index == "" {
		index = os.Getenv(envIndex)
	}
	i, err := strconv.Atoi(index)
	if err != nil || i < 0 {
		return pod.Options{}, fmt.Errorf("shard index %q: want --index or $%s, a number from 0", index, envIndex)
	}
	return pod.Options{Namespace: ns, Run: f.run, Index: i, MetricsAddr: f.metricsAddr, ReadyTimeout: f.readyTimeout}, nil
}

func runnerNamespace(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if ns := os.Getenv(envNamespace); ns != "" {
		return ns, nil
	}
	if b, err := os.ReadFile(namespaceFile); err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	return "", fmt.Errorf("no namespace: want --namespace or $%s", envNamespace)
}

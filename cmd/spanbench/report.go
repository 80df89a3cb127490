package main

import (
	"context"
	"errors"
	"flag"
	"io"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/spanbench/spanbench/controllers"
	"github.com/spanbench/spanbench/load/result"
)

func reportCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "also write the (merged) result to this JSON file")
	run := fs.String("run", "", "read the merged result of this BenchmarkRun from the cluster instead of files")
	namespace := fs.String("n", "default", "the BenchmarkRun's namespace (with --run)")
	config.RegisterFlags(fs) // --kubeconfig
	fs.Usage = func() {
		io.WriteString(stderr, "usage: spanbench report [--out merged.json] result.json [more.json...]\n"+
			"       spanbench report --run NAME [-n NAMESPACE] [--kubeconfig FILE] [--out result.json]\n\n"+
			"Prints a result. Given several shard results of one run, merges their\n"+
			"histograms exactly (percentiles are never averaged) and prints the merge.\n"+
			"With --run, reads a finished run's report from the cluster.\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	var doc *result.Document
	var err error
	switch {
	case *run != "" && fs.NArg() == 0:
		doc, err = clusterReport(ctx, *namespace, *run)
	case *run == "" && fs.NArg() > 0:
		doc, err = mergeFiles(fs.Args())
	default:
		fs.Usage()
		return errors.New("give result files or --run, not both")
	}
	if err != nil {
		return err
	}
	if *out != "" {
		if err := result.WriteFile(*out, doc); err != nil {
			return err
		}
	}
	return result.WriteTable(stdout, doc)
}

func mergeFiles(paths []string) (*result.Document, error) {
	docs := make([]*result.Document, 0, len(paths))
	for _, path := range paths {
		d, err := result.ReadFile(path)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
	return result.Merge(docs...)
}

// clusterReport reads a finished run's report from the cluster.
func clusterReport(ctx context.Context, namespace, name string) (*result.Document, error) {
	cfg, err := config.GetConfig()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, err
	}
	return controllers.ReadReport(ctx, c, client.ObjectKey{Namespace: namespace, Name: name})
}

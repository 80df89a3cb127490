//go:build !runner

package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/cmd/spanbench/report"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/result"
	"github.com/spanbench/spanbench/runner/pod"
	"github.com/spanbench/spanbench/runner/protocol"
	"github.com/spanbench/spanbench/runner/protocol/bucket"
	"github.com/spanbench/spanbench/runner/shardrun"
)

func reportCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "also write the (merged) result to this JSON file")
	htmlOut := fs.String("html", "", "also write a self-contained HTML report (tables and plots) to this file")
	overlay := fs.Bool("overlay", false, "show result files as separate runs, overlaid in the HTML report's percentile plots, instead of merging them")
	run := fs.String("run", "", "read the merged result of this BenchmarkRun from the cluster instead of files")
	namespace := fs.String("n", "default", "the BenchmarkRun's or BenchmarkCampaign's namespace (with --run or --campaign)")
	campaign := fs.String("campaign", "", "report this BenchmarkCampaign's latest comparison, from the cluster")
	comparisonFile := fs.String("comparison", "", "report the comparison in this file: a BenchmarkCampaign (kubectl get -o yaml) or its status.comparison, JSON or YAML")
	resultsBucket := fs.String("results-bucket", "", "with --run: the manager's --results-bucket, for a report stored there (gs:// with your own credentials, or file:///DIR)")
	config.RegisterFlags(fs) // --kubeconfig
	fs.Usage = func() {
		io.WriteString(stderr, "usage: spanbench report [--out merged.json] [--html report.html] result.json [more.json...]\n"+
			"       spanbench report --overlay [--html report.html] result.json more.json...\n"+
			"       spanbench report --run NAME [-n NAMESPACE] [--kubeconfig FILE] [--results-bucket URL] [--out result.json] [--html report.html]\n"+
			"       spanbench report --campaign NAME [-n NAMESPACE] [--kubeconfig FILE] [--html report.html]\n"+
			"       spanbench report --comparison campaign.yaml [--html report.html]\n\n"+
			"Prints a result. Given several shard results of one run, merges their\n"+
			"histograms exactly (percentiles are never averaged) and prints the merge;\n"+
			"with --overlay, prints each file as its own run and, with --html, overlays\n"+
			"them in the percentile plots. With --run, reads a finished run's report\n"+
			"from the cluster. With --campaign or --comparison, prints a campaign's latest\n"+
			"comparison and, with --html, draws its ratios with their intervals.\n"+
			"--html writes one self-contained page (docs/report.md).\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *campaign != "" || *comparisonFile != "" {
		return reportComparison(ctx, stdout, *campaign, *comparisonFile, *namespace, *htmlOut, *run != "" || *out != "" || *overlay || fs.NArg() > 0)
	}
	if *overlay {
		return reportOverlay(fs, stdout, *htmlOut, *run != "" || *out != "")
	}
	return reportMerged(ctx, fs, stdout, clusterRun{namespace: *namespace, name: *run, bucket: *resultsBucket}, *out, *htmlOut)
}

// clusterRun names a run whose report spanbench report reads from the
// cluster, and the results bucket its report may be in.
type clusterRun struct{ namespace, name, bucket string }

// reportMerged reports one run: a finished run from the cluster, or the
// merge of result files.
func reportMerged(ctx context.Context, fs *flag.FlagSet, stdout io.Writer, run clusterRun, out, htmlOut string) error {
	var doc *result.Document
	var err error
	switch {
	case run.name != "" && fs.NArg() == 0:
		doc, err = clusterReport(ctx, run)
		err = clusterGuidance(err, "BenchmarkRun "+run.namespace+"/"+run.name)
	case run.name == "" && fs.NArg() > 0:
		doc, err = mergeFiles(fs.Args())
	default:
		fs.Usage()
		return errors.New("give result files or --run, not both")
	}
	if err != nil {
		return err
	}
	if out != "" {
		if err := result.WriteFile(out, doc); err != nil {
			return err
		}
	}
	return writeReports(stdout, htmlOut, []report.Run{{Label: doc.Run, Doc: doc}})
}

// reportOverlay shows result files side by side; merging is true when
// --run or --out, which merge, were given too.
func reportOverlay(fs *flag.FlagSet, stdout io.Writer, htmlOut string, merging bool) error {
	if merging || fs.NArg() == 0 {
		fs.Usage()
		return errors.New("--overlay shows result files side by side: give files, without --run or --out (nothing is merged)")
	}
	runs, err := readRuns(fs.Args())
	if err != nil {
		return err
	}
	return writeReports(stdout, htmlOut, runs)
}

// reportComparison reports a campaign's comparison, from the cluster or a
// file; mixed is true when run arguments were given too.
func reportComparison(ctx context.Context, stdout io.Writer, campaign, file, namespace, htmlOut string, mixed bool) error {
	if mixed || (campaign != "" && file != "") {
		return errComparisonArgs
	}
	var c report.Comparison
	var err error
	if campaign != "" {
		c, err = clusterComparison(ctx, namespace, campaign)
		err = clusterGuidance(err, "BenchmarkCampaign "+namespace+"/"+campaign)
	} else {
		c, err = fileComparison(file)
	}
	if err != nil {
		return err
	}
	return writeComparison(stdout, htmlOut, c)
}

// mergeFiles reads and merges result files one at a time, so only one
// file's document is held besides the merged intervals. Files are
// untrusted: each is checked against the run the first one describes
// (protocol.FileExpectation), as the controller checks shard results, and
// every figure is derived again from the intervals.
func mergeFiles(paths []string) (*result.Document, error) {
	var m *result.Merger
	for _, path := range paths {
		d, err := result.ReadFile(path)
		if err != nil {
			return nil, fileGuidance(err, path, "result document")
		}
		if m == nil {
			e, err := protocol.FileExpectation(d)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			e.Arrivals = fileArrivals(d)
			m = result.NewCheckedMerger(e)
		}
		if err := m.Add(d); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return m.Result()
}

// fileArrivals is the open-loop schedule of the run d's spec records, for
// the check that no interval counts more than it produced. A file does not
// say its shards' seeds: Poisson arrivals are then not bounded
// (shardrun.Arrivals).
func fileArrivals(d *result.Document) result.Arrivals {
	var w v1alpha1.WorkloadSpec
	if err := json.Unmarshal(d.Spec.Raw(), &w); err != nil {
		return nil // FileExpectation decoded it strictly: cannot happen
	}
	w = w.Resolved()
	return shardrun.Arrivals(&w, d.Shards[0].Count, nil)
}

// clusterReport reads a finished run's report from the cluster.
func clusterReport(ctx context.Context, run clusterRun) (*result.Document, error) {
	cfg, err := config.GetConfig()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return nil, err
	}
	var b *bucket.Bucket
	if run.bucket != "" {
		if b, err = bucket.Open(ctx, run.bucket); err != nil {
			return nil, err
		}
		defer func() { _ = b.Close() }()
	}
	return runreport.ReadReportFrom(ctx, c, b, client.ObjectKey{Namespace: run.namespace, Name: run.name}, pod.RunArrivals)
}

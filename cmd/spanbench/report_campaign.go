//go:build !runner

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/yaml"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/cmd/spanbench/report"
)

// maxComparisonFile bounds what --comparison reads: a campaign object is
// far below the API server's 1.5 MiB limit.
const maxComparisonFile = 4 << 20

// clusterComparison reads a campaign's latest comparison from the cluster.
func clusterComparison(ctx context.Context, namespace, name string) (report.Comparison, error) {
	cfg, err := config.GetConfig()
	if err != nil {
		return report.Comparison{}, err
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme()})
	if err != nil {
		return report.Comparison{}, err
	}
	bc := &v1alpha1.BenchmarkCampaign{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, bc); err != nil {
		return report.Comparison{}, err
	}
	return campaignComparison(namespace+"/"+name, bc)
}

func campaignComparison(label string, bc *v1alpha1.BenchmarkCampaign) (report.Comparison, error) {
	if bc.Status.Comparison == nil {
		return report.Comparison{}, fmt.Errorf("campaign %s has no comparison yet: no iteration has completed", label)
	}
	return report.Comparison{Campaign: label, Table: *bc.Status.Comparison}, nil
}

// fileComparison reads a comparison from a file (JSON or YAML): a
// BenchmarkCampaign (`kubectl get benchmarkcampaign NAME -o yaml`), or
// its status.comparison alone.
func fileComparison(path string) (report.Comparison, error) {
	f, err := os.Open(path)
	if err != nil {
		return report.Comparison{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxComparisonFile+1))
	if err != nil {
		return report.Comparison{}, err
	}
	if len(b) > maxComparisonFile {
		return report.Comparison{}, fmt.Errorf("%s: larger than %d bytes, no campaign is", path, maxComparisonFile)
	}
	var probe struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(b, &probe); err != nil {
		return report.Comparison{}, fmt.Errorf("%s: %w", path, err)
	}
	if probe.Kind == "BenchmarkCampaign" {
		bc := &v1alpha1.BenchmarkCampaign{}
		if err := yaml.UnmarshalStrict(b, bc); err != nil {
			return report.Comparison{}, fmt.Errorf("%s: %w", path, err)
		}
		return campaignComparison(bc.Name, bc)
	}
	var table v1alpha1.ComparisonStatus
	if err := yaml.UnmarshalStrict(b, &table); err != nil {
		return report.Comparison{}, fmt.Errorf("%s: neither a BenchmarkCampaign nor a status.comparison: %w", path, err)
	}
	if len(table.Rows) == 0 {
		return report.Comparison{}, fmt.Errorf("%s: the comparison has no rows", path)
	}
	return report.Comparison{Campaign: table.Iteration, Table: table}, nil
}

// writeComparison prints the comparison table and, when htmlPath is set,
// writes its HTML report.
func writeComparison(stdout io.Writer, htmlPath string, c report.Comparison) error {
	if htmlPath != "" {
		var b bytes.Buffer
		if err := report.WriteComparisonHTML(&b, c); err != nil {
			return err
		}
		if err := writeFileWhole(htmlPath, b.Bytes()); err != nil {
			return err
		}
	}
	t := c.Table
	fmt.Fprintf(stdout, "campaign %s: iteration %s, baseline %s, verdict %s\n\n", c.Campaign, t.Iteration, t.Baseline, t.Verdict)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VARIANT\tMETRIC\tBASELINE\tVALUE\tRATIO\tCI\tN\tP\tVERDICT")
	for _, r := range t.Rows {
		ci, p := "-", "-"
		if r.Low != "" {
			ci = fmt.Sprintf("[%s, %s] @%s", r.Low, r.High, r.Confidence)
		}
		if r.PValue != "" {
			p = r.PValue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Variant, r.Metric, r.Baseline, r.Value, r.Ratio, ci, r.N, p, r.Verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if t.OmittedRows > 0 {
		fmt.Fprintf(stdout, "(%d more rows in the iteration's report)\n", t.OmittedRows)
	}
	return nil
}

// errComparisonArgs is the refusal of --campaign and --comparison mixed
// with what reads runs.
var errComparisonArgs = errors.New("--campaign and --comparison report one campaign's comparison: give one of them, without result files, --run, --overlay or --out")

package main

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/spanbench/spanbench/runner/result"
)

func reportCommand(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "also write the (merged) result to this JSON file")
	fs.Usage = func() {
		io.WriteString(stderr, "usage: spanbench report [--out merged.json] result.json [more.json...]\n\n"+
			"Prints a result. Given several shard results of one run, merges their\n"+
			"histograms exactly (percentiles are never averaged) and prints the merge.\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("no result file given")
	}
	docs := make([]*result.Document, 0, fs.NArg())
	for _, path := range fs.Args() {
		d, err := result.ReadFile(path)
		if err != nil {
			return err
		}
		docs = append(docs, d)
	}
	merged, err := result.Merge(docs...)
	if err != nil {
		return err
	}
	if *out != "" {
		if err := result.WriteFile(*out, merged); err != nil {
			return err
		}
	}
	return result.WriteTable(stdout, merged)
}

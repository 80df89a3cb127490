//go:build !runner

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spanbench/spanbench/cmd/spanbench/report"
	"github.com/spanbench/spanbench/result"
)

// readRuns reads result files to show side by side, unmerged (--overlay).
// Each is finalized as a merge would, so its totals agree with its
// intervals' histograms whatever wrote the file. A run is labelled by its
// name; runs that share a name (the same run measured twice, or one run's
// shards) also carry their file's name.
func readRuns(paths []string) ([]report.Run, error) {
	runs := make([]report.Run, 0, len(paths))
	count := map[string]int{}
	for _, path := range paths {
		d, err := mergeFiles([]string{path})
		if err != nil {
			return nil, err
		}
		runs = append(runs, report.Run{Label: d.Run, Doc: d})
		count[d.Run]++
	}
	for i, path := range paths {
		if count[runs[i].Label] > 1 {
			runs[i].Label = fmt.Sprintf("%s (%s)", runs[i].Label, filepath.Base(path))
		}
	}
	return runs, nil
}

// writeReports prints each run's table and, when htmlPath is set, writes
// the HTML report of them all.
func writeReports(stdout io.Writer, htmlPath string, runs []report.Run) error {
	if htmlPath != "" {
		if err := writeHTMLReport(htmlPath, runs); err != nil {
			return err
		}
	}
	for _, r := range runs {
		if err := result.WriteTable(stdout, r.Doc); err != nil {
			return err
		}
	}
	return nil
}

// writeHTMLReport writes the HTML report of runs to path, whole or not at
// all (temporary file, then rename).
func writeHTMLReport(path string, runs []report.Run) error {
	var b bytes.Buffer
	if err := report.WriteHTML(&b, runs...); err != nil {
		return err
	}
	return writeFileWhole(path, b.Bytes())
}

// writeFileWhole writes b to path, whole or not at all (temporary file,
// then rename).
func writeFileWhole(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

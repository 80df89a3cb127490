// Command dashboards writes spanbench's Grafana dashboards (defined in
// internal/dashboards) as JSON files into a directory: `make generate` runs
// it for config/grafana, and `make verify` fails when the committed files
// differ from what it writes.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spanbench/spanbench/internal/dashboards"
)

func main() {
	out := flag.String("out", "config/grafana", "directory to write the dashboards' JSON files into")
	flag.Parse()
	if err := write(*out); err != nil {
		fmt.Fprintln(os.Stderr, "dashboards:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	files, err := dashboards.Generate()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.JSON, 0o644); err != nil {
			return err
		}
	}
	return nil
}

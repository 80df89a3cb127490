package main

import (
	"context"
	"fmt"
	"io"
	"slices"
)

// command is a subcommand.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands are the subcommands, in the order usage lists them: the tools
// of this build (toolCommands: all of them, or none in the runner build)
// around the load roles every build has.
var commands = slices.Concat(
	[]command{{"run", "run a workload or BenchmarkRun manifest against Spanner or a local emulator", runCommand}},
	toolCommands,
	[]command{
		{"runner", "run one shard of a BenchmarkRun (the runner pods' entry point)", runnerCommand},
		{"version", "print the version", versionCommand},
	})

// usage lists the commands, each once, in the table's order.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: spanbench <command> [flags]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
}

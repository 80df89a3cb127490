// Command spanbench benchmarks Cloud Spanner. This binary holds every role:
// the CLI's tools (run, campaign, report, compare), the manager and the
// runner pods' entry point. Its commands are one table, commands in
// commands.go: `spanbench --help` lists it, dispatch reads it.
//
// Built with the tag runner (spanbench-runner, `make build`), it holds
// only run, runner and version: the runner and loader pods run that
// binary, which leaves the manager's webhook, report and campaign code
// out of their memory (docs/performance.md (i)).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signalContext(os.Stderr)
	code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// signalContext is canceled by the first SIGINT or SIGTERM, which every
// command takes as "stop cleanly" (a run ends its load and says it was
// interrupted; a runner pod still reports its failure). From then on the
// two signals have their default effect again: a second one ends at once
// a command that does not stop, instead of being swallowed as every
// signal after the first would be while the context is registered. The
// returned stop also waits until the notice of a signal is written.
func signalContext(stderr io.Writer) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	noticed := make(chan struct{})
	go func() {
		defer close(noticed)
		<-ctx.Done()
		stop()
		// A signal's cause also "is" context.Canceled; stop's is it.
		if cause := context.Cause(ctx); cause != context.Canceled { //nolint:errorlint // see above
			fmt.Fprintf(stderr, "spanbench: %v; stopping (send it again to quit at once)\n", cause)
		}
	}()
	return ctx, func() {
		stop()
		<-noticed
	}
}

// dispatch runs the subcommand named by args[0] and returns the exit code.
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		return 2
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		var exit *exitError
		switch {
		case errors.Is(err, flag.ErrHelp):
			return 2
		case errors.As(err, &exit):
			fmt.Fprintf(stderr, "spanbench %s: %v\n", c.name, exit.err)
			return exit.code
		case err != nil:
			fmt.Fprintf(stderr, "spanbench %s: %v\n", c.name, err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(stderr, "spanbench: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

// exitError ends a command with a specific exit code, for outcomes a
// script must tell apart from a failure (exit 1).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

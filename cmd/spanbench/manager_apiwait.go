//go:build !runner

package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// A starting manager waits for the API server (awaitAPIServer): up to
// apiServerWait, asking every apiServerPoll.
const (
	apiServerWait = 2 * time.Minute
	apiServerPoll = time.Second
)

// awaitAPIServer waits until the API server answers /version, for at most
// within. A manager loses its lease, and exits, when the API server is
// down for longer than the lease's renew deadline (a restart of
// kube-apiserver took 19-29 s on the local cluster); kubelet starts it
// again at once, and a start that fails on the API server still being
// down ends in CrashLoopBackOff, whose growing pauses kept the manager
// away for half a minute after the API server was back (docs/security.md,
// faults). Waiting here turns those crashes into one restart.
func awaitAPIServer(ctx context.Context, cfg *rest.Config, within, every time.Duration, stderr io.Writer) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	said := false
	for {
		callCtx, cancelCall := context.WithTimeout(ctx, every+5*time.Second)
		err = dc.RESTClient().Get().AbsPath("/version").Do(callCtx).Error()
		cancelCall()
		if err == nil {
			if said {
				fmt.Fprintf(stderr, "the API server %s answers again\n", cfg.Host)
			}
			return nil
		}
		if !said {
			fmt.Fprintf(stderr, "waiting up to %s for the API server %s: %v\n", within, cfg.Host, err)
			said = true
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the API server %s did not answer within %s: %w", cfg.Host, within, err)
		case <-time.After(every):
		}
	}
}

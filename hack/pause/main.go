// Command pause is the sandbox ("infra") container of every pod on the local
// cluster (hack/cluster-up.sh). It holds the pod's namespaces open by simply
// staying alive, reaps zombies when it is PID 1 of a shared PID namespace, and
// exits 0 on SIGINT or SIGTERM, like Kubernetes' registry.k8s.io/pause, which
// these machines cannot pull. Build it static: CGO_ENABLED=0 go build.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "-v" || os.Args[1] == "--version") {
		fmt.Println("pause (spanbench hack/pause)")
		return
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range sigs {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		fmt.Fprintf(os.Stderr, "pause: shutting down, got signal %v\n", sig)
		os.Exit(0)
	}
}

// reap collects every exited child so none stays a zombie. Signals coalesce,
// so one SIGCHLD may stand for several exits: loop until none is left.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

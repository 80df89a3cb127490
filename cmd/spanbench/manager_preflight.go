//go:build !runner

package main

import (
	"flag"
	"fmt"
	"sync"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/benchmarkrun"
	"github.com/spanbench/spanbench/spanner/preflight"
)

// managerPreflightFlags say whether the manager runs the preflight of real Cloud
// Spanner access as the first stage of every run, and the node quota it
// checks (--preflight, --preflight-node-quota).
type managerPreflightFlags struct {
	enabled   bool
	nodeQuota int
}

// maxPreflightNodeQuota bounds --preflight-node-quota and `spanbench
// preflight --node-quota`.
const maxPreflightNodeQuota = 1_000_000

func (f *managerPreflightFlags) define(fs *flag.FlagSet) {
	fs.BoolVar(&f.enabled, "preflight", true, "check, as the first stage of each Cloud Spanner run and before anything is created, that the manager's "+
		"credentials hold the IAM permissions the run needs; a run that fails it fails with reason "+v1alpha1.ReasonPreflightFailed+" (docs/install.md)")
	fs.IntVar(&f.nodeQuota, "preflight-node-quota", 0, "the project's node limit per instance configuration, checked by the preflight before an "+
		"Ephemeral instance is created (0: not checked)")
}

func (f *managerPreflightFlags) validate() error {
	if f.nodeQuota < 0 || f.nodeQuota > maxPreflightNodeQuota {
		return fmt.Errorf("--preflight-node-quota %d: must be 0 to %d", f.nodeQuota, maxPreflightNodeQuota)
	}
	return nil
}

// config gives the reconciler the manager's credentials, found at the
// first Cloud Spanner run's preflight and kept: finding them may ask the
// metadata server, which a manager serving only emulator runs (the demo)
// must never contact. None found is not an error here: a Cloud Spanner
// run's preflight then fails saying so.
func (f *managerPreflightFlags) config() benchmarkrun.PreflightConfig {
	if !f.enabled {
		return benchmarkrun.PreflightConfig{}
	}
	creds := sync.OnceValue(func() preflight.Credentials {
		c, err := preflight.DetectCredentials()
		if err != nil {
			ctrl.Log.WithName("preflight").Info("no Google credentials found: Cloud Spanner runs fail their preflight", "error", err.Error())
		}
		return c
	})
	return benchmarkrun.PreflightConfig{Enabled: true, NodeQuota: int32(f.nodeQuota), Credentials: creds}
}

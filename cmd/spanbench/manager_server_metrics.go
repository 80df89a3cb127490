//go:build !runner

package main

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/spanbench/spanbench/controllers/benchmarkrun/serverfigures"
	"github.com/spanbench/spanbench/spanner/monitoring"
)

// serverMetricsFlags say whether and where the manager reads Cloud
// Monitoring after each Cloud Spanner run (--server-metrics,
// --monitoring-endpoint, defined with the others in parseManagerFlags).
type serverMetricsFlags struct {
	enabled  bool
	endpoint string
}

// config opens the Monitoring client. A client that cannot be opened
// (no credentials, as in a local cluster) turns the collection off with
// the reason in each run's condition: it must not stop the manager,
// which serves emulator runs without any Google credentials.
func (f *serverMetricsFlags) config(ctx context.Context) serverfigures.ServerMetricsConfig {
	if !f.enabled {
		return serverfigures.ServerMetricsConfig{Off: "the manager runs with --server-metrics=false"}
	}
	c, err := monitoring.NewClient(ctx, monitoring.Endpoint{Address: f.endpoint})
	if err != nil {
		ctrl.Log.WithName("server-metrics").Info("Cloud Monitoring is not read", "error", err.Error())
		return serverfigures.ServerMetricsConfig{Off: "the manager could not open its Cloud Monitoring client: " + err.Error()}
	}
	return serverfigures.ServerMetricsConfig{Client: c}
}

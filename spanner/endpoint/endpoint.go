// Package endpoint says where a Spanner client connects: the Cloud Spanner
// emulator at a host:port, or Cloud Spanner at its default or an explicit
// endpoint. An Endpoint is a value that travels with every admin and data
// client the manager, the pods and the CLI open; nothing reads or writes
// the process environment, so one process can serve emulator and Cloud
// Spanner targets side by side.
//
// What the Go client (cloud.google.com/go/spanner v1.96.1) does when it
// sees SPANNER_EMULATOR_HOST, and what replaces it here:
//   - the instance and database admin clients' construction hooks, and the
//     data client's constructor, add plaintext, unauthenticated options
//     for the emulator's address: Emulator's ClientOptions are the same;
//   - the data client turns off its native metrics (Cloud Monitoring
//     export) and its dynamic channel pool: NewClient turns off the
//     metrics on the emulator; the pool is off unless asked for;
//   - the data client skips its GCP-environment probe (it asks the metadata
//     server for the region to label metrics with, once per process). No
//     option reaches that probe: an emulator session now makes it once,
//     bounded by the client to a few seconds, and harmlessly.
//
// Against an inherited variable, a Cloud endpoint's explicit address wins
// over the emulator's (it is applied after it), but the client's
// WithoutAuthentication cannot be undone by a later option: a Cloud client
// built under the variable would reach Cloud Spanner with no credentials.
// RefuseInherited turns that into a clear refusal at the edge of the
// process (the manager; the CLI's --spanner).
package endpoint

import (
	"context"
	"fmt"

	"cloud.google.com/go/spanner"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/spanbench/spanbench/api/v1alpha1"
)

// CloudDefault is Cloud Spanner's global endpoint, the one the Go client
// uses when told nothing.
const CloudDefault = "spanner.googleapis.com:443"

// EmulatorHostEnv is the variable the Go client reads to redirect every
// client of the process to an emulator.
const EmulatorHostEnv = "SPANNER_EMULATOR_HOST"

// Endpoint is where Spanner clients connect. The zero value is Cloud
// Spanner at CloudDefault with Application Default Credentials.
type Endpoint struct {
	// emulator is the emulator's host:port; "" is Cloud Spanner.
	emulator string
	// cloud is Cloud Spanner's address; "" is CloudDefault.
	cloud string
	// options follow the endpoint's own (credentials, dialers).
	options []option.ClientOption
}

// Emulator is the Cloud Spanner emulator at host ("127.0.0.1:9010"):
// plaintext gRPC without credentials.
func Emulator(host string) Endpoint { return Endpoint{emulator: host} }

// Cloud is Cloud Spanner at addr (a regional endpoint or Private Service
// Connect address, host:port; "" is CloudDefault), with opts after the
// endpoint's own options (e.g. credentials, a gRPC dialer). Clients find
// Application Default Credentials unless opts give others.
func Cloud(addr string, opts ...option.ClientOption) Endpoint {
	return Endpoint{cloud: addr, options: opts}
}

// For is the endpoint of target t: the emulator it names, else cloud.
// It is the one place that reads spec.target.emulatorHost.
func For(t v1alpha1.TargetSpec, cloud Endpoint) Endpoint {
	if t.EmulatorHost != "" {
		return Emulator(t.EmulatorHost)
	}
	return cloud
}

// IsEmulator reports whether the endpoint is the emulator.
func (e Endpoint) IsEmulator() bool { return e.emulator != "" }

// EmulatorHost is the emulator's host:port, "" for Cloud Spanner.
func (e Endpoint) EmulatorHost() string { return e.emulator }

// Address is the host:port clients dial.
func (e Endpoint) Address() string {
	switch {
	case e.emulator != "":
		return e.emulator
	case e.cloud != "":
		return e.cloud
	}
	return CloudDefault
}

// String names the endpoint for messages.
func (e Endpoint) String() string {
	if e.IsEmulator() {
		return "the Cloud Spanner emulator at " + e.emulator
	}
	if e.cloud == "" {
		return "Cloud Spanner"
	}
	return "Cloud Spanner at " + e.cloud
}

// ClientOptions are the options every admin and data client of the
// endpoint is built with. Both kinds carry an explicit address, so no
// client falls back to what the process environment says.
func (e Endpoint) ClientOptions() []option.ClientOption {
	if e.IsEmulator() {
		// What the Go client adds under SPANNER_EMULATOR_HOST.
		return append([]option.ClientOption{
			option.WithEndpoint("passthrough:///" + e.emulator),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
			option.WithoutAuthentication(),
		}, e.options...)
	}
	return append([]option.ClientOption{option.WithEndpoint(e.Address())}, e.options...)
}

// NewClient opens a data client of database (a resource name) at the
// endpoint, with opts after the endpoint's options (such as interceptors).
// Native metrics (export to Cloud Monitoring) are off on the emulator,
// which has no Cloud Monitoring to export to.
func (e Endpoint) NewClient(ctx context.Context, database string, cfg spanner.ClientConfig, opts ...option.ClientOption) (*spanner.Client, error) {
	if e.IsEmulator() {
		cfg.DisableNativeMetrics = true
	}
	return spanner.NewClientWithConfig(ctx, database, cfg, append(e.ClientOptions(), opts...)...)
}

// RefuseInherited refuses a process environment that sets
// SPANNER_EMULATOR_HOST (getenv is os.Getenv at the edge of the process):
// under it the Go client strips the credentials of every Cloud Spanner
// client. A process that serves emulator targets gets their host from the
// target instead.
func RefuseInherited(getenv func(string) string) error {
	if h := getenv(EmulatorHostEnv); h != "" {
		return fmt.Errorf("%s=%s is set: the Spanner Go client would send every Cloud Spanner call of this process "+
			"without credentials; unset it and name the emulator in the target (spec.target.emulatorHost)", EmulatorHostEnv, h)
	}
	return nil
}

package monitoring

import (
	"context"
	"errors"

	monitoring "cloud.google.com/go/monitoring/apiv3/v2"
	"google.golang.org/api/option"
)

// CloudDefault is Cloud Monitoring's global endpoint.
const CloudDefault = "monitoring.googleapis.com:443"

// Endpoint is where the Monitoring client connects: an address and the
// options after it (credentials, a gRPC dialer). It is a value handed to
// NewClient; nothing is read from the process environment.
type Endpoint struct {
	// Address is the host:port dialled; "" is refused, so a client never
	// falls back to an address the process environment names.
	Address string
	// Options follow the address (credentials; tests give plaintext and no
	// authentication for their loopback fake).
	Options []option.ClientOption
}

// NewClient opens a MetricService client at e.Address and nowhere else:
// the address is applied after e.Options (the last endpoint option wins),
// so neither an option nor the environment (GOOGLE_CLOUD_UNIVERSE_DOMAIN)
// moves it.
func NewClient(ctx context.Context, e Endpoint) (*monitoring.MetricClient, error) {
	if e.Address == "" {
		return nil, errors.New("the Cloud Monitoring endpoint is empty: give its address (" + CloudDefault + ")")
	}
	opts := append(append([]option.ClientOption{}, e.Options...), option.WithEndpoint(e.Address))
	return monitoring.NewMetricClient(ctx, opts...)
}

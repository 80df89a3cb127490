// Package dashboards defines spanbench's Grafana dashboards as code, with
// the Grafana Foundation SDK, and reads their panel queries back from the
// generated JSON.
//
// `make generate` runs hack/dashboards, which writes Generate's output to
// config/grafana/; `make verify` fails when the committed JSON differs.
// Quantiles are computed the one right way: histogram_quantile over the
// bucket series of every runner pod summed by le, or read from the
// controller's exact figures; never an average of per-pod quantiles
// (querylint refuses that, and dashboards_test runs it on every panel).
//
// Only the generator and the tests link this package; the spanbench binary
// does not.
package dashboards

// Package collectors serves the manager's Prometheus series of finished
// runs and campaigns at scrape time, from their status: exact, centrally
// computed figures, beside the runners' live histograms.
package collectors

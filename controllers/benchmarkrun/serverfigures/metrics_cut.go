package serverfigures

import (
	"context"
	"fmt"

	"github.com/spanbench/spanbench/api/v1alpha1"
	"github.com/spanbench/spanbench/controllers/runreport"
	"github.com/spanbench/spanbench/controllers/statuswrite"
	"github.com/spanbench/spanbench/result"
)

// Cloud Monitoring's figures arrive minutes after a run's results are
// final, so the server's warm-up signal cannot end the warm-up while the
// run aggregates. Instead, once the figures are collected, they are
// written into the run's stored report as its monitoring section, and the
// report is derived again from its stored intervals: result.Finalize cuts
// the intervals before the server's end when the section says the server
// ended the warm-up (result/server_warmup.go). The status's figures
// (and so the Prometheus series) are then the report's again. Because the
// section lives in the report, every later derivation — a reader's
// check, the SPANNER_SYS collection reading the report — cuts the same
// intervals.

// recordServerMetrics writes s into the run's stored report and, when the
// server ended the warm-up, the report's figures derived again into the
// status. It returns the condition's message; an error is the API
// server's, worth trying again. A report that cannot be read leaves the
// figures in the status only, and the message says so.
func (c Collection) recordServerMetrics(ctx context.Context, run *v1alpha1.BenchmarkRun, s *v1alpha1.ServerMetricsStatus) (string, error) {
	const collected = "status.serverMetrics holds Cloud Monitoring's figures"
	if run.Status.Report == nil {
		return collected + "; the run has no report to write them into", nil
	}
	doc, cm, err := c.RunReport(ctx, run)
	if runreport.APITrouble(err) {
		return "", err
	}
	if err == nil {
		doc.Monitoring = runreport.MonitoringSection(s)
		err = result.Finalize(doc)
	}
	if err != nil {
		return collected + "; not written into the report: " + statuswrite.Shorten(err.Error(), statuswrite.MaxProblemBytes), nil
	}
	if err := c.UpdateReport(ctx, cm, run, doc); err != nil {
		return "", err
	}
	if doc.WarmUp.EndedBy != result.WarmUpEndedByServer {
		return collected + " and the report", nil
	}
	if s.WarmUp != nil {
		n := int32(doc.WarmUp.ServerIntervals)
		s.WarmUp.CutIntervals = &n
	}
	c.ApplyResult(&run.Status, doc, run)
	if doc.Server != nil {
		applyServerStats(&run.Status, doc.Server)
	}
	return collected + " and the report; " + serverCutMessage(doc), nil
}

// serverCutMessage says which intervals the server's warm-up end cut: of
// the run, or of each stream from its own start (status.streams).
func serverCutMessage(doc *result.Document) string {
	w := doc.WarmUp
	if doc.HasStreams() {
		return fmt.Sprintf("the server's warm-up ended after the client's: each stream's intervals before %s are cut from its figures (up to %d of one stream)",
			doc.Monitoring.WarmUp.SettledAt.UTC().Format("15:04:05"), w.ServerIntervals)
	}
	return fmt.Sprintf("the server's warm-up ended after the client's: intervals %d to %d are cut from the figures, which start at %s",
		w.Intervals-w.ServerIntervals, w.Intervals-1, w.End.UTC().Format("15:04:05"))
}
